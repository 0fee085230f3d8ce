// Final outcomes of a payment intent, shared by the execution and confirmation workers and operator actions.
// Each runs inside the caller's transaction: status, ledger postings and outbox event commit together.
import type { Chain, ChainAdapter, FailureReason, SignedTransfer } from '../chains/port.js';
import { insertAttempt, markFailed } from '../db/queries/attempts.js';
import { newId } from '../ids.js';
import type { Queryable } from '../db/pool.js';
import { insertEvent, type EventType } from '../db/queries/events.js';
import { changeStatus, type PaymentIntentRow } from '../db/queries/intents.js';
import { paymentPayload } from '../domain/events.js';
import { decimalsOf } from '../ledger/currencies.js';
import { movements } from '../ledger/movements.js';
import { post } from '../ledger/store.js';
import { unitsToNumber, usdcToNumber } from '../money.js';

export const NATIVE_CURRENCY: Record<Chain, 'ETH' | 'SOL'> = { ethereum: 'ETH', solana: 'SOL' };

export async function emitPaymentEvent(
  tx: Queryable,
  intent: PaymentIntentRow,
  type: EventType,
  at: Date,
  extra: Parameters<typeof paymentPayload>[1] = {},
): Promise<void> {
  await insertEvent(tx, {
    merchantId: intent.merchant_id,
    paymentIntentId: intent.id,
    type,
    payload: paymentPayload(
      {
        amount_usd: usdcToNumber(intent.amount_micros),
        selected_chain: intent.selected_chain,
        destination_address: intent.destination_address,
        status: intent.status,
      },
      extra,
    ),
    at,
  });
}

export async function hasDebit(tx: Queryable, intentId: string): Promise<boolean> {
  const { rowCount } = await tx.query("SELECT 1 FROM ledger_transactions WHERE payment_intent_id = $1 AND type = 'debit'", [intentId]);
  return (rowCount ?? 0) > 0;
}

/** Stores a signed transfer as a new attempt of the intent, with the fee estimate of the moment. Nothing is sent. */
export async function persistSignedAttempt(
  tx: Queryable,
  adapter: ChainAdapter,
  intent: PaymentIntentRow,
  signed: SignedTransfer,
  at: Date,
): Promise<string> {
  // The estimate read while signing, when the adapter gives one: asking the node here would hold the nonce lock
  // (taken by signTransfer in this transaction) across an RPC round-trip.
  const fee = signed.feeEstimate ?? (await adapter.estimateFee().catch(() => ({ feeUsd: 0 })));
  const attemptId = newId('att');
  await insertAttempt(tx, {
    id: attemptId,
    payment_intent_id: intent.id,
    chain: intent.selected_chain,
    estimated_fee_usd: fee.feeUsd,
    created_at: at,
    signed,
  });
  return attemptId;
}

/** Records a native fee the chain charged (a reverted transaction still pays one). */
export async function postFee(tx: Queryable, intent: PaymentIntentRow, feeNative: bigint, at: Date): Promise<void> {
  if (feeNative > 0n) {
    await post(tx, movements.fee(intent.selected_chain, NATIVE_CURRENCY[intent.selected_chain], feeNative), {
      paymentIntentId: intent.id,
      at,
    });
  }
}

/** failed: the reservation (wherever it sits now) returns to available, and the merchant hears payment.failed. */
export async function failIntent(tx: Queryable, intent: PaymentIntentRow, reason: FailureReason, at: Date): Promise<void> {
  const from = (await hasDebit(tx, intent.id)) ? 'treasury_in_flight' : 'treasury_reserved';
  intent.status = await changeStatus(tx, intent, 'failed', at, reason);
  await post(tx, movements.release(intent.selected_chain, intent.amount_micros, from), { paymentIntentId: intent.id, at });
  await emitPaymentEvent(tx, intent, 'payment.failed', at, { failure_reason: reason });
}

/**
 * The chain reports the attempt's transaction failed (mined and reverted, or provably unable to land): the attempt
 * fails with the chain's reason, the fee it spent is booked, and the intent fails with its funds released (decision 28).
 */
export async function failOnChain(
  tx: Queryable,
  intent: PaymentIntentRow,
  attemptId: string,
  verdict: { reason: FailureReason; detail: string; feeNative: bigint },
  at: Date,
): Promise<void> {
  await markFailed(tx, attemptId, verdict.reason, verdict.detail, verdict.feeNative);
  await postFee(tx, intent, verdict.feeNative, at);
  await failIntent(tx, intent, verdict.reason, at);
}

/** settled: the in-flight amount leaves the treasury, the actual fee is booked, payment.settled is sent. */
export async function settleIntent(
  tx: Queryable,
  intent: PaymentIntentRow,
  attempt: { tx_id: string },
  feeNative: bigint,
  at: Date,
): Promise<void> {
  intent.status = await changeStatus(tx, intent, 'settled', at);
  await post(tx, movements.settle(intent.selected_chain, intent.amount_micros), { paymentIntentId: intent.id, at });
  await postFee(tx, intent, feeNative, at);
  const currency = NATIVE_CURRENCY[intent.selected_chain];
  await emitPaymentEvent(tx, intent, 'payment.settled', at, {
    tx_id: attempt.tx_id,
    confirmed_at: at.toISOString(),
    actual_fee_native: unitsToNumber(feeNative, decimalsOf(currency)),
    fee_currency: currency,
  });
}
