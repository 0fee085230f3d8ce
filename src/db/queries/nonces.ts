// Nonces are allocated in PostgreSQL, inside the caller's transaction, so the nonce and the persisted attempt commit
// (or roll back) together and concurrent workers never collide. The chain, not a counter of ours, says where the
// sequence stands: a counter that only rises would keep handing out nonces above a gap after the chain was reset
// (a devnet restarted under a database that kept its state), and nothing sent above a gap is ever mined.
import type { Chain } from '../../domain/chain.js';
import { TERMINAL_STATUSES, type PaymentStatus } from '../../domain/payment-intent.js';
import type { Queryable } from '../pool.js';

/**
 * Intents whose refused attempts give their nonces up: finished ones, and those waiting for an operator in manual
 * review (nothing re-signs for them until the operator acts, and a held nonce would stall every later payout behind
 * its gap; decision 32). An intent being executed keeps its refused nonce for its own retry.
 */
const NONCE_RELEASING_STATUSES: readonly PaymentStatus[] = [...TERMINAL_STATUSES, 'manual_review'];

/**
 * Takes a nonce for `address`, for a transfer of intent `forIntentId`, in the caller's transaction, under the lock of
 * its chain_nonces row (an upsert locks like SELECT ... FOR UPDATE and also serialises the very first allocation).
 * Rules (decisions 31, 32):
 *
 * 1. The frontier is the chain's pending count (eth_getTransactionCount 'pending'), or one past the highest nonce our
 *    attempts still hold when that is higher. An attempt holds its nonce while it is live (signed or broadcast, its
 *    bytes may land: a cancel on chain included), and while it was refused but its own intent is still being executed
 *    (its retry re-signs on that nonce), unless the refusal was a nonce conflict. The intent asking counts as the
 *    owner of every attempt of a transaction it shared (an on-chain batch): whichever payment of a refused batch is
 *    signed again first takes its nonce back, and no gap is left for the others to wait behind.
 * 2. Below the frontier, a nonce the node does not have (at or above the pending count) is reused, lowest first,
 *    when every attempt on it was refused for good: failed, its intent finished or in manual review (or the intent
 *    asking, or one that shared a transaction with it: its retry), the nonce not taken by another transaction
 *    (nonce_conflict), and not failed by an operator (operator_failed), whose transaction may still sit in some
 *    mempool. Otherwise that gap would block every later transfer.
 * 3. Otherwise the frontier itself.
 *
 * Only attempts at or above the pending count matter: below it the node has mined or pooled every nonce. The query
 * reads them through the index of migration 073 (its expression and predicate are the ones below).
 */
export async function claimNonce(db: Queryable, chain: Chain, address: string, chainPendingCount: number, forIntentId: string): Promise<number> {
  const account = address.toLowerCase();
  await db.query(
    `INSERT INTO chain_nonces (chain, address, next_nonce) VALUES ($3, $1, $2::bigint)
     ON CONFLICT (chain, address) DO UPDATE SET next_nonce = chain_nonces.next_nonce`,
    [account, chainPendingCount, chain],
  );
  const { rows } = await db.query<{ frontier: string; reusable: string | null }>(
    `WITH own AS (
       SELECT COALESCE(array_agg(tx_id), '{}') AS txs FROM payment_attempts WHERE payment_intent_id = $4
     ), uses AS (
       SELECT (a.chain_meta->>'nonce')::bigint AS nonce,
              bool_or(a.status IN ('signed', 'broadcasted')
                      OR (a.status = 'failed' AND a.failure_reason IS DISTINCT FROM 'nonce_conflict'
                          AND NOT i.status = ANY($2::text[]) AND NOT a.tx_id = ANY(own.txs))) AS held,
              bool_and(a.status = 'failed' AND (i.status = ANY($2::text[]) OR a.tx_id = ANY(own.txs))
                       AND COALESCE(a.failure_reason, '') NOT IN ('nonce_conflict', 'operator_failed')) AS reusable
         FROM payment_attempts a JOIN payment_intents i ON i.id = a.payment_intent_id, own
        WHERE a.chain = $3 AND a.chain_meta ? 'nonce' AND (a.chain_meta->>'nonce')::bigint >= $1::bigint
        GROUP BY 1
     ), frontier AS (
       SELECT GREATEST($1::bigint, COALESCE(MAX(nonce) FILTER (WHERE held) + 1, $1::bigint)) AS nonce FROM uses
     )
     SELECT f.nonce::text AS frontier,
            (SELECT MIN(u.nonce) FROM uses u WHERE u.reusable AND u.nonce < f.nonce)::text AS reusable
       FROM frontier f`,
    [chainPendingCount, NONCE_RELEASING_STATUSES, chain, forIntentId],
  );
  const frontier = Number(rows[0]!.frontier);
  const nonce = rows[0]!.reusable === null ? frontier : Number(rows[0]!.reusable);
  // The stored value is a record of the last frontier (for operators), not an input: it may go down with the chain.
  await db.query('UPDATE chain_nonces SET next_nonce = $2 WHERE chain = $3 AND address = $1', [
    account,
    nonce === frontier ? frontier + 1 : frontier,
    chain,
  ]);
  return nonce;
}
