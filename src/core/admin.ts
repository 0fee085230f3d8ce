// Operator views: aggregates over intents, attempts, snapshots and balances.
import type { Chain } from '../chains/port.js';
import { attemptsOf } from '../db/queries/attempts.js';
import { recentIntents } from '../db/queries/intents.js';
import { insertSnapshot, latestSnapshots, snapshotView, type SnapshotRow } from '../db/queries/snapshots.js';
import { OPEN_STATUSES } from '../domain/payment-intent.js';
import { treasuryBalances } from '../ledger/store.js';
import { formatUsdc, usdcToNumber } from '../money.js';
import { CHAIN_DEFAULTS, DEFAULT_RPC_ERROR_RATE } from '../routing/defaults.js';
import type { HealthStatus } from '../routing/score.js';
import type { AppContext } from './context.js';
import { readView } from './views.js';

export const RECENT_PAYMENTS = 20;

export async function overview(ctx: AppContext) {
  const [counts, snapshots, balances, recent] = await Promise.all([
    ctx.pool.query<{ total: string; settled: string; failed: string; pending: string; volume: string }>(
      `SELECT COUNT(*)::text AS total,
              COUNT(*) FILTER (WHERE status = 'settled')::text AS settled,
              COUNT(*) FILTER (WHERE status = 'failed')::text AS failed,
              COUNT(*) FILTER (WHERE status = ANY($1))::text AS pending,
              COALESCE(SUM(amount_micros) FILTER (WHERE status = 'settled'), 0)::text AS volume
         FROM payment_intents`,
      [OPEN_STATUSES],
    ),
    latestSnapshots(ctx.pool),
    treasuryBalances(ctx.pool),
    recentIntents(ctx.pool, RECENT_PAYMENTS),
  ]);
  const attempts = await attemptsOf(
    ctx.pool,
    recent.map((i) => i.id),
  );
  const c = counts.rows[0]!;
  return {
    payments: {
      total: Number(c.total),
      settled: Number(c.settled),
      failed: Number(c.failed),
      pending: Number(c.pending),
      total_volume_usd: usdcToNumber(BigInt(c.volume)),
    },
    chain_health: snapshots.map(snapshotView),
    treasury_balances: balances.map((b) => ({
      chain: b.chain,
      address: b.address,
      available_balance: usdcToNumber(b.availableMicros),
      reserved_balance: usdcToNumber(b.reservedMicros),
    })),
    recent_payments: recent.map((i) => readView(i, attempts.get(i.id) ?? [], null)),
  };
}

/** Count and volume as numeric strings, as clients of the original system receive them from PostgreSQL. */
export async function routeDistribution(ctx: AppContext) {
  const { rows } = await ctx.pool.query<{ selected_chain: Chain; count: string; volume: string }>(
    `SELECT selected_chain, COUNT(*)::text AS count, SUM(amount_micros)::text AS volume
       FROM payment_intents GROUP BY selected_chain ORDER BY COUNT(*) DESC, selected_chain`,
  );
  return rows.map((r) => ({ selected_chain: r.selected_chain, count: r.count, volume: formatUsdc(BigInt(r.volume)) }));
}

/**
 * Failed attempts (a settled payment whose first send timed out is not a failure; a replaced one is not either) and
 * attempts refused before signing, by reason and chain, most common first.
 */
export async function failures(ctx: AppContext) {
  const { rows } = await ctx.pool.query<{ failure_reason: string; chain: Chain; count: string }>(
    `SELECT failure_reason, chain, COUNT(*)::text AS count FROM (
       SELECT failure_reason, chain FROM payment_attempts WHERE status = 'failed' AND failure_reason IS NOT NULL
       UNION ALL
       SELECT reason, chain FROM sign_refusals
     ) f GROUP BY failure_reason, chain
      ORDER BY COUNT(*) DESC, failure_reason, chain`,
  );
  return rows;
}

export interface ChainHealthInput {
  chain: Chain;
  health_status: HealthStatus;
  estimated_fee_usd?: number;
  avg_confirmation_seconds?: number;
  rpc_error_rate?: number;
}

export async function recordChainHealth(ctx: AppContext, input: ChainHealthInput) {
  const snapshot: SnapshotRow = {
    chain: input.chain,
    health_status: input.health_status,
    estimated_fee_usd: input.estimated_fee_usd ?? CHAIN_DEFAULTS[input.chain].estimated_fee_usd,
    avg_confirmation_seconds: input.avg_confirmation_seconds ?? CHAIN_DEFAULTS[input.chain].avg_confirmation_seconds,
    rpc_error_rate: input.rpc_error_rate ?? DEFAULT_RPC_ERROR_RATE,
    p95_latency_ms: null,
    congestion_score: null,
    source: 'admin',
    created_at: ctx.clock.now(),
  };
  await insertSnapshot(ctx.pool, snapshot);
  return snapshotView(snapshot);
}
