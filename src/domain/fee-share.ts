// A chain transaction that pays several payments (an on-chain batch) charges one fee; each payment books its share.
// Pure. The shares are even, and the units left over go one each to the first payments, so that they add up to exactly
// what the chain charged (decision 172): every payment of a batch costs its transaction about the same (one transfer
// call each), and a share depends only on the fee, the number of payments and the payment's place, so each attempt
// computes its own without reading the others.

/** Where a payment stands in the transaction that pays it: `index` of `payments` (a transaction of its own: 0 of 1). */
export interface TransactionShare {
  payments: number;
  index: number;
}

/** A stored attempt's place in its transaction (its columns), which its share of the transaction's fee follows. */
export function shareOf(attempt: { tx_payments: number; tx_payment_index: number }): TransactionShare {
  return { payments: attempt.tx_payments, index: attempt.tx_payment_index };
}

export const ALONE: TransactionShare = { payments: 1, index: 0 };

/** The part of `feeNative` that payment `share.index` of the `share.payments` a transaction pays books. */
export function feeShare(feeNative: bigint, share: TransactionShare): bigint {
  const { payments, index } = share;
  if (!Number.isInteger(payments) || payments < 1 || !Number.isInteger(index) || index < 0 || index >= payments) {
    throw new RangeError(`no share ${index} of a transaction paying ${payments} payments`);
  }
  const n = BigInt(payments);
  return feeNative / n + (BigInt(index) < feeNative % n ? 1n : 0n);
}
