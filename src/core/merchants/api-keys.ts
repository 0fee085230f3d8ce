// Merchant API keys (decision 91): several active keys per merchant so a key can be rotated without downtime, each
// shown once and stored only as HMAC-SHA256(API_KEY_SALT, key); a revoked key is refused by the next request in
// every process (authentication reads the key row on each request, no cache); last use is recorded at most once a
// minute per key, off the request's path.
import { createHmac, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { isUniqueViolation, type Pool, type Queryable } from '../../db/pool.js';
import { audited, type AuditEntry } from '../operators/audit.js';
import { insertApiKey, listApiKeys, markApiKeysRevoked, markApiKeyUsed, type ApiKeyRow } from '../../db/queries/api-keys.js';
import { readMerchant } from '../../db/queries/merchants.js';
import { AppError } from '../../domain/errors.js';
import { newId } from '../../ids.js';
import { KEY_USE_CACHE_ENTRIES_MAX } from '../../bounds.js';

export type { ApiKeyRow };

const KEY_PREFIX = 'sr_live_';
/** Characters of a key shown to operators: sr_live_ and 8 random ones (48 bits), enough to tell keys apart. */
export const SHOWN_PREFIX_LENGTH = KEY_PREFIX.length + 8;
/** last_used_at is written at most this often per key. */
export const KEY_USE_RESOLUTION_MS = 60_000;

export function hashApiKey(salt: string, apiKey: string): string {
  return createHmac('sha256', salt).update(apiKey, 'utf8').digest('hex');
}

export function generateApiKey(): string {
  return `${KEY_PREFIX}${randomBytes(24).toString('base64url')}`;
}

/** Issues a key for the merchant on the caller's transaction; the key itself is returned once and never stored. */
export async function issueApiKey(
  tx: Queryable,
  config: Pick<Config, 'apiKeySalt'>,
  merchantId: string,
  at: Date,
): Promise<{ key: ApiKeyRow; apiKey: string }> {
  const apiKey = generateApiKey();
  const key: ApiKeyRow = { id: newId('key'), merchant_id: merchantId, prefix: apiKey.slice(0, SHOWN_PREFIX_LENGTH), created_at: at, last_used_at: null, revoked_at: null };
  await insertApiKey(tx, { ...key, key_hash: hashApiKey(config.apiKeySalt, apiKey) });
  return { key, apiKey };
}

async function requireMerchant(db: Queryable, merchantId: string): Promise<void> {
  if (!(await readMerchant(db, merchantId))) throw new AppError('MERCHANT_NOT_FOUND', `merchant ${merchantId} was not found`);
}

/** A new active key next to the merchant's others (rotation: issue, switch clients over, revoke the old one). */
export async function createApiKey(pool: Pool, config: Pick<Config, 'apiKeySalt' | 'audit'>, merchantId: string, at: Date, audit: AuditEntry): Promise<{ key: ApiKeyRow; apiKey: string }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await audited({ pool, config }, audit, at, async (tx) => {
        await requireMerchant(tx, merchantId);
        return issueApiKey(tx, config, merchantId, at);
      });
    } catch (error) {
      // Two keys of one merchant with the same shown prefix (1 in 2^48): draw again.
      if (attempt < 3 && isUniqueViolation(error, 'api_keys_merchant_prefix')) continue;
      throw error;
    }
  }
}

/**
 * Revokes one of the merchant's keys, named by its id (key_...), its shown prefix or the whole key. From the commit
 * on, every request with it is 401 in every process.
 */
export async function revokeApiKey(pool: Pool, config: Pick<Config, 'apiKeySalt' | 'audit'>, merchantId: string, ref: string, at: Date, audit: AuditEntry): Promise<ApiKeyRow> {
  return audited({ pool, config }, audit, at, async (tx) => {
    await requireMerchant(tx, merchantId);
    const { revoked, matches } = await markApiKeysRevoked(tx, merchantId, { id: ref, prefix: ref, hash: hashApiKey(config.apiKeySalt, ref) }, at);
    if (matches.length === 0) throw new AppError('API_KEY_NOT_FOUND', `no API key of ${merchantId} is named ${ref.slice(0, SHOWN_PREFIX_LENGTH)}`);
    if (matches.length > 1) {
      throw new AppError('INVALID_STATE', `${matches.length} keys of ${merchantId} match; name one by its id (${matches.map((k) => k.id).join(', ')})`);
    }
    if (revoked.length === 0) throw new AppError('INVALID_STATE', `API key ${matches[0]!.id} was already revoked at ${matches[0]!.revoked_at!.toISOString()}`);
    return revoked[0]!;
  });
}

export async function apiKeysOf(db: Queryable, merchantId: string): Promise<ApiKeyRow[]> {
  await requireMerchant(db, merchantId);
  return listApiKeys(db, merchantId);
}

/**
 * Records that a key was used, without making the request wait: at most one write per key a minute, decided from the
 * key row authentication just read and from this process's own recent writes (so a burst writes once).
 */
export function keyUseRecorder(pool: Pool, clock: Clock, log: Logger): (key: { keyId: string | null; keyLastUsedAt: Date | null }) => void {
  const written = new Map<string, number>();
  return ({ keyId, keyLastUsedAt }) => {
    if (keyId === null) return;
    const now = clock.now();
    const last = Math.max(keyLastUsedAt?.getTime() ?? -Infinity, written.get(keyId) ?? -Infinity);
    if (now.getTime() - last < KEY_USE_RESOLUTION_MS) return;
    if (written.size >= KEY_USE_CACHE_ENTRIES_MAX) written.clear(); // bounded; a forgotten entry costs one extra conditional write
    written.set(keyId, now.getTime());
    markApiKeyUsed(pool, keyId, now, new Date(now.getTime() - KEY_USE_RESOLUTION_MS)).catch((error: unknown) =>
      log.warn({ err: error, key_id: keyId }, 'could not record the last use of an API key'),
    );
  };
}
