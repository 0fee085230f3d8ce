// The end of a batch's runs: how each send (or refusal to sign) came out, recorded, and every run's lease given back,
// in one transaction. Each payment is locked and re-checked (recheck.ts), what its send means is decided purely
// (src/domain/execution.ts), and the sent transfers and the status changes are written for all of them in a fixed
// number of statements; a failure's own writes (its attempt, its retry job, or its release) follow it.
import type { ChainError } from '../../../chains/port.js';
import { EXECUTION_ATTEMPTS_MAX } from '../../../bounds.js';
import type { ItemOutcome } from '../../../db/group-commit.js';
import { withBatchTransaction } from '../../../db/pool.js';
import { markBroadcasted, markFailed, markSendError } from '../../../db/queries/attempts.js';
import type { PaymentIntentRow } from '../../../db/queries/intents.js';
import { deleteLeases } from '../../../db/queries/leases.js';
import { insertSignRefusal } from '../../../db/queries/sign-refusals.js';
import { recordOfSend } from '../../../domain/execution.js';
import { enqueueRetry, setAside } from '../../../jobs/queue.js';
import { moveAndTell, type Move } from '../outcomes/events.js';
import { failIntent } from '../outcomes/outcomes.js';
import { lockForRecheck } from './recheck.js';
import { intentIdOf, type ExecutionDeps, type ExecutionRun } from './run.js';

export interface SendOutcome {
  run: ExecutionRun;
  /** The attempt the run sent; null when it could not even sign. */
  attemptId: string | null;
  error: ChainError | null;
}

export async function recordSends(deps: ExecutionDeps, outcomes: readonly SendOutcome[]): Promise<ItemOutcome<void>[]> {
  return withBatchTransaction(
    deps.pool,
    outcomes,
    async (tx, batch) => {
      const locked = await lockForRecheck(tx, batch.map((o) => o.run), { lockAttempts: false });
      const now = deps.clock.now();
      const broadcast: string[] = [];
      const moves: Move[] = [];
      const failures: { outcome: SendOutcome & { error: ChainError }; intent: PaymentIntentRow; then: 'retry' | 'retry_alone' | 'fail' }[] = [];
      for (const [k, outcome] of batch.entries()) {
        const { intent, facts, live } = locked[k]!;
        const record = recordOfSend(facts, { ...outcome, txPayments: live?.tx_payments ?? 1 }, outcome.run.job.attempt, EXECUTION_ATTEMPTS_MAX);
        if (record.kind === 'none' || !intent) continue;
        if (record.kind === 'broadcasted') {
          broadcast.push(outcome.attemptId!);
          moves.push({ intent, to: 'broadcasted', type: 'payment.broadcasted', extra: { tx_id: live!.tx_id } });
          continue;
        }
        const error = outcome.error!;
        const detail = error.details ?? error.shortMessage;
        if (record.write === 'sign_refusal') {
          await insertSignRefusal(tx, { paymentIntentId: intent.id, chain: intent.selected_chain, reason: error.reason, detail, at: now });
        } else if (record.write === 'attempt_failed') await markFailed(tx, outcome.attemptId!, error.reason, detail);
        else await markSendError(tx, outcome.attemptId!, error.reason, error.shortMessage);
        if (record.then === 'watch') {
          // Out of attempts, but the last bytes may still be on their way: never release funds that might be paid out.
          // The confirmation worker watches the attempt, re-sends it, and escalates to manual review when stuck.
          broadcast.push(outcome.attemptId!);
          moves.push({ intent, to: 'broadcasted', type: 'payment.broadcasted', extra: { tx_id: live?.tx_id ?? '' }, reason: error.reason });
        } else if (record.then === 'retry' || record.then === 'retry_alone') {
          moves.push({ intent, to: 'retrying', reason: error.reason });
          failures.push({ outcome: { ...outcome, error }, intent, then: record.then });
        } else failures.push({ outcome: { ...outcome, error }, intent, then: 'fail' });
      }
      await markBroadcasted(tx, broadcast, now);
      await moveAndTell(tx, moves, now);
      for (const { outcome, intent, then } of failures) {
        const { job } = outcome.run;
        if (then === 'retry_alone') {
          // At once: the batch was refused, not this payment; its failed batch attempt sends it alone from now on.
          await enqueueRetry(deps.boss, tx, { payment_intent_id: intent.id, attempt: job.attempt + 1 }, 0);
        } else if (then === 'retry') {
          const delaySeconds = deps.config.executionRetryDelaySeconds * 2 ** (job.attempt - 1);
          await enqueueRetry(deps.boss, tx, { payment_intent_id: intent.id, attempt: job.attempt + 1 }, delaySeconds);
        } else {
          await failIntent(tx, intent, outcome.error.reason, now);
          await setAside(deps.boss, tx, { ...job, reason: outcome.error.reason });
        }
      }
      // Every run ends here: its lease goes back with its outcome.
      await deleteLeases(tx, batch.map((o) => ({ intentId: intentIdOf(o.run), owner: o.run.runId })));
      return batch.map(() => undefined);
    },
    (error, batch) => deps.log.warn({ err: error, size: batch.length }, 'outcome batch failed; recording its runs one by one'),
  );
}
