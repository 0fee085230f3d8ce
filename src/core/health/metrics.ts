// The gauges that describe the database, read at scrape time: intents by status, job queue depth, confirmation
// backlog, treasury balances. Bounded cost: a handful of index-only or small-table queries (about 15 ms with 100k
// intents, bench/console.ts); concurrent scrapes share one read, and a read slower than METRICS_READ_TIMEOUT_MS is not waited for
// (the previous values are served and stableroute_metrics_collect_errors_total counts it), so a slow database never
// hangs a scrape.
import { countByStatus } from '../../db/queries/intent-list.js';
import { PAYMENT_STATUSES } from '../../domain/payment-intent.js';
import { queueDepths } from '../../jobs/depth.js';
import { formatUnits, formatUsdc } from '../../money.js';
import { readsOf, type AppContext } from '../context.js';
import { replicaState } from '../../db/read-pool.js';
import { treasuryStates } from '../operators/console/treasury.js';
import { METRICS_READ_TIMEOUT_MS } from '../../bounds.js';

type Deps = Pick<AppContext, 'pool' | 'reads' | 'boss' | 'metrics' | 'log' | 'clock' | 'adapters' | 'config'>;

/** The read in flight per registry (keyed by the app's Metrics, so apps in one process never share one). */
const inFlight = new WeakMap<object, Promise<void>>();

async function readGauges(deps: Deps): Promise<void> {
  const { metrics } = deps;
  // The treasury and backlog figures are the operator's treasury view (GET /admin/treasury), read the same way. Off
  // the read server when there is one (decision 195): gauges decide nothing. The queue is pg-boss's, on the primary.
  const reads = readsOf(deps);
  const [statuses, queues, treasuries, replica] = await Promise.all([
    countByStatus(reads),
    queueDepths(deps.boss),
    treasuryStates({ ...deps, pool: reads }),
    deps.reads ? replicaState(deps.reads) : null,
  ]);
  if (replica) metrics.readReplicaLag.set(replica.lagSeconds);
  for (const status of PAYMENT_STATUSES) metrics.paymentIntents.set({ status }, statuses.get(status) ?? 0);
  for (const q of queues) {
    metrics.jobQueueDepth.set({ queue: q.queue, state: 'waiting' }, q.waiting);
    metrics.jobQueueDepth.set({ queue: q.queue, state: 'active' }, q.active);
  }
  const now = deps.clock.now().getTime();
  for (const t of treasuries) {
    metrics.confirmationBacklog.set({ chain: t.chain }, t.backlog.attempts);
    const oldest = t.backlog.oldestBroadcastAt;
    metrics.confirmationBacklogOldestAge.set({ chain: t.chain }, oldest ? Math.max(0, (now - oldest.getTime()) / 1000) : 0);
    // Gauges are doubles: exact for any balance below 9e9 USDC, which every treasury is.
    metrics.treasuryBalanceUsdc.set({ chain: t.chain, account: 'available' }, Number(formatUsdc(t.availableMicros)));
    metrics.treasuryBalanceUsdc.set({ chain: t.chain, account: 'reserved' }, Number(formatUsdc(t.reservedMicros)));
    metrics.treasuryBalanceUsdc.set({ chain: t.chain, account: 'in_flight' }, Number(formatUsdc(t.inFlightMicros)));
    metrics.treasuryNativeBalance.set({ chain: t.chain, currency: t.nativeCurrency }, Number(formatUnits(t.nativeUnits, t.nativeDecimals)));
  }
}

/** Brings the database gauges up to date for a scrape (see the file comment for the bounds). */
export async function refreshDatabaseGauges(deps: Deps): Promise<void> {
  let read = inFlight.get(deps.metrics);
  if (!read) {
    read = readGauges(deps).finally(() => inFlight.delete(deps.metrics));
    inFlight.set(deps.metrics, read);
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`database gauges not read within ${METRICS_READ_TIMEOUT_MS} ms`)), METRICS_READ_TIMEOUT_MS);
  });
  try {
    await Promise.race([read, timeout]);
  } catch (error) {
    deps.metrics.collectErrors.inc();
    deps.log.warn({ err: error }, 'metrics: database gauges not refreshed; serving the previous values');
  } finally {
    clearTimeout(timer);
  }
}
