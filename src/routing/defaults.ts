// Chain defaults for fields missing from POST /admin/chain-health and for a chain that has no snapshot yet: the
// typical fee and time to finality of a USDC transfer, from the chain's preset or settings (src/domain/chain-presets.ts).
import type { Chain } from '../domain/chain.js';
import type { HealthSnapshot } from './score.js';

export const DEFAULT_RPC_ERROR_RATE = 0.01;

/** What routing needs to know of each configured chain before it is measured (config.chains has it). */
export type RoutingDefaults = Readonly<Record<Chain, { readonly typicalFeeUsd: number; readonly typicalConfirmationSeconds: number }>>;

export function defaultSnapshot(chains: RoutingDefaults, chain: Chain): HealthSnapshot {
  const typical = chains[chain];
  if (typical === undefined) throw new RangeError(`${chain} is not in CHAINS`);
  return {
    chain,
    health_status: 'healthy',
    rpc_error_rate: DEFAULT_RPC_ERROR_RATE,
    estimated_fee_usd: typical.typicalFeeUsd,
    avg_confirmation_seconds: typical.typicalConfirmationSeconds,
  };
}
