// Operator actions on a payment intent in manual_review (Circle/Fireblocks-style resolution of stuck transfers):
//  settled  - an outside check found the transfer final: settle it (with the chain's fee when the chain knows it)
//  failed   - the transfer will not land: fail it and release the funds
//  replace  - re-sign the same transfer with a higher fee and the same nonce (Ethereum), watch it again
//  retry    - nothing is on chain (an abandoned execution, decision 100): one more execution attempt
// Load, ask the chain (and prepare a replacement) without locks, then lock, re-check, decide and persist.
import type { PreparedTransfer, SignedTransfer } from '../../chains/port.js';
import { withTransaction } from '../../db/pool.js';
import { liveAttempt, markBroadcasted, markConfirmed, markFailed, replacedAttempts, signedOf, type AttemptRow } from '../../db/queries/attempts.js';
import { changeStatus, countTransitions, findIntent } from '../../db/queries/intents.js';
import { AppError } from '../../domain/errors.js';
import type { Resolution } from '../../domain/operator-actions.js';
import { hasReachedChain, transferVerdict, type TransferVerdict } from '../../domain/transfer-verdict.js';
import { enqueueExecution } from '../../jobs/queue.js';
import { CHANGED, MAX_ROUNDS, type LifecycleDeps } from './deps.js';
import { moveAndTell } from './events.js';
import { failIntent, postFee, settleIntent } from './outcomes.js';
import { signAttempt, transferRequestOf } from './sign.js';

export type { Resolution };

export interface ResolutionResult {
  payment_intent_id: string;
  status: string;
  tx_id: string | null;
}

/**
 * What the chain says, against what the operator claims. Pure. `failed` while a transfer is pending, included or
 * final would release funds that are (or may be) paid out, and so would `failed` when the chain could not be asked;
 * `settled` while the chain reports the transfer can never land would book a payout that never happened. Either
 * needs `force` (the operator knows better than our node).
 */
export function contradiction(resolution: Resolution, verdict: TransferVerdict): string | null {
  if (resolution === 'failed') {
    if (verdict.kind === 'unknown' && !verdict.reachable) return 'the chain could not be reached to check that the transfer cannot land';
    if (hasReachedChain(verdict)) {
      return `the chain reports the transfer ${verdict.kind === 'final' ? 'final' : verdict.kind}; it may be paid out`;
    }
  }
  if (resolution === 'settled' && verdict.kind === 'cannot_land') {
    return `the chain reports the transfer ${verdict.onChain ? 'failed' : 'expired'}; it was not paid out`;
  }
  return null;
}

async function ask(deps: LifecycleDeps, attempt: AttemptRow): Promise<TransferVerdict> {
  const status = await deps.adapters[attempt.chain].getStatus(signedOf(attempt)).catch(() => null);
  return transferVerdict(status, { chain: attempt.chain });
}

