// The chain-health collector: probes each adapter every HEALTH_COLLECT_SECONDS and records a snapshot that routing
// reads. With several worker processes, one snapshot per chain and period is recorded (advisory lock + freshness).
import type { Logger } from 'pino';
import { CHAINS, type Chain, type ChainAdapters, type HealthProbe } from '../../chains/port.js';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { withTransaction, type Pool } from '../../db/pool.js';
import { insertSnapshot } from '../../db/queries/snapshots.js';
import { CHAIN_DEFAULTS } from '../../routing/defaults.js';
import { assess, PROBE_WINDOW } from './assess.js';

export interface HealthDeps {
  pool: Pool;
  clock: Clock;
  adapters: ChainAdapters;
  config: Pick<Config, 'healthCollectSeconds' | 'rpcTimeoutSeconds'>;
  log: Logger;
}

const LOCK_BASE = 7_340_212_000;
/**
 * A collector snapshot younger than this share of a period means another process already recorded this period.
 * Not half a period: with three or more workers some tick always comes more than half a period after the last
 * snapshot, so every period would get two. Not a whole period: a lone collector's tick that comes a little early
 * must still record.
 */
const SAME_PERIOD_SHARE = 0.9;
/** Settled attempts needed before measured settlement times replace the adapter's typical finality. */
const MIN_SETTLEMENT_SAMPLES = 3;

async function probeWithTimeout(deps: HealthDeps, chain: Chain): Promise<HealthProbe> {
  const timeoutMs = deps.config.rpcTimeoutSeconds * 1000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<HealthProbe>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, latencyMs: timeoutMs, error: 'probe timed out' }), timeoutMs);
  });
  try {
    return await Promise.race([
      // Through then(), so an adapter that throws instead of rejecting is a failed probe, not a failed collection.
      Promise.resolve()
        .then(() => deps.adapters[chain].probe())
        .catch((error: unknown) => ({ ok: false, latencyMs: timeoutMs, error: String(error) })),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export async function collectOnce(deps: HealthDeps): Promise<number> {
  let recorded = 0;
  for (const [index, chain] of CHAINS.entries()) {
    const probe = await probeWithTimeout(deps, chain);
    const done = await withTransaction(deps.pool, async (tx) => {
      const now = deps.clock.now();
      const lock = await tx.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [LOCK_BASE + index]);
      if (!lock.rows[0]?.locked) return false;
      await tx.query('INSERT INTO chain_probes (chain, ok, latency_ms, error, created_at) VALUES ($1, $2, $3, $4, $5)', [
        chain,
        probe.ok,
        probe.latencyMs,
        probe.error ?? null,
        now,
      ]);
      const fresh = await tx.query(
        `SELECT 1 FROM chain_health_snapshots WHERE chain = $1 AND source = 'collector' AND created_at > $2`,
        [chain, new Date(now.getTime() - deps.config.healthCollectSeconds * 1000 * SAME_PERIOD_SHARE)],
      );
      if (fresh.rowCount) return false;
      const recent = await tx.query<{ ok: boolean; latency_ms: number }>(
        'SELECT ok, latency_ms FROM chain_probes WHERE chain = $1 ORDER BY created_at DESC, id DESC LIMIT $2',
        [chain, PROBE_WINDOW],
      );
      const measured = await tx.query<{ n: string; avg: number | null }>(
        `SELECT COUNT(*)::text AS n, AVG(EXTRACT(EPOCH FROM (confirmed_at - broadcast_at)))::float8 AS avg
           FROM (SELECT confirmed_at, broadcast_at FROM payment_attempts
                  WHERE chain = $1 AND status = 'confirmed' AND broadcast_at IS NOT NULL
                  ORDER BY confirmed_at DESC LIMIT 50) recent`,
        [chain],
      );
      const assessment = assess(
        recent.rows.map((r) => ({ ok: r.ok, latencyMs: r.latency_ms })),
        probe.congestion ?? null,
      );
      const adapter = deps.adapters[chain];
      const samples = Number(measured.rows[0]?.n ?? 0);
      await insertSnapshot(tx, {
        chain,
        ...assessment,
        estimated_fee_usd: probe.fee?.feeUsd ?? CHAIN_DEFAULTS[chain].estimated_fee_usd,
        avg_confirmation_seconds:
          samples >= MIN_SETTLEMENT_SAMPLES && measured.rows[0]?.avg != null
            ? Math.round(measured.rows[0].avg * 10) / 10
            : (probe.finalitySeconds ?? adapter.typicalFinalitySeconds),
        congestion_score: probe.congestion ?? null,
        source: 'collector',
        created_at: now,
      });
      // Probes older than the window are of no further use.
      await tx.query(
        `DELETE FROM chain_probes WHERE chain = $1 AND id NOT IN
           (SELECT id FROM chain_probes WHERE chain = $1 ORDER BY created_at DESC, id DESC LIMIT $2)`,
        [chain, PROBE_WINDOW * 5],
      );
      return true;
    });
    if (done) recorded++;
    if (!probe.ok) deps.log.warn({ chain, error: probe.error }, 'health: probe failed');
  }
  return recorded;
}
