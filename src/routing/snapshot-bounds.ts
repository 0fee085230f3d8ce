// The ranges of a chain-health snapshot's metrics (decision 26): what POST /admin/chain-health accepts (its JSON
// schema reads these) and what routing scores. A snapshot outside them, stored before the bounds existed or written
// by hand, disqualifies its chain (`invalid_chain_health`) instead of reaching the arithmetic. Defaults: defaults.ts.
import type { HealthSnapshot } from './score.js';

/** A million dollars for one USDC transfer is a typo, not an estimate; and fee x 10^6 stays an exact integer. */
export const ESTIMATED_FEE_USD_MAX = 1_000_000;
/** Finality slower than a day is an outage, which an operator records as `unhealthy`. */
export const AVG_CONFIRMATION_SECONDS_MAX = 86_400;
/** The spec's range, 0 to 1. */
export const RPC_ERROR_RATE_MAX = 1;

const within = (value: number, max: number) => value >= 0 && value <= max; // false for NaN

export function snapshotWithinBounds(s: Pick<HealthSnapshot, 'estimated_fee_usd' | 'avg_confirmation_seconds' | 'rpc_error_rate'>): boolean {
  return (
    within(s.estimated_fee_usd, ESTIMATED_FEE_USD_MAX) &&
    within(s.avg_confirmation_seconds, AVG_CONFIRMATION_SECONDS_MAX) &&
    within(s.rpc_error_rate, RPC_ERROR_RATE_MAX)
  );
}
