// The exports' query string: the filters of src/core/exports/filter.ts as a JSON schema (it also documents them in
// the OpenAPI document). An unknown parameter is refused too: a mistyped filter must not export everything.
import { ADMIN_TIMESTAMP_CHARS_MAX } from '../../bounds.js';
import { ISO_INSTANT_PATTERN, MERCHANT_ID_PATTERN } from '../../core/exports/filter.js';
import { PAYMENT_STATUSES } from '../../domain/payment-intent.js';
import { chainSchema } from './common.js';

const instant = (what: string) =>
  ({ type: 'string', maxLength: ADMIN_TIMESTAMP_CHARS_MAX, pattern: ISO_INSTANT_PATTERN, description: `${what}: a UTC day (2026-03-01) or an ISO 8601 date-time with an offset` }) as const;

export const exportQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    from: instant('Start of the period, inclusive'),
    to: instant('End of the period, exclusive'),
    chain: chainSchema,
    merchant_id: { type: 'string', maxLength: 128, pattern: MERCHANT_ID_PATTERN },
    status: { type: 'string', enum: [...PAYMENT_STATUSES] },
  },
} as const;

export const csvResponse = (description: string) =>
  ({ description, content: { 'text/csv': { schema: { type: 'string', description: 'RFC 4180 CSV with a header row' } } } }) as const;
