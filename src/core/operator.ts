// Operator actions on a payment intent in manual_review (Circle/Fireblocks-style resolution of stuck transfers):
//  settled  - an outside check found the transfer final: settle it (with the chain's fee when the chain knows it)
//  failed   - the transfer will not land: fail it and release the funds
//  replace  - re-sign the same transfer with a higher fee and the same nonce (Ethereum), watch it again
import type { ChainAdapter, SignedTransfer, TxStatus } from '../chains/port.js';
import type { Queryable } from '../db/pool.js';
import { AppError } from '../domain/errors.js';
import { withTransaction } from '../db/pool.js';
import { liveAttempt, markBroadcasted, markConfirmed, markFailed, signedOf } from '../db/queries/attempts.js';
import { changeStatus, findIntent } from '../db/queries/intents.js';
import { emitPaymentEvent, failIntent, hasDebit, persistSignedAttempt, postFee, settleIntent } from '../workers/outcomes.js';
import { movements } from '../ledger/movements.js';
import { post } from '../ledger/store.js';
import type { AppContext } from './context.js';

export type Resolution = 'settled' | 'failed' | 'replace';

export interface ResolutionResult {
  payment_intent_id: string;
  status: string;
  tx_id: string | null;
}

/**
 * What the chain says, against what the operator claims. `failed` while the transfer is pending, included or final
 * would release funds that are (or may be) paid out; `settled` while the chain reports the transfer failed or
 * expired would book a payout that never happened. Either needs `force` (the operator knows better than our node).
 */
function contradiction(resolution: Resolution, { status, reached }: ChainAnswer): string | null {
  if (resolution === 'failed') {
    if (!reached) return 'the chain could not be reached to check that the transfer cannot land';
    if (status && ['pending', 'included', 'final'].includes(status.state)) {
      return `the chain reports the transfer ${status.state}; it may be paid out`;
    }
  }
  if (resolution === 'settled' && status && (status.state === 'failed' || status.state === 'expired')) {
    return `the chain reports the transfer ${status.state}; it was not paid out`;
  }
  return null;
}

interface ChainAnswer {
  status: TxStatus | null;
  /** False when the node could not be asked: nothing is known. */
  reached: boolean;
}

async function askChain(adapter: ChainAdapter, signed: SignedTransfer): Promise<ChainAnswer> {
  try {
    return { status: await adapter.getStatus(signed), reached: true };
  } catch {
    return { status: null, reached: false };
  }
}

