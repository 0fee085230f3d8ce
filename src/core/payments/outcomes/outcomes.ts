// Final outcomes of a payment intent, shared by execution, confirmation, abandoned jobs and operator actions. Each
// runs inside the caller's transaction: status, attempt, ledger postings and outbox event commit together.
import type PgBoss from 'pg-boss';
import type { Queryable } from '../../../db/pool.js';
import { markConfirmed, markFailed } from '../../../db/queries/attempts.js';
import { countTransitions, type PaymentIntentRow } from '../../../db/queries/intents.js';
import type { StatusChange } from '../../../db/queries/transitions.js';
import { nativeCurrencyOf, type FailureReason, type NativeCurrencies } from '../../../domain/chain.js';
import { attemptOf } from '../../../domain/execution-retry.js';
import { enqueueExecutions } from '../../../jobs/queue.js';
import { decimalsOf } from '../../../ledger/currencies.js';
import { movements, type Movement } from '../../../ledger/movements.js';
import { intentsWithDebit, postMany, type PostingContext } from '../../../ledger/store.js';
import { unitsToNumber } from '../../../money.js';
import { moveAndTell, paymentEventOf } from './events.js';
import { applyStatusChanges } from './status-changes.js';
import { currencyOf } from '../../../domain/token.js';

/** The movement booking a native fee the chain charged; none for a transfer that paid nothing. */
function feeMovements(currencies: NativeCurrencies, intent: PaymentIntentRow, feeNative: bigint): Movement[] {
  return feeNative > 0n ? [movements.fee(intent.selected_chain, nativeCurrencyOf(currencies, intent.selected_chain), feeNative)] : [];
}

/** Records a native fee the chain charged (a reverted transaction still pays one). */
/** `currencies`: what each chain charges its fees in (config.chains). */
export async function postFee(tx: Queryable, currencies: NativeCurrencies, intent: PaymentIntentRow, feeNative: bigint, at: Date): Promise<void> {
  await postMany(tx, feeMovements(currencies, intent, feeNative).map((movement) => ({ movement, context: { paymentIntentId: intent.id, at } })));
}

/** Returns the reservation to available from wherever it sits: reserved before the debit, in flight after it. */
export async function releaseReservation(tx: Queryable, intent: PaymentIntentRow, at: Date): Promise<void> {
  const from = (await intentsWithDebit(tx, [intent.id])).has(intent.id) ? 'treasury_in_flight' : 'treasury_reserved';
  await postMany(tx, [{ movement: movements.release(intent.selected_chain, intent.amount_micros, from, currencyOf(intent.token)), context: { paymentIntentId: intent.id, at } }]);
}

/** failed: the reservation returns to available, and the merchant hears payment.failed. */
export async function failIntent(tx: Queryable, intent: PaymentIntentRow, reason: FailureReason, at: Date): Promise<void> {
  await moveAndTell(tx, [{ intent, to: 'failed', type: 'payment.failed', extra: { failure_reason: reason }, reason }], at);
  await releaseReservation(tx, intent, at);
}

/**
 * The chain reports the attempt's transaction failed (mined and reverted, or provably unable to land): the attempt
 * fails with the chain's reason and the fee it spent (its share, for an on-chain batch) is booked. Then the intent fails
 * with its funds released (decision 61); or, with `retryOn` (an on-chain batch: not this payment's failure,
 * decision 176), it goes back to retrying and a job on that queue runs it again now; its failed batch attempt has it
 * prepared in a transaction of its own from then on, so a payment the chain refuses fails alone and the others go out. Its funds stay in flight: the next transfer moves them.
 */
export async function failOnChain(
  tx: Queryable,
  currencies: NativeCurrencies,
  intent: PaymentIntentRow,
  attemptId: string,
  verdict: { reason: FailureReason; detail: string; feeNative: bigint },
  at: Date,
  options: { retryOn?: PgBoss } = {},
): Promise<void> {
  await markFailed(tx, attemptId, verdict.reason, verdict.detail, verdict.feeNative);
  await postFee(tx, currencies, intent, verdict.feeNative, at);
  if (!options.retryOn) return failIntent(tx, intent, verdict.reason, at);
  await moveAndTell(tx, [{ intent, to: 'retrying', reason: verdict.reason }], at);
  // The attempt number follows the intent's history (src/domain/execution-retry.ts): one more than its moves to retrying.
  const attempt = attemptOf(await countTransitions(tx, intent.id, 'retrying'));
  await enqueueExecutions(options.retryOn, tx, [{ payment_intent_id: intent.id, attempt }]);
}

/**
 * An operator's cancel on chain is final (decision 63): the stuck transfer's nonce is used by a transaction that moved
 * nothing, so the transfer can never land. The cancel is confirmed with the gas it spent, booked as a fee like any
 * other, and the intent fails (`operator_failed`: the operator decided it) with its funds released.
 */
export async function failByCancel(tx: Queryable, currencies: NativeCurrencies, intent: PaymentIntentRow, cancelAttemptId: string, feeNative: bigint, at: Date): Promise<void> {
  await markConfirmed(tx, [{ attemptId: cancelAttemptId, feeNative }], at);
  await postFee(tx, currencies, intent, feeNative, at);
  await moveAndTell(tx, [{ intent, to: 'failed', type: 'payment.failed', extra: { failure_reason: 'operator_failed' }, reason: 'cancelled_on_chain' }], at);
  await releaseReservation(tx, intent, at);
}

/** What settling an intent writes: its change to settled telling the merchant, and the posting of the amount and fee. */
export function settlementOf(
  currencies: NativeCurrencies,
  intent: PaymentIntentRow,
  attempt: { tx_id: string },
  feeNative: bigint,
  at: Date,
): { change: StatusChange; entries: { movement: Movement; context: PostingContext }[] } {
  const currency = nativeCurrencyOf(currencies, intent.selected_chain);
  const event = paymentEventOf({ ...intent, status: 'settled' }, 'payment.settled', at, {
    tx_id: attempt.tx_id,
    confirmed_at: at.toISOString(),
    actual_fee_native: unitsToNumber(feeNative, decimalsOf(intent.selected_chain, currency)),
    fee_currency: currency,
  });
  // The amount leaving and the fee, in one posting.
  const to = intent.kind === 'withdrawal' ? 'withdrawals' : 'payouts';
  const context = { paymentIntentId: intent.id, at };
  const entries = [movements.settle(intent.selected_chain, intent.amount_micros, to, currencyOf(intent.token)), ...feeMovements(currencies, intent, feeNative)].map((movement) => ({ movement, context }));
  return { change: { intent, to: 'settled', event }, entries };
}

/** settled: the in-flight amount leaves the treasury, the actual fee is booked, payment.settled is sent. */
export async function settleIntent(
  tx: Queryable,
  currencies: NativeCurrencies,
  intent: PaymentIntentRow,
  attempt: { tx_id: string },
  feeNative: bigint,
  at: Date,
): Promise<void> {
  const { change, entries } = settlementOf(currencies, intent, attempt, feeNative, at);
  await applyStatusChanges(tx, [change], at);
  intent.status = 'settled';
  await postMany(tx, entries);
}
