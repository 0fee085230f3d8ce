// Webhook signatures. Two schemes over one shared secret (WEBHOOK_SIGNING_SECRET), so that both a receiver
// written against the spec and an off-the-shelf Standard Webhooks verifier can check a delivery.
//
// 1. Spec (Authentication, point 6): lowercase hex HMAC-SHA256 of the exact body bytes -> X-Stableroute-Signature.
// 2. Standard Webhooks (https://www.standardwebhooks.com): "v1," + base64 HMAC-SHA256 of "{id}.{timestamp}.{body}"
//    -> webhook-signature.
// Which key each one uses for a given secret is secret.ts's business; these functions take the key.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type BodyBytes = string | Uint8Array;
/** An HMAC key: a string is keyed by its UTF-8 bytes. */
export type HmacKey = string | Uint8Array;

const HEX_SHA256 = /^[0-9a-fA-F]{64}$/;
const STANDARD_VERSION = 'v1';

function hmac(secret: HmacKey, data: BodyBytes): Buffer {
  return createHmac('sha256', secret).update(data).digest();
}

/** The spec's signature: lowercase hex HMAC-SHA256 of the exact body bytes. */
export function signBody(secret: HmacKey, body: BodyBytes): string {
  return hmac(secret, body).toString('hex');
}

/** Checks the spec's signature in constant time. Malformed signatures are rejected, never thrown on. */
export function verifySignature(secret: HmacKey, body: BodyBytes, signatureHex: string): boolean {
  if (!HEX_SHA256.test(signatureHex)) return false;
  return timingSafeEqual(hmac(secret, body), Buffer.from(signatureHex, 'hex'));
}

function standardContent(id: string, timestampSeconds: number, body: BodyBytes): Buffer {
  const bodyBuffer = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body);
  return Buffer.concat([Buffer.from(`${id}.${timestampSeconds}.`, 'utf8'), bodyBuffer]);
}

/** The Standard Webhooks signature header value: "v1,<base64>". */
export function signStandardWebhook(secret: HmacKey, id: string, timestampSeconds: number, body: BodyBytes): string {
  return `${STANDARD_VERSION},${hmac(secret, standardContent(id, timestampSeconds, body)).toString('base64')}`;
}

/**
 * Checks a Standard Webhooks `webhook-signature` header (space-separated "v1,<base64>" entries; any match passes).
 * Timestamp tolerance is the receiver's business and is not checked here.
 */
export function verifyStandardWebhook(
  secret: HmacKey,
  id: string,
  timestampSeconds: number,
  body: BodyBytes,
  signatureHeader: string,
): boolean {
  const expected = hmac(secret, standardContent(id, timestampSeconds, body));
  let matched = false;
  for (const entry of signatureHeader.split(' ')) {
    const [version, value] = entry.split(',', 2);
    if (version !== STANDARD_VERSION || value === undefined) continue;
    const received = Buffer.from(value, 'base64');
    // Every entry is compared, so the time taken does not reveal which one matched.
    if (received.length === expected.length && timingSafeEqual(received, expected)) matched = true;
  }
  return matched;
}
