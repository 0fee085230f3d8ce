// Every statement on webhook_secrets: a merchant's sealed webhook signing secrets and their overlap after rotation.
import type { Queryable } from '../pool.js';

export interface WebhookSecretRow {
  id: string;
  /** Null: the configured WEBHOOK_SIGNING_SECRET (a merchant onboarded before per-merchant secrets). */
  sealed: string | null;
  created_at: Date;
  /** Null: the current secret. */
  retires_at: Date | null;
}

export async function insertWebhookSecret(
  db: Queryable,
  secret: { merchantId: string; sealed: string | null; at: Date; retiresAt: Date | null },
): Promise<void> {
  await db.query('INSERT INTO webhook_secrets (merchant_id, sealed, created_at, retires_at) VALUES ($1, $2, $3, $4)', [
    secret.merchantId,
    secret.sealed,
    secret.at,
    secret.retiresAt,
  ]);
}

/**
 * The merchant's secrets still signed with at `at`, the current one first, then previous ones newest first; and
 * whether the merchant has any secret row at all (none: it signs with the configured secret).
 */
export async function readSigningSecrets(db: Queryable, merchantId: string, at: Date): Promise<{ active: WebhookSecretRow[]; any: boolean }> {
  const { rows } = await db.query<WebhookSecretRow & { active: boolean }>(
    `SELECT id, sealed, created_at, retires_at, (retires_at IS NULL OR retires_at > $2) AS active
       FROM webhook_secrets WHERE merchant_id = $1
      ORDER BY (retires_at IS NULL) DESC, created_at DESC, id DESC`,
    [merchantId, at],
  );
  return { active: rows.filter((r) => r.active), any: rows.length > 0 };
}

/** Makes the current secret a previous one, signed with until `retiresAt`. Returns how many rows changed (0 or 1). */
export async function markCurrentSecretRetiring(tx: Queryable, merchantId: string, retiresAt: Date): Promise<number> {
  const result = await tx.query('UPDATE webhook_secrets SET retires_at = $2 WHERE merchant_id = $1 AND retires_at IS NULL', [
    merchantId,
    retiresAt,
  ]);
  return result.rowCount ?? 0;
}

/** Shortens every overlap still running to end at `at`, or at `retiresAt` when that is sooner. Returns how many. */
export async function updateOverlappingSecrets(tx: Queryable, merchantId: string, retiresAt: Date): Promise<number> {
  const result = await tx.query('UPDATE webhook_secrets SET retires_at = $2 WHERE merchant_id = $1 AND retires_at > $2', [
    merchantId,
    retiresAt,
  ]);
  return result.rowCount ?? 0;
}