export async function resolveManualReview(
  ctx: AppContext,
  intentId: string,
  resolution: Resolution,
  options: { force?: boolean } = {},
): Promise<ResolutionResult> {
  const result = await withTransaction(ctx.pool, async (tx): Promise<ResolutionResult & { send?: SignedTransfer }> => {
    const now = ctx.clock.now();
    const intent = await findIntent(tx, intentId, { forUpdate: true });
    if (!intent) throw new AppError('PAYMENT_INTENT_NOT_FOUND', `payment intent ${intentId} was not found`);
    if (intent.status !== 'manual_review') {
      throw new AppError('INVALID_STATE', `payment intent ${intentId} is ${intent.status}, not manual_review`);
    }
    const attempt = await liveAttempt(tx, intent.id, { forUpdate: true });
    const adapter = ctx.adapters[intent.selected_chain];
    const answer: ChainAnswer = attempt ? await askChain(adapter, signedOf(attempt)) : { status: null, reached: true };
    const chainStatus = answer.status;
    // A fee-bumped predecessor shares the nonce and may be the one that lands.
    const replaced = resolution === 'failed' ? await replacedAnswers(tx, adapter, intent.id) : [];
    const conflict = [answer, ...replaced].map((a) => contradiction(resolution, a)).find((c) => c !== null) ?? null;
    if (conflict && !options.force) {
      throw new AppError('INVALID_STATE', `refusing to mark ${intentId} ${resolution}: ${conflict} (force to override)`);
    }

    if (resolution === 'settled') {
      if (!attempt) throw new AppError('INVALID_STATE', `payment intent ${intentId} has no transfer to settle`);
      const fee = chainStatus?.state === 'final' ? chainStatus.feeNative : 0n;
      await markConfirmed(tx, attempt.id, fee, now);
      await settleIntent(tx, intent, attempt, fee, now);
      return { payment_intent_id: intent.id, status: intent.status, tx_id: attempt.tx_id };
    }

    if (resolution === 'failed') {
      if (attempt) {
        const fee = chainStatus?.state === 'failed' ? chainStatus.feeNative : 0n;
        await markFailed(tx, attempt.id, 'operator_failed', 'failed by an operator from manual review', fee);
        await postFee(tx, intent, fee, now);
      }
      await failIntent(tx, intent, 'operator_failed', now);
      return { payment_intent_id: intent.id, status: intent.status, tx_id: attempt?.tx_id ?? null };
    }

    if (!adapter.replaceWithHigherFee) {
      throw new AppError('INVALID_STATE', `${intent.selected_chain} has no fee replacement; resolve as settled or failed`);
    }
    if (!attempt) throw new AppError('INVALID_STATE', `payment intent ${intentId} has no transfer to replace`);
    const replacement = await adapter.replaceWithHigherFee(
      tx,
      { paymentIntentId: intent.id, to: intent.destination_address, amountMicros: intent.amount_micros },
      signedOf(attempt),
    );
    // Both transactions share a nonce: whichever lands, only one transfer happens. The old one is kept as
    // 'replaced' for the record; the confirmation worker watches the new one.
    await markFailed(tx, attempt.id, 'stuck', `replaced by ${replacement.txId}`, null, 'replaced');
    const attemptId = await persistSignedAttempt(tx, adapter, intent, replacement, now);
    // Persisted before it is sent; if the send below fails, the confirmation worker re-sends the same bytes.
    await markBroadcasted(tx, attemptId, now);
    intent.status = await changeStatus(tx, intent, 'broadcasted', now, 'fee_bump');
    await emitPaymentEvent(tx, intent, 'payment.broadcasted', now, { tx_id: replacement.txId });
    return { payment_intent_id: intent.id, status: intent.status, tx_id: replacement.txId, send: replacement };
  });
  const { send, ...outcome } = result;
  if (send) {
    await ctx.adapters[(await findIntent(ctx.pool, intentId))!.selected_chain]
      .broadcast(send)
      .catch((error: unknown) => ctx.log.warn({ err: error, payment_intent_id: intentId }, 'replacement send failed; will be re-sent'));
  }
  return outcome;
}

async function replacedAnswers(tx: Queryable, adapter: ChainAdapter, intentId: string): Promise<ChainAnswer[]> {
  const { rows } = await tx.query<{ tx_id: string; signed_tx: string; chain_meta: SignedTransfer['meta'] }>(
    "SELECT tx_id, signed_tx, chain_meta FROM payment_attempts WHERE payment_intent_id = $1 AND status = 'replaced'",
    [intentId],
  );
  return Promise.all(rows.map((row) => askChain(adapter, signedOf(row))));
}

/**
 * Cancels a payment that has not reached the chain: in route_selected, or retrying with no transaction that could
 * still land. The reservation is released. The spec has no cancellation event, so none is sent; the status shows
 * on read.
 */
export async function cancelPayment(ctx: AppContext, intentId: string): Promise<ResolutionResult> {
  return withTransaction(ctx.pool, async (tx) => {
    const now = ctx.clock.now();
    const intent = await findIntent(tx, intentId, { forUpdate: true });
    if (!intent) throw new AppError('PAYMENT_INTENT_NOT_FOUND', `payment intent ${intentId} was not found`);
    if (intent.status !== 'route_selected' && intent.status !== 'retrying') {
      throw new AppError('INVALID_STATE', `payment intent ${intentId} is ${intent.status}; only route_selected or retrying payments can be cancelled`);
    }
    const live = await liveAttempt(tx, intent.id, { forUpdate: true });
    if (live) {
      const status = await ctx.adapters[intent.selected_chain].getStatus(signedOf(live)).catch(() => null);
      if (status?.state !== 'expired' && status?.state !== 'failed') {
        throw new AppError('INVALID_STATE', `payment intent ${intentId} has a transaction that may still land (${live.tx_id})`);
      }
      await markFailed(tx, live.id, 'operator_failed', 'payment cancelled by an operator');
    }
    intent.status = await changeStatus(tx, intent, 'cancelled', now, 'operator');
    const from = (await hasDebit(tx, intent.id)) ? 'treasury_in_flight' : 'treasury_reserved';
    await post(tx, movements.release(intent.selected_chain, intent.amount_micros, from), { paymentIntentId: intent.id, at: now });
    return { payment_intent_id: intent.id, status: intent.status, tx_id: live?.tx_id ?? null };
  });
}
