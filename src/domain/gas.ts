// Gas (decision 28): whether a treasury's booked native balance is below the operator's low-water mark, and whether
// it can pay the next transfer's fee. Pure.
import type { Chain, NativeCurrency } from './chain.js';
import { formatUnits } from '../money.js';

export interface GasFacts {
  chain: Chain;
  currency: NativeCurrency;
  decimals: number;
  /** Booked native balance (wei, lamports). */
  bookedUnits: bigint;
  lowWaterUnits: bigint;
}

/** Why the chain is degraded for gas, or null when the balance is at or above the mark. */
export function lowGasReason(facts: GasFacts): string | null {
  if (facts.bookedUnits >= facts.lowWaterUnits) return null;
  const amount = (units: bigint) => `${formatUnits(units, facts.decimals)} ${facts.currency}`;
  return `low_gas: the ${facts.chain} treasury has ${amount(facts.bookedUnits)} for fees, below the low-water mark of ${amount(facts.lowWaterUnits)}`;
}

/**
 * A USD fee estimate in native units, rounded up: what routing compares with the booked balance when no native
 * estimate exists. Null when it cannot be computed exactly (decision 26): a fee or a price that is not a finite
 * number, or so large that its micro-dollars are past a double's exact integers. Routing refuses the chain then;
 * converting such a number to a bigint would throw.
 */
export function usdToNativeUnits(feeUsd: number, usdPrice: number, decimals: number): bigint | null {
  if (!Number.isFinite(feeUsd) || !Number.isFinite(usdPrice)) return null;
  if (!(feeUsd > 0) || !(usdPrice > 0)) return 0n;
  // Through micro-dollars, so a float never becomes a bigint of 18 digits directly.
  const feeMicroUsd = Math.ceil(feeUsd * 1_000_000);
  const priceMicroUsd = Math.max(1, Math.floor(usdPrice * 1_000_000));
  if (!Number.isSafeInteger(feeMicroUsd) || !Number.isSafeInteger(priceMicroUsd)) return null;
  const scale = 10n ** BigInt(decimals);
  return (BigInt(feeMicroUsd) * scale + BigInt(priceMicroUsd) - 1n) / BigInt(priceMicroUsd);
}
