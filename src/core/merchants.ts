// Merchants and API keys. Keys are shown once; only HMAC-SHA256(API_KEY_SALT, key) is stored.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config.js';
import type { Queryable } from '../db/pool.js';
import { newId } from '../ids.js';

export const TEST_MERCHANT_ID = 'mer_test';

export interface Merchant {
  id: string;
  name: string;
  webhook_url: string | null;
}

export function hashApiKey(salt: string, apiKey: string): string {
  return createHmac('sha256', salt).update(apiKey, 'utf8').digest('hex');
}

export function generateApiKey(): string {
  return `sr_live_${randomBytes(24).toString('base64url')}`;
}

export async function createMerchant(
  db: Queryable,
  config: Pick<Config, 'apiKeySalt'>,
  input: { name: string; webhookUrl: string | null },
  at: Date,
): Promise<{ merchant: Merchant; apiKey: string }> {
  const apiKey = generateApiKey();
  const merchant: Merchant = { id: newId('mer'), name: input.name, webhook_url: input.webhookUrl };
  await db.query('INSERT INTO merchants (id, name, webhook_url, api_key_hash, created_at) VALUES ($1, $2, $3, $4, $5)', [
    merchant.id,
    merchant.name,
    merchant.webhook_url,
    hashApiKey(config.apiKeySalt, apiKey),
    at,
  ]);
  return { merchant, apiKey };
}

/** The built-in test merchant of development mode; its webhook_url follows DEV_MERCHANT_WEBHOOK_URL at each start. */
export async function ensureTestMerchant(db: Queryable, webhookUrl: string | null, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO merchants (id, name, webhook_url, is_test, created_at) VALUES ($1, 'Test merchant', $2, true, $3)
     ON CONFLICT (id) DO UPDATE SET webhook_url = EXCLUDED.webhook_url`,
    [TEST_MERCHANT_ID, webhookUrl, at],
  );
}

/**
 * Resolves an API key to a merchant. Production: the key's HMAC must match a stored hash (compared in constant
 * time). Development: a registered merchant's key still resolves to that merchant; any other key is the test
 * merchant. A missing or empty key never authenticates.
 */
export async function authenticate(db: Queryable, config: Pick<Config, 'apiKeySalt' | 'production'>, apiKey: string | undefined): Promise<Merchant | null> {
  if (!apiKey) return null;
  const hash = hashApiKey(config.apiKeySalt, apiKey);
  // One query: the key's merchant, or (development only) the test merchant when the key is not an issued one.
  const { rows } = await db.query<Merchant & { api_key_hash: string | null }>(
    `SELECT id, name, webhook_url, api_key_hash FROM merchants
      WHERE api_key_hash = $1 OR ($2 AND id = $3)
      ORDER BY (api_key_hash = $1) DESC NULLS LAST LIMIT 1`,
    [hash, !config.production, TEST_MERCHANT_ID],
  );
  const found = rows[0];
  if (!found) return null;
  if (found.api_key_hash !== null && timingSafeEqual(Buffer.from(found.api_key_hash, 'hex'), Buffer.from(hash, 'hex'))) {
    return { id: found.id, name: found.name, webhook_url: found.webhook_url };
  }
  return config.production || found.id !== TEST_MERCHANT_ID ? null : { id: found.id, name: found.name, webhook_url: found.webhook_url };
}
