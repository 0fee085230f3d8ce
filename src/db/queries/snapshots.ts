// Chain-health snapshots: inserted by operators (POST /admin/chain-health) and by the collector.
import type { Chain } from '../../domain/chain.js';
import { defaultSnapshot, type RoutingDefaults } from '../../routing/defaults.js';
import type { HealthStatus } from '../../domain/health.js';
import type { HealthSnapshot } from '../../routing/score.js';
import type { Queryable } from '../pool.js';

export interface SnapshotRow extends HealthSnapshot {
  p95_latency_ms: number | null;
  congestion_score: number | null;
  source: 'admin' | 'collector';
  created_at: Date;
  /** Why the status is worse than the probes say (e.g. gas below the low-water mark); null otherwise. */
  status_reason?: string | null;
  /** The fee estimate in native units (wei, lamports), when the collector read one from the chain. */
  estimated_fee_native?: bigint | null;
}

export async function insertSnapshot(db: Queryable, s: SnapshotRow): Promise<void> {
  await db.query(
    `INSERT INTO chain_health_snapshots (chain, health_status, estimated_fee_usd, avg_confirmation_seconds, rpc_error_rate,
       p95_latency_ms, congestion_score, source, created_at, status_reason, estimated_fee_native)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      s.chain,
      s.health_status,
      s.estimated_fee_usd,
      s.avg_confirmation_seconds,
      s.rpc_error_rate,
      s.p95_latency_ms,
      s.congestion_score,
      s.source,
      s.created_at,
      s.status_reason ?? null,
      s.estimated_fee_native?.toString() ?? null,
    ],
  );
}

/** Whether the collector recorded a snapshot of the chain after `since`. */
export async function readAnyCollectorSnapshotSince(db: Queryable, chain: Chain, since: Date): Promise<boolean> {
  const { rowCount } = await db.query(
    `SELECT 1 FROM chain_health_snapshots WHERE chain = $1 AND source = 'collector' AND created_at > $2 LIMIT 1`,
    [chain, since],
  );
  return (rowCount ?? 0) > 0;
}

/** The latest snapshot of each chain; a chain without one gets its documented defaults. */
/** The newest snapshot of each configured chain; the chain's defaults for one not measured yet. */
export async function readLatestSnapshots(db: Queryable, chains: { chainNames: readonly Chain[]; chains: RoutingDefaults }): Promise<SnapshotRow[]> {
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
    status_reason: string | null;
    estimated_fee_native: string | null;
  }>(
    // One index probe per chain, however long the history grows.
    `SELECT s.* FROM unnest($1::text[]) AS c(chain) CROSS JOIN LATERAL (
       SELECT chain, health_status, estimated_fee_usd, avg_confirmation_seconds, rpc_error_rate,
              p95_latency_ms, congestion_score, source, created_at, status_reason, estimated_fee_native::text
         FROM chain_health_snapshots WHERE chain = c.chain ORDER BY created_at DESC, id DESC LIMIT 1) s`,
    [chains.chainNames],
  );
  return chains.chainNames.map((chain) => {
    const row = rows.find((r) => r.chain === chain);
    if (row) return { ...row, estimated_fee_native: row.estimated_fee_native === null ? null : BigInt(row.estimated_fee_native) };
    return {
      ...defaultSnapshot(chains.chains, chain),
      p95_latency_ms: null,
      congestion_score: null,
      source: 'collector' as const,
      created_at: new Date(0),
      status_reason: null,
      estimated_fee_native: null,
    };
  });
}
