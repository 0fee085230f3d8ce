// Chain scoring and route selection: pure functions over health snapshots and treasury balances.
// The weights and rules are explained in docs/decisions.md (decisions 21-23).
import type { Chain } from '../domain/chain.js';
import type { HealthStatus } from '../domain/health.js';
import type { Priority } from '../domain/priority.js';
import { DEFAULT_TOKEN, type Token } from '../domain/token.js';
import { snapshotWithinBounds } from './snapshot-bounds.js';

export interface HealthSnapshot {
  chain: Chain;
  health_status: HealthStatus;
  estimated_fee_usd: number;
  avg_confirmation_seconds: number;
  rpc_error_rate: number;
}

export interface RouteInput {
  chain: Chain;
  /**
   * The token this route pays, when the quote named the tokens it accepts (issue 40): the snapshot's fee is then the
   * token's own, the balance the treasury's in it. Absent: USDC, and the route names no token (the spec's shape).
   */
  token?: Token;
  snapshot: HealthSnapshot;
  availableMicros: bigint;
  destination: string | null;
  /**
   * The booked native balance and the next transfer's fee estimate, both in native units; absent: not checked. A null
   * fee could not be computed from the snapshot (domain/gas.ts), and the chain is refused as for a snapshot out of bounds.
   */
  gas?: { bookedUnits: bigint; feeUnits: bigint | null };
}

export type DisqualificationReason = 'no_destination' | 'invalid_chain_health' | 'unhealthy' | 'insufficient_balance' | 'insufficient_gas';

export interface ScoringDetail {
  chain: Chain;
  token?: Token;
  fee_score: number;
  latency_score: number;
  reliability_score: number;
  final_score: number;
  disqualified: boolean;
  disqualification_reason: DisqualificationReason | null;
}

export interface CandidateRoute {
  chain: Chain;
  token?: Token;
  estimated_fee_usd: number;
  estimated_settlement_seconds: number;
  reliability_score: number;
  final_score: number;
}

export interface RouteDecision {
  details: ScoringDetail[];
  candidates: CandidateRoute[];
  recommended: Chain | null;
  /** The recommended route's token (USDC when the routes name none). */
  recommendedToken: Token;
}

export const WEIGHTS: Record<Priority, { fee: number; latency: number; reliability: number }> = {
  low_fee: { fee: 0.6, latency: 0.2, reliability: 0.2 },
  fast: { fee: 0.2, latency: 0.6, reliability: 0.2 },
  reliable: { fee: 0.2, latency: 0.2, reliability: 0.6 },
};

/** A fee of FEE_HALF_SCORE_USD scores 0.5; a free transfer 1. */
export const FEE_HALF_SCORE_USD = 1;
/** A settlement time of LATENCY_HALF_SCORE_SECONDS scores 0.5; instant 1. */
export const LATENCY_HALF_SCORE_SECONDS = 60;
const STATUS_FACTOR: Record<HealthStatus, number> = { healthy: 1, degraded: 0.6, unhealthy: 0 };

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

// Every score is a number in 0..1 whatever it is given (decision 26): NaN scores as the worst value, an infinite
// fee or time as 0. Such a snapshot is disqualified anyway; its scoring details must still serialise.
export function feeScore(feeUsd: number): number {
  return Number.isNaN(feeUsd) ? 0 : round4(1 / (1 + Math.max(0, feeUsd) / FEE_HALF_SCORE_USD));
}

export function latencyScore(seconds: number): number {
  return Number.isNaN(seconds) ? 0 : round4(1 / (1 + Math.max(0, seconds) / LATENCY_HALF_SCORE_SECONDS));
}

export function reliabilityScore(status: HealthStatus, rpcErrorRate: number): number {
  const errorRate = Number.isNaN(rpcErrorRate) ? 1 : Math.min(1, Math.max(0, rpcErrorRate));
  return round4((STATUS_FACTOR[status] ?? 0) * (1 - errorRate));
}

function disqualification(input: RouteInput, amountMicros: bigint): DisqualificationReason | null {
  if (!input.destination) return 'no_destination';
  // Metrics the API would refuse, or a fee that cannot be priced in native units: nothing to score safely.
  if (!snapshotWithinBounds(input.snapshot) || input.gas?.feeUnits === null) return 'invalid_chain_health';
  if (input.snapshot.health_status === 'unhealthy') return 'unhealthy';
  if (input.availableMicros < amountMicros) return 'insufficient_balance';
  // The treasury could not pay the transfer's fee: better no route here than a payout that fails (decision 28).
  if (input.gas && input.gas.feeUnits !== null && input.gas.bookedUnits < input.gas.feeUnits) return 'insufficient_gas';
  return null;
}

export function scoreRoutes(amountMicros: bigint, priority: Priority, inputs: readonly RouteInput[]): RouteDecision {
  const weights = WEIGHTS[priority];
  const details = inputs.map((input): ScoringDetail => {
    const fee = feeScore(input.snapshot.estimated_fee_usd);
    const latency = latencyScore(input.snapshot.avg_confirmation_seconds);
    const reliability = reliabilityScore(input.snapshot.health_status, input.snapshot.rpc_error_rate);
    const reason = disqualification(input, amountMicros);
    return {
      chain: input.chain,
      ...tokenOf(input),
      fee_score: fee,
      latency_score: latency,
      reliability_score: reliability,
      final_score: round4(weights.fee * fee + weights.latency * latency + weights.reliability * reliability),
      disqualified: reason !== null,
      disqualification_reason: reason,
    };
  });
  const candidates = inputs
    .map((input, i) => ({ input, detail: details[i]! }))
    .filter(({ detail }) => !detail.disqualified)
    .map(
      ({ input, detail }): CandidateRoute => ({
        chain: input.chain,
        ...tokenOf(input),
        estimated_fee_usd: input.snapshot.estimated_fee_usd,
        estimated_settlement_seconds: input.snapshot.avg_confirmation_seconds,
        reliability_score: detail.reliability_score,
        final_score: detail.final_score,
      }),
    )
    // Best first; ties go to the cheaper route, then to the faster one.
    .sort(
      (a, b) =>
        b.final_score - a.final_score ||
        a.estimated_fee_usd - b.estimated_fee_usd ||
        a.estimated_settlement_seconds - b.estimated_settlement_seconds,
    );
  return { details, candidates, recommended: candidates[0]?.chain ?? null, recommendedToken: candidates[0]?.token ?? DEFAULT_TOKEN };
}

/** A route's `token` field, only when the quote named tokens: the spec's routes have none. */
function tokenOf(input: RouteInput): { token?: Token } {
  return input.token === undefined ? {} : { token: input.token };
}