export async function resolveManualReview(
  deps: LifecycleDeps,
  intentId: string,
  resolution: Resolution,
  options: { force?: boolean } = {},
): Promise<ResolutionResult> {
  for (let round = 1; round <= MAX_ROUNDS; round++) {
    // 1. Load, without locks.
    const seen = await findIntent(deps.pool, intentId);
    if (!seen) throw new AppError('PAYMENT_INTENT_NOT_FOUND', `payment intent ${intentId} was not found`);
    if (seen.status !== 'manual_review') {
      throw new AppError('INVALID_STATE', `payment intent ${intentId} is ${seen.status}, not manual_review`);
    }
    const seenLive = await liveAttempt(deps.pool, seen.id);
    // A fee-bumped predecessor shares the nonce and may be the one that lands.
    const seenReplaced = resolution === 'failed' ? await replacedAttempts(deps.pool, seen.id) : [];
    const adapter = deps.adapters[seen.selected_chain];

    // 2. Ask the chain; prepare a replacement. No lock is held.
    const verdict: TransferVerdict = seenLive ? await ask(deps, seenLive) : { kind: 'unknown', reachable: true };
    const others = await Promise.all(seenReplaced.map((attempt) => ask(deps, attempt)));
    let prepared: PreparedTransfer | null = null;
    if (resolution === 'retry' && seenLive) {
      throw new AppError('INVALID_STATE', `payment intent ${intentId} has a transfer that may still land; resolve it as settled, failed or replace`);
    }
    if (resolution === 'replace') {
      if (!adapter.prepareReplacement) {
        throw new AppError('INVALID_STATE', `${seen.selected_chain} has no fee replacement; resolve as settled or failed`);
      }
      if (!seenLive) throw new AppError('INVALID_STATE', `payment intent ${intentId} has no transfer to replace`);
      prepared = await adapter.prepareReplacement(transferRequestOf(seen), signedOf(seenLive));
    }

    // 3. Lock, re-check, decide, persist.
    const result = await withTransaction(deps.pool, async (tx): Promise<(ResolutionResult & { send?: SignedTransfer }) | typeof CHANGED> => {
      const now = deps.clock.now();
      const intent = await findIntent(tx, intentId, { forUpdate: true });
      if (!intent || intent.status !== 'manual_review') return CHANGED;
      const attempt = await liveAttempt(tx, intent.id, { forUpdate: true });
      const replaced = resolution === 'failed' ? await replacedAttempts(tx, intent.id) : [];
      if ((attempt?.id ?? null) !== (seenLive?.id ?? null) || replaced.map((a) => a.id).join() !== seenReplaced.map((a) => a.id).join()) {
        return CHANGED;
      }
      const conflict = [verdict, ...others].map((v) => contradiction(resolution, v)).find((c) => c !== null) ?? null;
      if (conflict && !options.force) {
        throw new AppError('INVALID_STATE', `refusing to mark ${intentId} ${resolution}: ${conflict} (force to override)`);
      }

      if (resolution === 'settled') {
        if (!attempt) throw new AppError('INVALID_STATE', `payment intent ${intentId} has no transfer to settle`);
        const fee = verdict.kind === 'final' ? verdict.feeNative : 0n;
        await markConfirmed(tx, attempt.id, fee, now);
        await settleIntent(tx, intent, attempt, fee, now);
        return { payment_intent_id: intent.id, status: intent.status, tx_id: attempt.tx_id };
      }

      if (resolution === 'retry') {
        if (attempt) return CHANGED; // a transfer appeared meanwhile: the next round refuses
        intent.status = await changeStatus(tx, intent, 'retrying', now, 'operator_retry');
        // The attempt number follows the intent's history (execute.ts): this run is the next one, and the last.
        const next = 1 + (await countTransitions(tx, intent.id, 'retrying'));
        await enqueueExecution(deps.boss, tx, { payment_intent_id: intent.id, attempt: next });
        return { payment_intent_id: intent.id, status: intent.status, tx_id: null };
      }

      if (resolution === 'failed') {
        if (attempt) {
          const fee = verdict.kind === 'cannot_land' ? verdict.feeNative : 0n;
          await markFailed(tx, attempt.id, 'operator_failed', 'failed by an operator from manual review', fee);
          await postFee(tx, intent, fee, now);
        }
        await failIntent(tx, intent, 'operator_failed', now);
        return { payment_intent_id: intent.id, status: intent.status, tx_id: attempt?.tx_id ?? null };
      }

      // Both transactions share a nonce: whichever lands, only one transfer happens. The old one is kept as
      // 'replaced' for the record; the confirmation worker watches the new one.
      const { attemptId, signed } = await signAttempt(tx, adapter, intent, prepared!, now);
      await markFailed(tx, attempt!.id, 'stuck', `replaced by ${signed.txId}`, null, 'replaced');
      // Persisted before it is sent; if the send below fails, the confirmation worker re-sends the same bytes.
      await markBroadcasted(tx, attemptId, now);
      await moveAndTell(tx, intent, 'broadcasted', 'payment.broadcasted', now, { tx_id: signed.txId }, 'fee_bump');
      return { payment_intent_id: intent.id, status: intent.status, tx_id: signed.txId, send: signed };
    });
    if (result === CHANGED) continue;
    const { send, ...outcome } = result;
    if (send) {
      await adapter
        .broadcast(send)
        .catch((error: unknown) => deps.log.warn({ err: error, payment_intent_id: intentId }, 'replacement send failed; will be re-sent'));
    }
    return outcome;
  }
  throw new AppError('INVALID_STATE', `payment intent ${intentId} changed while it was being resolved; try again`);
}
