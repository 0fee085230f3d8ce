// Books inbound transfers, each once: as funding (USDC -> available, native -> treasury_native) or as the refund of the
// settled payout it returns (payouts -> available, payment.refunded to the merchant). Runs in the scanner's
// transaction, a page of transfers at a time: the facts of the whole page are read in one query each, the decisions
// taken in the page's order, the fundings written in one posting and one insert. The unique key (chain, tx id, index)
// refuses a second booking of the same transfer.
import { currencyOf, DEFAULT_TOKEN, tokenOfCurrency } from '../../../domain/token.js';
import type { InboundTransfer } from '../../../chains/port.js';
import type { Queryable } from '../../../db/pool.js';
import { readBookedInbound, readInboundOfIntent, insertInbound, readPaidAddresses, listRefundCandidates, refundAskKey, type NewInboundTransfer } from '../../../db/queries/deposits.js';
import { lockIntents, type PaymentIntentRow } from '../../../db/queries/intents.js';
import type { Chain, NativeCurrency } from '../../../domain/chain.js';
import { classifyInbound, type InboundBooking } from '../../../domain/inbound-match.js';
import { movements } from '../../../ledger/movements.js';
import { postMany } from '../../../ledger/store.js';
import { usdcToNumber } from '../../../money.js';
import { emitPaymentEvent } from '../../payments/outcomes/events.js';

export type BookedAs = { kind: 'already_booked' } | InboundBooking;

/** Books `transfers` (oldest first) once each; what each was booked as, in order. */
export async function bookInbound(
  tx: Queryable,
  chain: Chain,
  nativeCurrency: NativeCurrency,
  transfers: readonly InboundTransfer[],
  at: Date,
): Promise<BookedAs[]> {
  // 1. Load: which are booked already, and for USDC the payouts each could return.
  const key = (t: { txId: string; index: number }) => `${t.txId}:${t.index}`;
  const seen = await readBookedInbound(tx, chain, transfers);
  // Every token's transfer may return a payout of that token (issue 40); native currency only funds gas.
  const usdc = transfers.flatMap((t) => {
    const token = t.currency === 'native' ? null : tokenOfCurrency(t.currency);
    return token === null ? [] : [{ ...t, token }];
  });
  const asks = new Map(usdc.map((t) => [refundAskKey(t.from, t.amountUnits, t.token), { address: t.from, amountMicros: t.amountUnits, token: t.token }]));
  const candidates = await listRefundCandidates(tx, chain, [...asks.values()]);
  const paid = await readPaidAddresses(tx, chain, [...new Set(usdc.map((t) => t.from))]);

  // 2. Decide, in order: a payment an earlier transfer of the page returns is no longer a candidate.
  const refunded = new Set<string>();
  const decided = transfers.map((transfer): BookedAs => {
    if (seen.has(key(transfer))) return { kind: 'already_booked' };
    seen.add(key(transfer));
    if (transfer.currency === 'native') return classifyInbound({ currency: 'native', candidates: [], senderWasPaid: false });
    const token = tokenOfCurrency(transfer.currency) ?? DEFAULT_TOKEN;
    const open = (candidates.get(refundAskKey(transfer.from, transfer.amountUnits, token)) ?? []).filter((id) => !refunded.has(id));
    const booking = classifyInbound({ currency: 'USDC', candidates: open, senderWasPaid: open.length > 0 || paid.has(transfer.from) });
    if (booking.kind === 'refund') refunded.add(booking.paymentIntentId);
    return booking;
  });

  // 3. Persist the refunds one by one (rare), under each intent's row lock: the intent's row lock orders this with an
  // operator attaching another transfer to it (attach.ts); whoever is second sees the first's refund and books as
  // funding. The unique index on payment_intent_id backs this up.
  const rows: NewInboundTransfer[] = [];
  const fundings: { transfer: InboundTransfer; status: Extract<InboundBooking, { kind: 'funding' }>['status'] }[] = [];
  for (const [i, booking] of decided.entries()) {
    const transfer = transfers[i]!;
    if (booking.kind === 'already_booked') continue;
    if (booking.kind === 'funding') {
      fundings.push({ transfer, status: booking.status });
      continue;
    }
    const intent = (await lockIntents(tx, [booking.paymentIntentId])).get(booking.paymentIntentId) ?? null;
    if (!intent || intent.status !== 'settled' || (await readInboundOfIntent(tx, intent.id)) !== null) {
      decided[i] = { kind: 'funding', status: 'unmatched' };
      fundings.push({ transfer, status: 'unmatched' });
      continue;
    }
    const refundId = await bookRefund(tx, intent, { amount: transfer.amountUnits, txId: transfer.txId, from: transfer.from }, at);
    rows.push({ ...identity(chain, nativeCurrency, transfer), matchStatus: 'matched', paymentIntentId: intent.id, fundingTransactionId: null, refundTransactionId: refundId, at });
  }

  // 4. Persist the fundings together.
  const fundingIds = await postMany(
    tx,
    fundings.map(({ transfer }) => ({
      movement:
        transfer.currency === 'native' ? movements.fundNative(chain, nativeCurrency, transfer.amountUnits) : movements.fundUsdc(chain, transfer.amountUnits, transfer.currency),
      context: { at },
    })),
  );
  fundings.forEach(({ transfer, status }, i) =>
    rows.push({ ...identity(chain, nativeCurrency, transfer), matchStatus: status, paymentIntentId: null, fundingTransactionId: fundingIds[i]!, refundTransactionId: null, at }),
  );
  await insertInbound(tx, rows);
  return decided;
}

/**
 * A settled payout's refund: payouts -> available on its chain, and payment.refunded to the merchant, in the caller's
 * transaction (the scanner's automatic match, an operator's attach). Returns the ledger transaction id.
 */
export async function bookRefund(
  tx: Queryable,
  intent: PaymentIntentRow,
  transfer: { amount: bigint; txId: string; from: string },
  at: Date,
): Promise<number> {
  const refundId = (await postMany(tx, [{ movement: movements.refund(intent.selected_chain, transfer.amount, currencyOf(intent.token)), context: { paymentIntentId: intent.id, at } }]))[0]!;
  await emitPaymentEvent(tx, intent, 'payment.refunded', at, {
    refund: { amount_usd: usdcToNumber(transfer.amount), tx_id: transfer.txId, from_address: transfer.from },
  });
  return refundId;
}

function identity(chain: Chain, nativeCurrency: NativeCurrency, transfer: InboundTransfer) {
  return {
    chain,
    txId: transfer.txId,
    index: transfer.index,
    from: transfer.from,
    currency: transfer.currency === 'native' ? nativeCurrency : transfer.currency,
    amount: transfer.amountUnits,
  };
}
