// Work waiting on the chains, per chain: broadcast attempts of payments the confirmation worker still watches, and
// how long the oldest has waited. Read at metrics scrapes and by the console; served by the partial index
// payment_attempts_open, so its cost follows the backlog, not the table.
import type { Chain } from '../../domain/chain.js';
import type { PaymentStatus } from '../../domain/payment-intent.js';
import type { Queryable } from '../pool.js';

export interface ChainBacklog {
  chain: Chain;
  attempts: number;
  oldestBroadcastAt: Date | null;
}

export async function countConfirmationBacklog(db: Queryable, watchedIntentStatuses: readonly PaymentStatus[]): Promise<ChainBacklog[]> {
  const { rows } = await db.query<{ chain: Chain; n: string; oldest: Date | null }>(
    `SELECT a.chain, COUNT(*)::text AS n, MIN(COALESCE(a.broadcast_at, a.created_at)) AS oldest
       FROM payment_attempts a JOIN payment_intents i ON i.id = a.payment_intent_id
      WHERE a.status = 'broadcasted' AND i.status = ANY($1)
      GROUP BY a.chain`,
    [watchedIntentStatuses],
  );
  return rows.map((r) => ({ chain: r.chain, attempts: Number(r.n), oldestBroadcastAt: r.oldest }));
}
