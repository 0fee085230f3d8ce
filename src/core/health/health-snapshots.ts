// Chain health, the use case: probe each adapter, assess the window of probes (src/domain/health.ts), and record the
// snapshot routing reads, with the gas check (core/treasury/gas.ts) and the measured settlement times. Run every
// HEALTH_COLLECT_SECONDS by the workers (src/workers/runner.ts); with several worker processes, one snapshot per chain
// and period is recorded (advisory lock + freshness).
import type { Logger } from 'pino';
import { adapterOf, type ChainAdapters, type HealthProbe } from '../../chains/port.js';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { tryAdvisoryXactLock, withTransaction, type Pool } from '../../db/pool.js';
import { insertProbe, deleteOldProbes, listRecentProbes, readRecentSettlementSeconds } from '../../db/queries/health-samples.js';
import { readAnyCollectorSnapshotSince, insertSnapshot } from '../../db/queries/snapshots.js';
import type { Chain } from '../../domain/chain.js';
import { checkGas } from '../treasury/gas.js';
import { defaultSnapshot } from '../../routing/defaults.js';
import { assess, PROBE_WINDOW } from '../../domain/health.js';

export interface HealthDeps {
  pool: Pool;
  clock: Clock;
  adapters: ChainAdapters;
  config: Pick<Config, 'healthCollectSeconds' | 'rpcTimeoutSeconds' | 'chains' | 'chainNames' | 'operatorWebhookUrl'>;
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
/** Confirmed attempts the measured settlement time averages over. */
const SETTLEMENT_SAMPLE = 50;

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
        .then(() => adapterOf(deps.adapters, chain).probe())
        .catch((error: unknown) => ({ ok: false, latencyMs: timeoutMs, error: String(error) })),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Records a snapshot of each chain whose period has none yet; answers how many it recorded. */
export async function recordHealthSnapshots(deps: HealthDeps): Promise<number> {
  let recorded = 0;
  for (const [index, chain] of deps.config.chainNames.entries()) {
    const probe = await probeWithTimeout(deps, chain);
    const done = await withTransaction(deps.pool, async (tx) => {
      const now = deps.clock.now();
      if (!(await tryAdvisoryXactLock(tx, LOCK_BASE + index))) return false;
      await insertProbe(tx, { chain, ok: probe.ok, latencyMs: probe.latencyMs, error: probe.error ?? null, at: now });
      const periodStart = new Date(now.getTime() - deps.config.healthCollectSeconds * 1000 * SAME_PERIOD_SHARE);
      if (await readAnyCollectorSnapshotSince(tx, chain, periodStart)) return false;
      const recent = await listRecentProbes(tx, chain, PROBE_WINDOW);
      const measured = await readRecentSettlementSeconds(tx, chain, SETTLEMENT_SAMPLE);
      const assessment = assess(recent, probe.congestion ?? null);
      const adapter = adapterOf(deps.adapters, chain);
      // Gas below the low-water mark degrades a chain whose node is fine (decision 28).
      const gasReason = await checkGas(tx, deps, adapter, now);
      await insertSnapshot(tx, {
        chain,
        ...assessment,
        health_status: gasReason !== null && assessment.health_status === 'healthy' ? 'degraded' : assessment.health_status,
        status_reason: gasReason,
        estimated_fee_native: probe.fee?.feeNative ?? null,
        estimated_fee_usd: probe.fee?.feeUsd ?? defaultSnapshot(deps.config.chains, chain).estimated_fee_usd,
        avg_confirmation_seconds:
          measured.samples >= MIN_SETTLEMENT_SAMPLES && measured.avgSeconds !== null
            ? Math.round(measured.avgSeconds * 10) / 10
            : (probe.finalitySeconds ?? adapter.typicalFinalitySeconds),
        congestion_score: probe.congestion ?? null,
        source: 'collector',
        created_at: now,
      });
      // Probes older than the window are of no further use.
      await deleteOldProbes(tx, chain, PROBE_WINDOW * 5);
      return true;
    });
    if (done) recorded++;
    if (!probe.ok) deps.log.warn({ chain, error: probe.error }, 'health: probe failed');
  }
  return recorded;
}
