// Books one inbound transfer, once: as funding (USDC -> available, native -> treasury_native) or as the refund of the
// settled payout it returns (payouts -> available, payment.refunded to the merchant). Runs in the scanner's
// transaction; the unique key (chain, tx id, index) refuses a second booking of the same transfer.
import type { InboundTransfer } from '../../chains/port.js';
import type { Queryable } from '../../db/pool.js';
import { findInboundOfIntent, insertInbound, isInboundBooked, refundCandidates, wasPaidTo } from '../../db/queries/deposits.js';
import { findIntent, type PaymentIntentRow } from '../../db/queries/intents.js';
import type { Chain, NativeCurrency } from '../../domain/chain.js';
import { classifyInbound, type InboundBooking } from '../../domain/inbound-match.js';
import { movements } from '../../ledger/movements.js';
import { post } from '../../ledger/store.js';
import { usdcToNumber } from '../../money.js';
import { emitPaymentEvent } from '../lifecycle/events.js';

export type BookedAs = { kind: 'already_booked' } | InboundBooking;

export async function bookInbound(
  tx: Queryable,
  chain: Chain,
  nativeCurrency: NativeCurrency,
  transfer: InboundTransfer,
  at: Date,
): Promise<BookedAs> {
  if (await isInboundBooked(tx, chain, transfer.txId, transfer.index)) return { kind: 'already_booked' };
  let booking = await decide(tx, chain, transfer);
  if (booking.kind === 'refund') {
    // The intent's row lock orders this with an operator attaching another transfer to it (attach.ts): whoever is
    // second sees the first's refund and books as funding. The unique index on payment_intent_id backs this up.
    const intent = await findIntent(tx, booking.paymentIntentId, { forUpdate: true });
    if (!intent || intent.status !== 'settled' || (await findInboundOfIntent(tx, intent.id)) !== null) {
      booking = { kind: 'funding', status: 'unmatched' };
    } else {
      const refundId = await bookRefund(tx, intent, { amount: transfer.amountUnits, txId: transfer.txId, from: transfer.from }, at);
      await insertInbound(tx, {
        ...identity(chain, nativeCurrency, transfer),
        matchStatus: 'matched',
        paymentIntentId: intent.id,
        fundingTransactionId: null,
        refundTransactionId: refundId,
        at,
      });
      return booking;
    }
  }
  const movement =
    transfer.currency === 'USDC' ? movements.fundUsdc(chain, transfer.amountUnits) : movements.fundNative(chain, nativeCurrency, transfer.amountUnits);
  const fundingId = await post(tx, movement, { at });
  await insertInbound(tx, {
    ...identity(chain, nativeCurrency, transfer),
    matchStatus: booking.status,
    paymentIntentId: null,
    fundingTransactionId: fundingId,
    refundTransactionId: null,
    at,
  });
  return booking;
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
  const refundId = await post(tx, movements.refund(intent.selected_chain, transfer.amount), { paymentIntentId: intent.id, at });
  await emitPaymentEvent(tx, intent, 'payment.refunded', at, {
    refund: { amount_usd: usdcToNumber(transfer.amount), tx_id: transfer.txId, from_address: transfer.from },
  });
  return refundId;
}

async function decide(tx: Queryable, chain: Chain, transfer: InboundTransfer): Promise<InboundBooking> {
  if (transfer.currency === 'native') return classifyInbound({ currency: 'native', candidates: [], senderWasPaid: false });
  const candidates = await refundCandidates(tx, chain, transfer.from, transfer.amountUnits);
  const senderWasPaid = candidates.length > 0 || (await wasPaidTo(tx, chain, transfer.from));
  return classifyInbound({ currency: 'USDC', candidates, senderWasPaid });
}

function identity(chain: Chain, nativeCurrency: NativeCurrency, transfer: InboundTransfer) {
  return {
    chain,
    txId: transfer.txId,
    index: transfer.index,
    from: transfer.from,
    currency: transfer.currency === 'USDC' ? 'USDC' : nativeCurrency,
    amount: transfer.amountUnits,
  };
}
