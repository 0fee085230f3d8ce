// Per-merchant webhook signing secrets at rest (decision 67). HMAC signing needs the secret itself, so it cannot be
// stored as a hash like an API key; it is sealed with AES-256-GCM under a key derived from API_KEY_SALT (HKDF-SHA256),
// with the merchant id as associated data, so a database dump alone forges nothing and a sealed secret moved to
// another merchant's row does not open. Pure apart from the random IV.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HKDF_SALT = 'stableroute';
const HKDF_INFO = 'webhook-secrets v1';

export class SealedSecretError extends Error {
  override readonly name = 'SealedSecretError';
}

/** The 32-byte sealing key for a given API_KEY_SALT. */
export function sealingKey(apiKeySalt: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(apiKeySalt, 'utf8'), HKDF_SALT, HKDF_INFO, 32));
}

/** "v1.<iv>.<tag>.<ciphertext>", base64url parts. */
export function sealSecret(key: Buffer, secret: string, merchantId: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(merchantId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
}

/** Opens a sealed secret of `merchantId`. Throws SealedSecretError (never quoting anything) when it does not open. */
export function openSecret(key: Buffer, sealed: string, merchantId: string): string {
  const [version, iv, tag, ciphertext, ...rest] = sealed.split('.');
  if (version !== VERSION || iv === undefined || tag === undefined || ciphertext === undefined || rest.length > 0) {
    throw new SealedSecretError('not a sealed webhook secret of a known version');
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(merchantId, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SealedSecretError('the webhook secret does not open with this API_KEY_SALT (was it changed?)');
  }
}
