// Prometheus metrics (prom-client). One registry per process, built here and carried in the AppContext, never a
// module global: tests run several apps in one process without their series colliding. Names follow Prometheus
// conventions: a `stableroute_` prefix, base units in the name (`_seconds`, `_usdc`), `_total` on counters.
// Histograms are observed where things happen (HTTP hook, confirmation, webhook delivery, chain adapters); gauges
// that describe the database are set at scrape time (src/core/health/metrics.ts).
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds, from a quick HTTP answer to a slow chain call. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Seconds a payment takes, from Solana's few seconds to Ethereum's minutes and a manual review's hours. */
const SETTLEMENT_BUCKETS = [1, 2, 5, 10, 15, 30, 60, 120, 180, 300, 600, 1800, 3600, 14400];
/** Seconds from a chain's finality (or an event's creation) to our reaction: the worker's own delay. */
const REACTION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 1800];

export interface Metrics {
  registry: Registry;
  httpRequestDuration: Histogram<'method' | 'route' | 'status_code'>;
  paymentIntents: Gauge<'status'>;
  creationToSettlement: Histogram<'chain'>;
  finalityToSettlement: Histogram<'chain'>;
  webhookDeliveries: Counter<'outcome'>;
  webhookDeliveryLag: Histogram<'event_type'>;
  jobQueueDepth: Gauge<'queue' | 'state'>;
  confirmationBacklog: Gauge<'chain'>;
  confirmationBacklogOldestAge: Gauge<'chain'>;
  chainRpcDuration: Histogram<'chain' | 'adapter' | 'method'>;
  chainRpcErrors: Counter<'chain' | 'adapter' | 'method'>;
  treasuryBalanceUsdc: Gauge<'chain' | 'account'>;
  treasuryNativeBalance: Gauge<'chain' | 'currency'>;
  collectErrors: Counter;
  readReplicaLag: Gauge;
}

export function createMetrics(options: { processMetrics?: boolean } = {}): Metrics {
  const registry = new Registry();
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    httpRequestDuration: new Histogram({
      name: 'stableroute_http_request_duration_seconds',
      help: 'HTTP requests by method, route pattern (never the raw URL) and status code',
      labelNames: ['method', 'route', 'status_code'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    paymentIntents: new Gauge({
      name: 'stableroute_payment_intents',
      help: 'Payment intents in each status, read from the database at scrape time',
      labelNames: ['status'],
      registers,
    }),
    creationToSettlement: new Histogram({
      name: 'stableroute_payment_creation_to_settlement_seconds',
      help: 'From a payment intent’s creation to its settlement by the confirmation worker',
      labelNames: ['chain'],
      buckets: SETTLEMENT_BUCKETS,
      registers,
    }),
    finalityToSettlement: new Histogram({
      name: 'stableroute_payment_finality_to_settlement_seconds',
      help: 'From the moment the chain made a transfer final (where the chain tells it) to its settlement',
      labelNames: ['chain'],
      buckets: REACTION_BUCKETS,
      registers,
    }),
    webhookDeliveries: new Counter({
      name: 'stableroute_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome: delivered, retry (failed, will retry), failed (no more retries), stored (no webhook_url)',
      labelNames: ['outcome'],
      registers,
    }),
    webhookDeliveryLag: new Histogram({
      name: 'stableroute_webhook_delivery_lag_seconds',
      help: 'From an event’s creation to its successful delivery, retries included',
      labelNames: ['event_type'],
      buckets: REACTION_BUCKETS,
      registers,
    }),
    jobQueueDepth: new Gauge({
      name: 'stableroute_job_queue_depth',
      help: 'Jobs per queue and state (waiting: queued or retrying; active: running)',
      labelNames: ['queue', 'state'],
      registers,
    }),
    confirmationBacklog: new Gauge({
      name: 'stableroute_confirmation_backlog',
      help: 'Broadcast transfers the confirmation worker is still watching, per chain',
      labelNames: ['chain'],
      registers,
    }),
    confirmationBacklogOldestAge: new Gauge({
      name: 'stableroute_confirmation_backlog_oldest_age_seconds',
      help: 'Age of the oldest broadcast transfer not final yet, per chain (0 when none)',
      labelNames: ['chain'],
      registers,
    }),
    chainRpcDuration: new Histogram({
      name: 'stableroute_chain_rpc_duration_seconds',
      help: 'Chain adapter calls (node RPC, or the simulated network) by chain, adapter and method, failures included',
      labelNames: ['chain', 'adapter', 'method'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    chainRpcErrors: new Counter({
      name: 'stableroute_chain_rpc_errors_total',
      help: 'Chain adapter calls that failed, by chain, adapter and method',
      labelNames: ['chain', 'adapter', 'method'],
      registers,
    }),
    treasuryBalanceUsdc: new Gauge({
      name: 'stableroute_treasury_balance_usdc',
      help: 'Treasury USDC as the ledger books it, per chain and account (available, reserved, in_flight)',
      labelNames: ['chain', 'account'],
      registers,
    }),
    treasuryNativeBalance: new Gauge({
      name: 'stableroute_treasury_native_balance',
      help: 'Treasury native currency for fees as the ledger books it, in whole units (ETH, SOL)',
      labelNames: ['chain', 'currency'],
      registers,
    }),
    collectErrors: new Counter({
      name: 'stableroute_metrics_collect_errors_total',
      help: 'Scrapes whose database gauges could not be read in time; the previous values were served',
      registers,
    }),
    readReplicaLag: new Gauge({
      name: 'stableroute_read_replica_lag_seconds',
      help: 'How far DATABASE_READ_URL (console lists, exports, these gauges) is behind the primary; 0 without one',
      registers,
    }),
  };
}
