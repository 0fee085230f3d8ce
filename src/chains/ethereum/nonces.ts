// Nonces are allocated in PostgreSQL, inside the caller's transaction, so the nonce and the persisted attempt commit
// (or roll back) together and concurrent workers never collide.
import type { Queryable } from '../../db/pool.js';

/**
 * Takes the next nonce of `address` and advances the counter, in one statement. The upsert locks the row until the
 * caller's transaction ends, exactly like SELECT ... FOR UPDATE, and also serialises the very first allocation
 * (INSERT ... ON CONFLICT waits for a concurrent insert instead of failing). The counter never falls behind the
 * chain: `chainPendingCount` (eth_getTransactionCount 'pending') covers transactions sent from outside the service.
 */
export async function allocateNonce(db: Queryable, address: string, chainPendingCount: number): Promise<number> {
  const { rows } = await db.query<{ nonce: string }>(
    `INSERT INTO chain_nonces (chain, address, next_nonce) VALUES ('ethereum', $1, $2::bigint + 1)
     ON CONFLICT (chain, address) DO UPDATE SET next_nonce = GREATEST(chain_nonces.next_nonce, $2::bigint) + 1
     RETURNING (next_nonce - 1)::text AS nonce`,
    [address.toLowerCase(), chainPendingCount],
  );
  return Number(rows[0]!.nonce);
}
