// Chain-health snapshots: inserted by operators (POST /admin/chain-health) and by the collector.
import { CHAINS, type Chain } from '../../domain/chain.js';
import { defaultSnapshot } from '../../routing/defaults.js';
import type { HealthSnapshot, HealthStatus } from '../../routing/score.js';
import type { Queryable } from '../pool.js';

export interface SnapshotRow extends HealthSnapshot {
  p95_latency_ms: number | null;
  congestion_score: number | null;
  source: 'admin' | 'collector';
  created_at: Date;
}

export async function insertSnapshot(db: Queryable, s: SnapshotRow): Promise<void> {
  await db.query(
    `INSERT INTO chain_health_snapshots (chain, health_status, estimated_fee_usd, avg_confirmation_seconds, rpc_error_rate,
       p95_latency_ms, congestion_score, source, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [s.chain, s.health_status, s.estimated_fee_usd, s.avg_confirmation_seconds, s.rpc_error_rate, s.p95_latency_ms, s.congestion_score, s.source, s.created_at],
  );
}

/** Whether the collector recorded a snapshot of the chain after `since`. */
export async function hasCollectorSnapshotSince(db: Queryable, chain: Chain, since: Date): Promise<boolean> {
  const { rowCount } = await db.query(
    `SELECT 1 FROM chain_health_snapshots WHERE chain = $1 AND source = 'collector' AND created_at > $2 LIMIT 1`,
    [chain, since],
  );
  return (rowCount ?? 0) > 0;
}

/** The latest snapshot of each chain; a chain without one gets its documented defaults. */
export async function latestSnapshots(db: Queryable): Promise<SnapshotRow[]> {
  const { rows } = await db.query<{
    chain: Chain;
    health_status: HealthStatus;
    estimated_fee_usd: number;
    avg_confirmation_seconds: number;
    rpc_error_rate: number;
    p95_latency_ms: number | null;
    congestion_score: number | null;
    source: 'admin' | 'collector';
    created_at: Date;
  }>(
    // One index probe per chain, however long the history grows.
    `SELECT s.* FROM unnest($1::text[]) AS c(chain) CROSS JOIN LATERAL (
       SELECT chain, health_status, estimated_fee_usd, avg_confirmation_seconds, rpc_error_rate,
              p95_latency_ms, congestion_score, source, created_at
         FROM chain_health_snapshots WHERE chain = c.chain ORDER BY created_at DESC, id DESC LIMIT 1) s`,
    [CHAINS],
  );
  return CHAINS.map(
    (chain) =>
      rows.find((r) => r.chain === chain) ?? {
        ...defaultSnapshot(chain),
        p95_latency_ms: null,
        congestion_score: null,
        source: 'collector' as const,
        created_at: new Date(0),
      },
  );
}
