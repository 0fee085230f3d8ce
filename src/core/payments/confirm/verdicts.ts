// The verdicts of a batch of open attempts, written in one transaction. The intents and attempts no one else holds are
// locked (SKIP LOCKED: a round never waits on, or deadlocks with, an execution run or an operator; the others are left
// for the next round), each is re-checked and decided under its lock (src/domain/confirmation.ts), and the common
// writes (settlements, inclusions, status changes) are made for all of them in a fixed number of statements; a
// failure, a final cancel or a stuck transfer writes its own rows in the same transaction.
import type { ItemOutcome } from '../../../db/group-commit.js';
import { lockAttemptsIfFree, markConfirmed, markFailed, markIncluded, type AttemptRow, type OpenAttempt } from '../../../db/queries/attempts.js';
import { lockIntents } from '../../../db/queries/intents.js';
import type { StatusChange } from '../../../db/queries/transitions.js';
import type { FailureReason } from '../../../domain/chain.js';
import { decideConfirmation, WATCHED, type ConfirmationAction } from '../../../domain/confirmation.js';
import type { PaymentStatus } from '../../../domain/payment-intent.js';
import type { TransferVerdict } from '../../../domain/transfer-verdict.js';
import { postMany } from '../../../ledger/store.js';
import { lockedStep } from '../locked-step.js';
import { moveAndTell } from '../outcomes/events.js';
import { failByCancel, failOnChain, postFee, settleIntent, settlementOf } from '../outcomes/outcomes.js';
import { applyStatusChanges } from '../outcomes/status-changes.js';
import type { Sibling } from './chain-calls.js';
import type { ConfirmationDeps } from './round.js';

/** An open attempt, what its chain said about it, and about the transfers it replaced when it can never land. */
export interface Verdict {
  attempt: OpenAttempt;
  verdict: TransferVerdict;
  sibling: Sibling;
}

/** What writing a verdict did, for the round's counts, timings and logs once the transaction has committed. */
export interface Applied {
  /** null: the attempt was not this round's to handle; 'later': another attempt of its payment was written in this batch. */
  action: ConfirmationAction['kind'] | null | 'later';
  settlement?: { createdAt: Date; at: Date; finalAt: Date | undefined };
  /** The replaced transfer that settled the payment. */
  settledBy?: string;
  reason?: FailureReason;
}

/** What the chain's verdict means for an attempt of an intent in `intentStatus` (decideConfirmation, pure). */
export function decide(deps: ConfirmationDeps, intentStatus: PaymentStatus, attempt: AttemptRow, verdict: TransferVerdict, now: Date): ConfirmationAction {
  const broadcastAt = attempt.broadcast_at ?? attempt.created_at;
  return decideConfirmation({
    intentStatus,
    purpose: attempt.purpose,
    txPayments: attempt.tx_payments,
    verdict,
    broadcastAt,
    now,
    stuckAfterSeconds: deps.config.stuckAfterSeconds,
  });
}

