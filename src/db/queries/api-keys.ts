// Merchant API keys (api_keys): only HMAC hashes, never keys.
import type { Queryable } from '../pool.js';

export interface ApiKeyRow {
  id: string;
  merchant_id: string;
  prefix: string | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const COLUMNS = 'id, merchant_id, prefix, created_at, last_used_at, revoked_at';

export async function insertApiKey(db: Queryable, row: ApiKeyRow & { key_hash: string }): Promise<void> {
  await db.query('INSERT INTO api_keys (id, merchant_id, key_hash, prefix, created_at) VALUES ($1, $2, $3, $4, $5)', [
    row.id,
    row.merchant_id,
    row.key_hash,
    row.prefix,
    row.created_at,
  ]);
}

/** What authentication needs about a key and its merchant: one indexed lookup, revoked keys included (they are 401). */
export interface KeyOwner {
  key_id: string | null;
  key_hash: string | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  merchant_id: string;
  name: string;
  webhook_url: string | null;
  /** The merchant's rate-limit override (merchant_policies), null when it has none. */
  rate_limit_per_minute: number | null;
}

/**
 * The owners of several keys (by HMAC) in one query, revoked keys included (they are 401), and, when
 * `keylessMerchantId` is given, that merchant as authentication sees it without a key (the development test merchant).
 */
export async function readKeyOwners(
  db: Queryable,
  keyHashes: readonly string[],
  keylessMerchantId: string | null,
): Promise<{ owners: Map<string, KeyOwner>; keyless: KeyOwner | null }> {
  const { rows } = await db.query<KeyOwner>(
    `SELECT k.id AS key_id, k.key_hash, k.revoked_at, k.last_used_at, m.id AS merchant_id, m.name, m.webhook_url, p.rate_limit_per_minute
       FROM api_keys k JOIN merchants m ON m.id = k.merchant_id LEFT JOIN merchant_policies p ON p.merchant_id = m.id
      WHERE k.key_hash = ANY($1::text[])
     UNION ALL
     SELECT NULL, NULL, NULL, NULL, m.id, m.name, m.webhook_url, p.rate_limit_per_minute
       FROM merchants m LEFT JOIN merchant_policies p ON p.merchant_id = m.id WHERE m.id = $2`,
    [keyHashes, keylessMerchantId],
  );
  const owners = new Map<string, KeyOwner>();
  let keyless: KeyOwner | null = null;
  for (const row of rows) {
    if (row.key_hash === null) keyless = row;
    else owners.set(row.key_hash, row);
  }
  return { owners, keyless };
}

export async function listApiKeys(db: Queryable, merchantId: string): Promise<ApiKeyRow[]> {
  const { rows } = await db.query<ApiKeyRow>(`SELECT ${COLUMNS} FROM api_keys WHERE merchant_id = $1 ORDER BY created_at, id`, [merchantId]);
  return rows;
}

/**
 * Revokes the merchant's active keys that match `match` (a key id, a prefix, or the hash of a whole key); returns
 * them. Only a unique match is revoked: with several, none is, and they are returned for the caller to refuse.
 */
export async function markApiKeysRevoked(
  db: Queryable,
  merchantId: string,
  match: { id: string; prefix: string; hash: string },
  at: Date,
): Promise<{ revoked: ApiKeyRow[]; matches: ApiKeyRow[] }> {
  const { rows: matches } = await db.query<ApiKeyRow>(
    `SELECT ${COLUMNS} FROM api_keys WHERE merchant_id = $1 AND (id = $2 OR prefix = $3 OR key_hash = $4) ORDER BY created_at FOR UPDATE`,
    [merchantId, match.id, match.prefix, match.hash],
  );
  if (matches.length !== 1 || matches[0]!.revoked_at !== null) return { revoked: [], matches };
  const { rows: revoked } = await db.query<ApiKeyRow>(`UPDATE api_keys SET revoked_at = $2 WHERE id = $1 RETURNING ${COLUMNS}`, [
    matches[0]!.id,
    at,
  ]);
  return { revoked, matches };
}

/** Sets last_used_at unless it is more recent than `staleFrom` (at most one write per key a minute). */
export async function markApiKeyUsed(db: Queryable, keyId: string, at: Date, staleFrom: Date): Promise<void> {
  await db.query('UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)', [keyId, at, staleFrom]);
}
