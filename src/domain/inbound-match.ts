// How an inbound transfer is booked (decisions 123, 125). Pure: the scanner loads the candidates, this decides.
import { sameAddress } from './addresses.js';
export const INBOUND_MATCH_STATUSES = ['native', 'funding', 'unmatched', 'ambiguous', 'matched', 'attached'] as const;
export type InboundMatchStatus = (typeof INBOUND_MATCH_STATUSES)[number];

/** What the operator looks at: USDC from a past payout's recipient that no payment took automatically. */
export const NEEDS_OPERATOR: readonly InboundMatchStatus[] = ['unmatched', 'ambiguous'];

export type InboundBooking =
  | { kind: 'funding'; status: 'native' | 'funding' | 'unmatched' | 'ambiguous' }
  | { kind: 'refund'; paymentIntentId: string };

/**
 * native currency: gas funding. USDC: the refund of the one settled payout to the sender of exactly this amount, not
 * refunded yet; with no such payout, funding ('unmatched' when the sender was paid before, else plain 'funding');
 * with several, funding too ('ambiguous'): the operator attaches it to the right one.
 */
export function classifyInbound(input: { currency: 'USDC' | 'native'; candidates: readonly string[]; senderWasPaid: boolean }): InboundBooking {
  if (input.currency === 'native') return { kind: 'funding', status: 'native' };
  if (input.candidates.length === 1) return { kind: 'refund', paymentIntentId: input.candidates[0]! };
  if (input.candidates.length > 1) return { kind: 'funding', status: 'ambiguous' };
  return { kind: 'funding', status: input.senderWasPaid ? 'unmatched' : 'funding' };
}

/** Why an operator may not attach this transfer to this payment; null when it may (decision 126). */
export function attachRefusal(input: {
  transfer: { chain: string; currency: string; from: string; amount: bigint; paymentIntentId: string | null };
  /** `currency`: the ledger currency of the token the payout paid (USDC when absent). */
  intent: { chain: string; status: string; destination: string; amountMicros: bigint; currency?: string };
  intentRefundedBy: string | null;
}): string | null {
  const { transfer, intent } = input;
  if (transfer.paymentIntentId !== null) return `the transfer is already booked as the refund of ${transfer.paymentIntentId}`;
  if (input.intentRefundedBy !== null) return `the payment was already refunded by transfer ${input.intentRefundedBy}`;
  if (intent.status !== 'settled') return `the payment is ${intent.status}; only a settled payout can be refunded`;
  if (transfer.chain !== intent.chain) return `the transfer is on ${transfer.chain}, the payout on ${intent.chain}`;
  const paid = intent.currency ?? 'USDC';
  if (transfer.currency !== paid) return `the transfer moved ${transfer.currency}, not ${paid}`;
  const sameSender = sameAddress(intent.chain, transfer.from, intent.destination);
  if (!sameSender) return `the transfer came from ${transfer.from}, not from the payout's destination ${intent.destination}`;
  if (transfer.amount > intent.amountMicros) return 'the transfer is larger than the payout';
  return null;
}
