// The gauges that describe the database, read at scrape time: intents by status, job queue depth, confirmation
// backlog, treasury balances. Bounded cost: a handful of index-only or small-table queries (about 15 ms with 100k
// intents, bench/console.ts); concurrent scrapes share one read, and a read slower than TIMEOUT_MS is not waited for
// (the previous values are served and stableroute_metrics_collect_errors_total counts it), so a slow database never
// hangs a scrape.
import { confirmationBacklog } from '../db/queries/backlog.js';
import { countByStatus } from '../db/queries/intent-list.js';
import { PAYMENT_STATUSES } from '../domain/payment-intent.js';
import { queueDepths } from '../jobs/depth.js';
import { treasuryNativeBalances } from '../ledger/native-balances.js';
import { treasuryBalances } from '../ledger/store.js';
import { formatUnits, formatUsdc } from '../money.js';
import { decimalsOf } from '../ledger/currencies.js';
import type { AppContext } from './context.js';
import { WATCHED } from './lifecycle/confirm.js';

const TIMEOUT_MS = 5_000;

type Deps = Pick<AppContext, 'pool' | 'boss' | 'metrics' | 'log' | 'clock'>;

/** The read in flight per registry (keyed by the app's Metrics, so apps in one process never share one). */
const inFlight = new WeakMap<object, Promise<void>>();

async function readGauges(deps: Deps): Promise<void> {
  const { metrics } = deps;
  const [statuses, queues, backlog, balances, natives] = await Promise.all([
    countByStatus(deps.pool),
    queueDepths(deps.boss),
    confirmationBacklog(deps.pool, WATCHED),
    treasuryBalances(deps.pool),
    treasuryNativeBalances(deps.pool),
  ]);
  for (const status of PAYMENT_STATUSES) metrics.paymentIntents.set({ status }, statuses.get(status) ?? 0);
  for (const q of queues) {
    metrics.jobQueueDepth.set({ queue: q.queue, state: 'waiting' }, q.waiting);
    metrics.jobQueueDepth.set({ queue: q.queue, state: 'active' }, q.active);
  }
  const now = deps.clock.now().getTime();
  for (const b of balances) {
    const chainBacklog = backlog.find((x) => x.chain === b.chain);
    metrics.confirmationBacklog.set({ chain: b.chain }, chainBacklog?.attempts ?? 0);
    const oldest = chainBacklog?.oldestBroadcastAt;
    metrics.confirmationBacklogOldestAge.set({ chain: b.chain }, oldest ? Math.max(0, (now - oldest.getTime()) / 1000) : 0);
    // Gauges are doubles: exact for any balance below 9e9 USDC, which every treasury is.
    metrics.treasuryBalanceUsdc.set({ chain: b.chain, account: 'available' }, Number(formatUsdc(b.availableMicros)));
    metrics.treasuryBalanceUsdc.set({ chain: b.chain, account: 'reserved' }, Number(formatUsdc(b.reservedMicros - b.inFlightMicros)));
    metrics.treasuryBalanceUsdc.set({ chain: b.chain, account: 'in_flight' }, Number(formatUsdc(b.inFlightMicros)));
  }
  for (const n of natives) {
    metrics.treasuryNativeBalance.set({ chain: n.chain, currency: n.currency }, Number(formatUnits(n.units, decimalsOf(n.currency))));
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
    timer = setTimeout(() => reject(new Error(`database gauges not read within ${TIMEOUT_MS} ms`)), TIMEOUT_MS);
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
