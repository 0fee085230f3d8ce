// Gas (decision 142): whether a treasury's booked native balance is below the operator's low-water mark, and whether
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

/** A USD fee estimate in native units, rounded up: what routing compares with the booked balance when no native estimate exists. */
export function usdToNativeUnits(feeUsd: number, usdPrice: number, decimals: number): bigint {
  if (!(feeUsd > 0) || !(usdPrice > 0)) return 0n;
  // Through micro-dollars, so a float never becomes a bigint of 18 digits directly.
  const feeMicroUsd = BigInt(Math.ceil(feeUsd * 1_000_000));
  const priceMicroUsd = BigInt(Math.max(1, Math.floor(usdPrice * 1_000_000)));
  const scale = 10n ** BigInt(decimals);
  return (feeMicroUsd * scale + priceMicroUsd - 1n) / priceMicroUsd;
}
