// Chain-specific defaults: used for fields missing from POST /admin/chain-health and for a chain that has no
// snapshot yet. Typical mainnet values for a USDC transfer (docs/decisions.md).
import type { Chain } from '../domain/chain.js';
import type { HealthSnapshot } from './score.js';

export const DEFAULT_RPC_ERROR_RATE = 0.01;

export const CHAIN_DEFAULTS: Record<Chain, { estimated_fee_usd: number; avg_confirmation_seconds: number }> = {
  // ~65k gas at a few gwei; finality after 12 confirmations of 12 s blocks plus inclusion.
  ethereum: { estimated_fee_usd: 1.5, avg_confirmation_seconds: 180 },
  // 5000 lamports per signature plus a small priority fee; "finalized" commitment ~13 s.
  solana: { estimated_fee_usd: 0.001, avg_confirmation_seconds: 13 },
};

export function defaultSnapshot(chain: Chain): HealthSnapshot {
  return { chain, health_status: 'healthy', rpc_error_rate: DEFAULT_RPC_ERROR_RATE, ...CHAIN_DEFAULTS[chain] };
}
