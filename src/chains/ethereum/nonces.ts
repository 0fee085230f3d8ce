// Nonces are allocated in PostgreSQL, inside the caller's transaction, so the nonce and the persisted attempt commit
// (or roll back) together and concurrent workers never collide.
import type { Queryable } from '../../db/pool.js';

/**
 * Takes a nonce for `address`, in the caller's transaction. The counter row is locked first (an upsert locks like
 * SELECT ... FOR UPDATE and also serialises the very first allocation), so allocations never race.
 *
 * A nonce whose transaction the node refused is free again: if nothing used it, every later transfer would wait
 * behind the gap forever. So the lowest such nonce is reused before the counter advances: one held by a 'failed'
 * attempt (not a nonce conflict), not below the chain's mined count (nothing with that nonce was mined), and not held
 * by any other attempt (live, confirmed, or replaced by a fee bump). The counter never falls behind the chain:
 * `chainPendingCount` (eth_getTransactionCount 'pending') covers transactions sent from outside the service.
 */
export async function allocateNonce(db: Queryable, address: string, chainPendingCount: number, chainMinedCount = 0): Promise<number> {
  const locked = await db.query<{ next_nonce: string }>(
    `INSERT INTO chain_nonces (chain, address, next_nonce) VALUES ('ethereum', $1, $2::bigint)
     ON CONFLICT (chain, address) DO UPDATE SET next_nonce = GREATEST(chain_nonces.next_nonce, $2::bigint)
     RETURNING next_nonce::text`,
    [address.toLowerCase(), chainPendingCount],
  );
  const next = BigInt(locked.rows[0]!.next_nonce);
  const freed = await db.query<{ nonce: string }>(
    `SELECT MIN((f.chain_meta->>'nonce')::bigint)::text AS nonce FROM payment_attempts f
      WHERE f.chain = 'ethereum' AND f.status = 'failed' AND f.failure_reason IS DISTINCT FROM 'nonce_conflict'
        AND f.chain_meta ? 'nonce' AND (f.chain_meta->>'nonce')::bigint >= $1 AND (f.chain_meta->>'nonce')::bigint < $2
        AND NOT EXISTS (SELECT 1 FROM payment_attempts a
                         WHERE a.chain = 'ethereum' AND a.status <> 'failed' AND a.chain_meta->>'nonce' = f.chain_meta->>'nonce')`,
    [chainMinedCount, next.toString()],
  );
  if (freed.rows[0]?.nonce != null) return Number(freed.rows[0].nonce);
  const { rows } = await db.query<{ nonce: string }>(
    `UPDATE chain_nonces SET next_nonce = next_nonce + 1 WHERE chain = 'ethereum' AND address = $1 RETURNING (next_nonce - 1)::text AS nonce`,
    [address.toLowerCase()],
  );
  return Number(rows[0]!.nonce);
}
