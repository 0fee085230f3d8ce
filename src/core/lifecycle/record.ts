// The end of an execution run: its outcome recorded and its lease given back in one transaction. The outcomes of a
// process that arrive while a batch is being written share the next one (group commit): the sent transfers are
// written for all of them in a fixed number of statements (recordSent); a refusal or an unknown outcome is recorded
// on its own in the same transaction (recordFailure).
import type { ChainError } from '../../chains/port.js';
import { GroupCommit, perPool, type ItemOutcome } from '../../db/group-commit.js';
import { withTransaction, type Pool, type Queryable } from '../../db/pool.js';
import { leaseAndLiveAttempt, leasesAndLive, markBroadcasted, markBroadcastedMany, markFailed, recordSendError } from '../../db/queries/attempts.js';
import { changeStatus, changeStatuses, findIntent, lockIntents, type StatusChange } from '../../db/queries/intents.js';
import { releaseLeases } from '../../db/queries/leases.js';
import { recordSignRefusal } from '../../db/queries/sign-refusals.js';
import { EXECUTION_ATTEMPTS_MAX } from '../../bounds.js';
import { enqueueExecution, setAside } from '../../jobs/queue.js';
import type { Run } from './claim.js';
import type { LifecycleDeps } from './deps.js';
import { moveAndTell, paymentEventOf } from './events.js';
import { failIntent } from './outcomes.js';

interface Outcome {
  /** What the run's caller passed (a batch shares one pool; settings are each run's own). */
  deps: LifecycleDeps;
  run: Run;
  /** The attempt the run sent; null when it could not even sign. */
  attemptId: string | null;
  error: ChainError | null;
}

/** Most outcomes in one transaction. */
const MAX_OUTCOME_BATCH = 32;

const recordersOf = perPool(
  (pool) =>
    new GroupCommit<Outcome, void>((outcomes) => recordBatch(pool as Pool, outcomes), MAX_OUTCOME_BATCH, (error, outcomes) =>
      outcomes[0]!.deps.log.warn({ err: error, size: outcomes.length }, 'outcome batch failed; recording its runs one by one'),
    ),
);

/** The run's outcome, and its lease given back in the same transaction (the run ends with it). */
export async function recordFinalOutcome(deps: LifecycleDeps, run: Run, attemptId: string | null, error: ChainError | null): Promise<void> {
  await recordersOf(deps.pool).submit({ deps, run, attemptId, error });
  run.released = true;
}

async function recordBatch(pool: Pool, outcomes: readonly Outcome[]): Promise<ItemOutcome<void>[]> {
  await withTransaction(pool, async (tx) => {
    const sent = outcomes.filter((o): o is Outcome & { attemptId: string } => o.error === null && o.attemptId !== null);
    if (sent.length > 0) await recordSent(outcomes[0]!.deps, tx, sent);
    for (const outcome of outcomes) {
      if (outcome.error !== null) await recordFailure(outcome.deps, tx, outcome.run, outcome.attemptId, outcome.error);
    }
    await releaseLeases(tx, outcomes.map((o) => ({ intentId: o.run.job.payment_intent_id, owner: o.run.runId })));
  });
  return outcomes.map(() => ({ ok: true as const, value: undefined }));
}

/**
 * Bytes that went out, many runs at once: each payment locked (id order), and where it is still broadcasting under
 * the run's lease with the sent attempt live, the attempt and the payment become broadcasted (recordOutcome's plain
 * case). A payment another run or an operator moved on is left as it is, as recordOutcome leaves it.
 */
async function recordSent(deps: LifecycleDeps, tx: Queryable, sent: readonly (Outcome & { attemptId: string })[]): Promise<void> {
  const now = deps.clock.now();
  const intents = await lockIntents(tx, sent.map((o) => o.run.job.payment_intent_id));
  const facts = await leasesAndLive(tx, sent.map((o) => ({ intentId: o.run.job.payment_intent_id, runId: o.run.runId })));
  const attempts: string[] = [];
  const changes: StatusChange[] = [];
  const moved = new Set<string>();
  for (const [i, { run, attemptId }] of sent.entries()) {
    const intent = intents.get(run.job.payment_intent_id);
    const { holdsLease, live } = facts[i]!;
    if (!intent || intent.status !== 'broadcasting' || !holdsLease || live?.id !== attemptId || moved.has(intent.id)) continue;
    moved.add(intent.id);
    attempts.push(attemptId);
    const event = paymentEventOf({ ...intent, status: 'broadcasted' }, 'payment.broadcasted', now, { tx_id: live.tx_id });
    changes.push({ intent, to: 'broadcasted', event });
  }
  await markBroadcastedMany(tx, attempts, now);
  await changeStatuses(tx, changes, now);
}

/**
 * A run that could not sign (`attemptId` null) or whose send failed: a rejection means these bytes can never land, so
 * the attempt is over; an unknown outcome keeps the attempt live so the next run asks the chain and re-sends the same
 * bytes. Then the payment is retried, or failed once out of attempts. Nothing when the run lost its payment.
 */
async function recordFailure(deps: LifecycleDeps, tx: Queryable, run: Run, attemptId: string | null, error: ChainError): Promise<void> {
  const { job } = run;
  const now = deps.clock.now();
  const intent = await findIntent(tx, job.payment_intent_id, { forUpdate: true });
  if (!intent || intent.status !== 'broadcasting') return; // someone else moved it on; nothing of ours to record
  const { holdsLease, live } = await leaseAndLiveAttempt(tx, intent.id, run.runId);
  // Taken over: the new run asks the chain about what we sent (the same bytes) and records it.
  if (!holdsLease) return;
  if (attemptId && live?.id !== attemptId) return; // an overlapping run took over
  if (!attemptId) {
    const detail = error.details ?? error.shortMessage;
    await recordSignRefusal(tx, { paymentIntentId: intent.id, chain: intent.selected_chain, reason: error.reason, detail, at: now });
  } else if (error.outcome === 'rejected') await markFailed(tx, attemptId, error.reason, error.details ?? error.shortMessage);
  else await recordSendError(tx, attemptId, error.reason, error.shortMessage);

  if (job.attempt < EXECUTION_ATTEMPTS_MAX) {
    intent.status = await changeStatus(tx, intent, 'retrying', now, error.reason);
    const delaySeconds = deps.config.executionRetryDelaySeconds * 2 ** (job.attempt - 1);
    await enqueueExecution(deps.boss, tx, { payment_intent_id: intent.id, attempt: job.attempt + 1 }, delaySeconds);
    return;
  }
  if (error.outcome === 'unknown' && attemptId) {
    // Out of attempts, but the last bytes may still be on their way: never release funds that might be paid out.
    // The confirmation worker watches the attempt, re-sends it, and escalates to manual review when stuck.
    await markBroadcasted(tx, attemptId, now);
    await moveAndTell(tx, intent, 'broadcasted', 'payment.broadcasted', now, { tx_id: live?.tx_id ?? '' }, error.reason);
    return;
  }
  await failIntent(tx, intent, error.reason, now);
  await setAside(deps.boss, tx, { ...job, reason: error.reason });
}
