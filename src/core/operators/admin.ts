// Operator views: aggregates over intents, attempts, snapshots and balances. The API shapes them (src/api/views).
import { readAttempts, type AttemptRow } from '../../db/queries/attempts.js';
import { countFailures } from '../../db/queries/failures.js';
import { countPayments, listRecentIntents, countRoutes as distribution, type PaymentCounts, type PaymentIntentRow } from '../../db/queries/intents.js';
import { insertSnapshot, readLatestSnapshots, type SnapshotRow } from '../../db/queries/snapshots.js';
import type { Chain } from '../../domain/chain.js';
import { OPEN_STATUSES } from '../../domain/payment-intent.js';
import { treasuryBalances, type TreasuryBalance } from '../../ledger/store.js';
import { DEFAULT_RPC_ERROR_RATE, defaultSnapshot } from '../../routing/defaults.js';
import type { HealthStatus } from '../../domain/health.js';
import type { AppContext } from '../context.js';
import { audited, type AuditEntry } from './audit.js';
import type { InboundTransferRow } from '../../db/queries/deposits.js';
import { recentDeposits } from '../treasury/deposits/list.js';
import { ADMIN_RECENT_DEPOSITS, ADMIN_RECENT_PAYMENTS } from '../../bounds.js';

export interface Overview {
  counts: PaymentCounts;
  snapshots: SnapshotRow[];
  balances: TreasuryBalance[];
  recent: { intent: PaymentIntentRow; attempts: AttemptRow[] }[];
  deposits: InboundTransferRow[];
}

export async function overview(ctx: AppContext): Promise<Overview> {
  const [counts, snapshots, balances, recent, deposits] = await Promise.all([
    countPayments(ctx.pool, OPEN_STATUSES),
    readLatestSnapshots(ctx.pool, ctx.config),
    treasuryBalances(ctx.pool),
    listRecentIntents(ctx.pool, ADMIN_RECENT_PAYMENTS),
    recentDeposits(ctx, ADMIN_RECENT_DEPOSITS),
  ]);
  const attempts = await readAttempts(
    ctx.pool,
    recent.map((i) => i.id),
  );
  return { counts, snapshots, balances, recent: recent.map((intent) => ({ intent, attempts: attempts.get(intent.id) ?? [] })), deposits };
}

export async function routeDistribution(ctx: AppContext) {
  return distribution(ctx.pool);
}

/**
 * Failed attempts (a settled payment whose first send timed out is not a failure; a replaced one is not either) and
 * attempts refused before signing, by reason and chain, most common first.
 */
export async function failures(ctx: AppContext) {
  return countFailures(ctx.pool);
}

export interface ChainHealthInput {
  chain: Chain;
  health_status: HealthStatus;
  estimated_fee_usd?: number;
  avg_confirmation_seconds?: number;
  rpc_error_rate?: number;
}

export async function recordChainHealth(ctx: AppContext, input: ChainHealthInput, audit: AuditEntry): Promise<SnapshotRow> {
  const snapshot: SnapshotRow = {
    chain: input.chain,
    health_status: input.health_status,
    estimated_fee_usd: input.estimated_fee_usd ?? defaultSnapshot(ctx.config.chains, input.chain).estimated_fee_usd,
    avg_confirmation_seconds: input.avg_confirmation_seconds ?? defaultSnapshot(ctx.config.chains, input.chain).avg_confirmation_seconds,
    rpc_error_rate: input.rpc_error_rate ?? DEFAULT_RPC_ERROR_RATE,
    p95_latency_ms: null,
    congestion_score: null,
    source: 'admin',
    created_at: ctx.clock.now(),
  };
  await audited(ctx, audit, snapshot.created_at, (tx) => insertSnapshot(tx, snapshot));
  ctx.facts?.drop('health'); // the operator's next quote in this process sees it (other processes: the notice)
  return snapshot;
}
