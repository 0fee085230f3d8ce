// Decimals of every currency the ledger holds: USDC's 6, and the native currency of the chain an account is on, by
// the chain's family (wei, lamports), whatever CHAINS calls it.
import { familyOf, type Chain } from '../domain/chain.js';
import { NATIVE_DECIMALS } from '../domain/chain-presets.js';
import { tokenOfCurrency } from '../domain/token.js';

export const USDC_DECIMALS = 6;

export function decimalsOf(chain: Chain, currency: string): number {
  // Every token has USDC's 6 decimals (decision 234).
  return tokenOfCurrency(currency) !== null ? USDC_DECIMALS : NATIVE_DECIMALS[familyOf(chain)];
}
