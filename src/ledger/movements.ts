// Pure double-entry movements. Each returns postings that sum to zero per currency; the store refuses anything else.
import type { Chain } from '../domain/chain.js';
import type { TokenCurrency } from '../domain/token.js';

export type AccountKind =
  | 'treasury_available' // a token the treasury can spend
  | 'treasury_reserved' // a token promised to payment intents not yet broadcast
  | 'treasury_in_flight' // a token in signed/broadcast transfers not yet final (still in the wallet on chain)
  | 'payouts' // outside: what recipients received
  | 'withdrawals' // outside: what the operator withdrew from the treasury (decision 121)
  | 'funding' // outside: what the operator deposited
  | 'treasury_native' // ETH or SOL for fees
  | 'network_fees'; // outside: fees paid to the chain

export type LedgerTransactionType = 'funding' | 'reserve' | 'debit' | 'settle' | 'fee' | 'release' | 'refund';
/** The entry types the API shows (spec). `funding` and `settle` are internal bookkeeping, see docs/decisions.md. */
export const PUBLIC_ENTRY_TYPES: readonly LedgerTransactionType[] = ['reserve', 'debit', 'fee', 'release', 'refund'];

export interface Posting {
  kind: AccountKind;
  currency: string;
  amount: bigint; // signed; never zero
}

export interface Movement {
  type: LedgerTransactionType;
  chain: Chain;
  postings: Posting[];
}

function pair(from: AccountKind, to: AccountKind, currency: string, amount: bigint): Posting[] {
  if (amount <= 0n) throw new RangeError(`ledger amount must be positive, got ${amount}`);
  return [
    { kind: from, currency, amount: -amount },
    { kind: to, currency, amount },
  ];
}

export const movements = {
  /** A token's funding (the treasury's opening, a deposit), in `currency` (a TokenCurrency: every caller names it, so no token's movement is booked as USDC by omission). */
  fundUsdc: (chain: Chain, micros: bigint, currency: TokenCurrency): Movement => ({
    type: 'funding',
    chain,
    postings: pair('funding', 'treasury_available', currency, micros),
  }),
  fundNative: (chain: Chain, currency: string, units: bigint): Movement => ({
    type: 'funding',
    chain,
    postings: pair('funding', 'treasury_native', currency, units),
  }),
  reserve: (chain: Chain, micros: bigint, currency: TokenCurrency): Movement => ({
    type: 'reserve',
    chain,
    postings: pair('treasury_available', 'treasury_reserved', currency, micros),
  }),
  debit: (chain: Chain, micros: bigint, currency: TokenCurrency): Movement => ({
    type: 'debit',
    chain,
    postings: pair('treasury_reserved', 'treasury_in_flight', currency, micros),
  }),
  /** A final transfer leaves the treasury: to a recipient (payouts) or to the operator's withdrawal address. */
  settle: (chain: Chain, micros: bigint, to: 'payouts' | 'withdrawals', currency: TokenCurrency): Movement => ({
    type: 'settle',
    chain,
    postings: pair('treasury_in_flight', to, currency, micros),
  }),
  fee: (chain: Chain, currency: string, units: bigint): Movement => ({
    type: 'fee',
    chain,
    postings: pair('treasury_native', 'network_fees', currency, units),
  }),
  /** Returns reserved funds to available, from wherever they sit (before or after the debit). */
  release: (chain: Chain, micros: bigint, from: 'treasury_reserved' | 'treasury_in_flight', currency: TokenCurrency): Movement => ({
    type: 'release',
    chain,
    postings: pair(from, 'treasury_available', currency, micros),
  }),
  /** Takes a deposit booked as funding back out of available, when an operator re-classifies it as a refund. */
  reverseFunding: (chain: Chain, micros: bigint, currency: TokenCurrency): Movement => ({
    type: 'funding',
    chain,
    postings: pair('treasury_available', 'funding', currency, micros),
  }),
  refund: (chain: Chain, micros: bigint, currency: TokenCurrency): Movement => ({
    type: 'refund',
    chain,
    postings: pair('payouts', 'treasury_available', currency, micros),
  }),
};

/** Accounts whose balance may never go below zero: the treasury cannot spend what it does not hold. */
export const NON_NEGATIVE: readonly AccountKind[] = ['treasury_available', 'treasury_reserved', 'treasury_in_flight'];

export function sumByCurrency(postings: readonly Posting[]): Map<string, bigint> {
  const sums = new Map<string, bigint>();
  for (const p of postings) sums.set(p.currency, (sums.get(p.currency) ?? 0n) + p.amount);
  return sums;
}

export function isBalanced(postings: readonly Posting[]): boolean {
  return postings.length >= 2 && postings.every((p) => p.amount !== 0n) && [...sumByCurrency(postings).values()].every((s) => s === 0n);
}
