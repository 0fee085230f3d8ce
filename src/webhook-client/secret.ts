// What the webhook signing secret means as HMAC keys (decisions 65 and 66). Pure: no I/O, no clock.
//
// A secret in the Standard Webhooks form, "whsec_" + base64 of 24 to 64 bytes, is used as that specification and its
// libraries define it: the decoded bytes key `webhook-signature`, so a receiver hands the very same string to a
// Standard Webhooks library. The spec's hex signature keeps its documented key, the configured string itself.
// Any other secret keeps the original rule: its UTF-8 bytes key both signatures.
import { randomBytes as cryptoRandomBytes } from 'node:crypto';

export const STANDARD_SECRET_PREFIX = 'whsec_';
/** Standard Webhooks: a symmetric secret is "random, between 24 bytes (192 bits) and 64 bytes (512 bits)". */
export const STANDARD_KEY_MIN_BYTES = 24;
export const STANDARD_KEY_MAX_BYTES = 64;
/** Secrets we issue: 256 bits, inside the range above. */
export const GENERATED_KEY_BYTES = 32;

// Standard base64 with its padding, what the reference libraries decode (they reject base64url and missing padding).
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export class WebhookSecretError extends Error {
  override readonly name = 'WebhookSecretError';
}

export interface WebhookSigningKeys {
  /** Key of the spec's lowercase hex signature (X-Stableroute-Signature): always the configured string's bytes. */
  spec: Buffer;
  /**
   * Keys of the `webhook-signature` entries, one "v1,..." entry each, in this order. A receiver's library accepts a
   * delivery when any entry matches. For a `whsec_` secret the second key is its UTF-8 bytes: the key receivers set
   * up under the former rule (they wrapped the whole string once more) still verify (decision 66).
   */
  standard: readonly Buffer[];
}

/** True when the secret is meant in the Standard Webhooks form (and must then be a valid one). */
export function isStandardSecret(secret: string): boolean {
  return secret.startsWith(STANDARD_SECRET_PREFIX);
}

/**
 * The HMAC key of a `whsec_` secret: the base64 after the prefix, decoded. Throws WebhookSecretError when the rest is
 * not standard base64 of 24 to 64 bytes; the message never contains the secret.
 */
export function standardKeyOf(secret: string): Buffer {
  if (!isStandardSecret(secret)) throw new WebhookSecretError(`does not start with ${STANDARD_SECRET_PREFIX}`);
  const encoded = secret.slice(STANDARD_SECRET_PREFIX.length);
  if (encoded === '' || !BASE64.test(encoded)) {
    throw new WebhookSecretError(`starts with ${STANDARD_SECRET_PREFIX} but the rest is not standard base64 (A-Z a-z 0-9 + /, = padding)`);
  }
  const key = Buffer.from(encoded, 'base64');
  if (key.length < STANDARD_KEY_MIN_BYTES || key.length > STANDARD_KEY_MAX_BYTES) {
    throw new WebhookSecretError(
      `starts with ${STANDARD_SECRET_PREFIX} but decodes to ${key.length} bytes; Standard Webhooks secrets are ${STANDARD_KEY_MIN_BYTES} to ${STANDARD_KEY_MAX_BYTES} bytes`,
    );
  }
  return key;
}

/**
 * Both signatures' keys for a secret. Throws WebhookSecretError for a malformed `whsec_` secret. The configured
 * WEBHOOK_SIGNING_SECRET keeps decision 66's transition entry; a per-merchant secret we issued (`issued`) has no
 * receivers set up under the former rule, so its `whsec_` form is the only one signed with.
 */
export function signingKeys(secret: string, options: { issued?: boolean } = {}): WebhookSigningKeys {
  const bytes = Buffer.from(secret, 'utf8');
  if (!isStandardSecret(secret)) return { spec: bytes, standard: [bytes] };
  return { spec: bytes, standard: options.issued ? [standardKeyOf(secret)] : [standardKeyOf(secret), bytes] };
}

/** A secret a delivery is signed with: the configured one, or one issued to the merchant. */
export interface SigningSecret {
  secret: string;
  issued: boolean;
}

/** A new secret in the Standard Webhooks form: "whsec_" + base64 of 32 random bytes. */
export function generateWebhookSecret(randomBytes: (size: number) => Buffer = cryptoRandomBytes): string {
  return STANDARD_SECRET_PREFIX + randomBytes(GENERATED_KEY_BYTES).toString('base64');
}
