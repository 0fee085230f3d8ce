// Decimals of every currency the ledger holds.
export const CURRENCY_DECIMALS: Record<string, number> = { USDC: 6, ETH: 18, SOL: 9 };

export function decimalsOf(currency: string): number {
  const decimals = CURRENCY_DECIMALS[currency];
  if (decimals === undefined) throw new RangeError(`unknown currency ${currency}`);
  return decimals;
}
