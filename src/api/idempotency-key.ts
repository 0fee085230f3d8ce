// An idempotency key as the merchant routes take it (POST /payment_intents, POST /payout_batches and its items): any
// printable text up to 255 characters (Stripe's limit), not blank, and well-formed Unicode.
import { AppError } from '../domain/errors.js';
import { isWellFormedText } from '../domain/text.js';

/** The schema of a key field: control characters are refused by validation. */
export const idempotencyKeySchema = { type: 'string', minLength: 1, maxLength: 255, pattern: '^[^\\u0000-\\u001f\\u007f]*$' } as const;

/**
 * What the schema cannot say: a blank key is missing, and a lone UTF-16 surrogate (JSON "\ud800") is not text, since
 * PostgreSQL stores every one as U+FFFD and two different keys would name one payment. Refused, never normalised.
 */
export function checkIdempotencyKey(key: string, field = 'idempotency_key'): void {
  if (!key.trim()) throw new AppError('MISSING_IDEMPOTENCY_KEY', `${field} is required`);
  if (!isWellFormedText(key)) throw new AppError('INVALID_IDEMPOTENCY_KEY', `${field} must be well-formed Unicode (no lone surrogates)`);
}
