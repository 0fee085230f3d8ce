// Merchants (their API keys: api-keys.ts).
import type { Queryable } from '../pool.js';

export interface MerchantRow {
  id: string;
  name: string;
  webhook_url: string | null;
}

export async function insertMerchant(db: Queryable, merchant: MerchantRow & { at: Date }): Promise<void> {
  await db.query('INSERT INTO merchants (id, name, webhook_url, created_at) VALUES ($1, $2, $3, $4)', [
    merchant.id,
    merchant.name,
    merchant.webhook_url,
    merchant.at,
  ]);
}

/**
 * Creates the built-in test merchant, or points its webhook_url at `webhookUrl`. A new URL is a new endpoint, enabled;
 * the same URL keeps a disabled endpoint disabled (a 410 must not be forgotten by a restart).
 */
export async function upsertTestMerchant(db: Queryable, id: string, webhookUrl: string | null, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO merchants (id, name, webhook_url, is_test, created_at) VALUES ($1, 'Test merchant', $2, true, $3)
     ON CONFLICT (id) DO UPDATE SET
       webhook_url = EXCLUDED.webhook_url,
       webhook_disabled_at = CASE WHEN merchants.webhook_url IS NOT DISTINCT FROM EXCLUDED.webhook_url THEN merchants.webhook_disabled_at END,
       webhook_disabled_reason = CASE WHEN merchants.webhook_url IS NOT DISTINCT FROM EXCLUDED.webhook_url THEN merchants.webhook_disabled_reason END`,
    [id, webhookUrl, at],
  );
}

/** Disables the merchant's webhook endpoint (a 410 Gone). False when it was disabled already. */
export async function markWebhookEndpointDisabled(db: Queryable, id: string, at: Date, reason: string): Promise<boolean> {
  const result = await db.query(
    'UPDATE merchants SET webhook_disabled_at = $2, webhook_disabled_reason = $3 WHERE id = $1 AND webhook_disabled_at IS NULL',
    [id, at, reason],
  );
  return result.rowCount === 1;
}

/** Enables a disabled endpoint, under the merchant's row lock. Null when there is no such merchant. */
export async function markWebhookEndpointEnabled(db: Queryable, id: string): Promise<{ wasDisabled: boolean; webhookUrl: string | null } | null> {
  const { rows } = await db.query<{ was_disabled: boolean; webhook_url: string | null }>(
    `UPDATE merchants m SET webhook_disabled_at = NULL, webhook_disabled_reason = NULL
       FROM (SELECT id, webhook_disabled_at IS NOT NULL AS was_disabled FROM merchants WHERE id = $1 FOR UPDATE) old
      WHERE m.id = old.id
      RETURNING old.was_disabled, m.webhook_url`,
    [id],
  );
  return rows[0] ? { wasDisabled: rows[0].was_disabled, webhookUrl: rows[0].webhook_url } : null;
}

export async function readMerchant(db: Queryable, id: string): Promise<(MerchantRow & { webhook_disabled_at: Date | null }) | null> {
  const { rows } = await db.query<MerchantRow & { webhook_disabled_at: Date | null }>(
    'SELECT id, name, webhook_url, webhook_disabled_at FROM merchants WHERE id = $1',
    [id],
  );
  return rows[0] ?? null;
}

/** Locks the merchant row (changes to one merchant's webhook secrets take turns). Null: no such merchant. */
export async function lockMerchant(tx: Queryable, id: string): Promise<{ isTest: boolean } | null> {
  const { rows } = await tx.query<{ is_test: boolean }>('SELECT is_test FROM merchants WHERE id = $1 FOR UPDATE', [id]);
  return rows[0] ? { isTest: rows[0].is_test } : null;
}