export async function applyVerdicts(deps: ConfirmationDeps, items: readonly Verdict[]): Promise<ItemOutcome<Applied>[]> {
  return lockedStep(deps, items, {
    async lock(tx, batch) {
      const intents = await lockIntents(tx, batch.map((i) => i.attempt.payment_intent_id), { skipLocked: true });
      const attempts = await lockAttemptsIfFree(
        tx,
        batch.filter((i) => intents.has(i.attempt.payment_intent_id)).map((i) => i.attempt.id),
      );
      return { intents, attempts };
    },
    async write(tx, batch, { intents, attempts }, now) {
      const confirmed: { attemptId: string; feeNative: bigint }[] = [];
      const included: string[] = [];
      const changes: StatusChange[] = [];
      const entries: Parameters<typeof postMany>[1][number][] = [];
      const written = new Set<string>();
      const answers: Applied[] = [];
      for (const { attempt: seen, verdict, sibling } of batch) {
        const intent = intents.get(seen.payment_intent_id);
        const attempt = attempts.get(seen.id);
        // Held by another transaction, or it moved on; a replacement by an operator turns the attempt 'replaced', and
        // then what the chain said is about another transfer.
        if (!intent || !WATCHED.includes(intent.status) || !attempt || attempt.status !== 'broadcasted' || attempt.payment_intent_id !== intent.id) {
          answers.push({ action: null });
          continue;
        }
        if (written.has(intent.id)) {
          answers.push({ action: 'later' });
          continue;
        }
        written.add(intent.id);
        const decided = decide(deps, intent.status, attempt, verdict, now);
        const settlement = { createdAt: intent.created_at, at: now, finalAt: verdict.kind === 'final' ? verdict.finalAt : undefined };
        switch (decided.kind) {
          case 'settle': {
            const { change, entries: postings } = settlementOf(deps.config.chains, intent, attempt, decided.feeNative, now);
            confirmed.push({ attemptId: attempt.id, feeNative: decided.feeNative });
            changes.push(change);
            entries.push(...postings);
            answers.push({ action: 'settle', settlement });
            break;
          }
          case 'pending_confirmation':
            included.push(attempt.id);
            changes.push({ intent, to: 'pending_confirmation' });
            answers.push({ action: 'pending_confirmation' });
            break;
          case 'resend':
          case 'wait':
            if (verdict.kind === 'included') included.push(attempt.id);
            answers.push({ action: decided.kind });
            break;
          case 'fail':
          case 'retry_alone':
            // A fee-bumped replacement shares its nonce with the attempt it replaced: if this one failed because the
            // other landed, the payment happened through the other.
            if (sibling === 'pending') answers.push({ action: 'wait' });
            else if (sibling && 'attempt' in sibling) {
              await markFailed(tx, attempt.id, decided.reason, `superseded by ${sibling.attempt.tx_id}`, decided.feeNative, 'replaced');
              await postFee(tx, deps.config.chains, intent, decided.feeNative, now); // nothing when it never landed, as a nonce shared with a final transfer implies
              await markConfirmed(tx, [{ attemptId: sibling.attempt.id, feeNative: sibling.feeNative }], now);
              await settleIntent(tx, deps.config.chains, intent, sibling.attempt, sibling.feeNative, now);
              answers.push({ action: 'settle', settlement: { ...settlement, finalAt: undefined }, settledBy: sibling.attempt.tx_id });
            } else {
              // The transfer it replaced landed and failed on the nonce: the chain took its fee, booked here.
              if (sibling) await postFee(tx, deps.config.chains, intent, sibling.spentFeeNative, now);
              const alone = decided.kind === 'retry_alone';
              await failOnChain(tx, deps.config.chains, intent, attempt.id, decided, now, alone ? { retryOn: deps.boss } : {});
              answers.push({ action: decided.kind, reason: decided.reason });
            }
            break;
          case 'cancelled':
            await failByCancel(tx, deps.config.chains, intent, attempt.id, decided.feeNative, now);
            answers.push({ action: 'cancelled' });
            break;
          case 'manual_review':
            await moveAndTell(
              tx,
              [
                {
                  intent,
                  to: 'manual_review',
                  type: 'payment.manual_review',
                  extra: { tx_id: attempt.tx_id, stuck_since: (attempt.broadcast_at ?? attempt.created_at).toISOString() },
                  reason: 'stuck',
                },
              ],
              now,
            );
            answers.push({ action: 'manual_review' });
            break;
        }
      }
      await markConfirmed(tx, confirmed, now);
      await markIncluded(tx, included, now);
      await applyStatusChanges(tx, changes, now);
      await postMany(tx, entries);
      return answers;
    },
    onSplit: (error, batch) => deps.log.error({ err: error, size: batch.length }, 'confirmation: batch failed; its attempts are checked one by one'),
  });
}
