// Chain health over time, for the console's charts: the newest snapshots of each chain, bounded.
import type { Chain } from '../../domain/chain.js';
import type { Queryable } from '../pool.js';
import type { SnapshotRow } from './snapshots.js';

/** Each chain's newest `perChain` snapshots since `since`, oldest first. One index range scan per chain. */
export async function listSnapshotHistory(db: Queryable, chains: readonly Chain[], since: Date, perChain: number): Promise<SnapshotRow[]> {
  const { rows } = await db.query<SnapshotRow>(
    `SELECT s.* FROM unnest($1::text[]) AS c(chain) CROSS JOIN LATERAL (
       SELECT chain, health_status, estimated_fee_usd, avg_confirmation_seconds, rpc_error_rate,
              p95_latency_ms, congestion_score, source, created_at, status_reason
         FROM chain_health_snapshots WHERE chain = c.chain AND created_at >= $2
        ORDER BY created_at DESC, id DESC LIMIT $3) s
      ORDER BY s.chain, s.created_at`,
    [chains, since, perChain],
  );
  return rows;
}
