// The claim every execution round starts with: the intent, locked, goes route_selected or retrying -> broadcasting
// under this run's execution lease, with what the next steps need. The claims of a process that arrive while a batch
// is being written share the next one (group commit, src/db/group-commit.ts): the intents locked in id order and their
// facts read in one statement each, and the plain case (a payment waiting for its first run of this attempt) written
// for all of them in a fixed number of statements; any other case is claimed in the same transaction as alone.
import { withTransaction, type Pool, type Queryable } from '../../db/pool.js';
import { liveAttempt, liveAttemptsOf, type AttemptRow } from '../../db/queries/attempts.js';
import { changeStatuses, executionFacts, executionFactsOf, findIntent, lockIntents, type PaymentIntentRow, type StatusChange } from '../../db/queries/intents.js';
import { grantLease, grantLeases, lockLease, type NewLease } from '../../db/queries/leases.js';
import { GroupCommit, perPool, type ItemOutcome } from '../../db/group-commit.js';
import type { ExecutionJob } from '../../jobs/queue.js';
import type { LifecycleDeps } from './deps.js';
import { moveAndTell, paymentEventOf } from './events.js';

export type Done = { kind: 'done'; why: string };

/** What the claim found, for the steps that follow it outside any lock. */
export interface Claimed {
  intent: PaymentIntentRow;
  /** A transfer signed by an earlier run whose send had an unknown outcome (timeout, crash). */
  live: AttemptRow | null;
}

/** One run of an execution: the job, and the id under which it holds the payment's execution lease. */
export interface Run {
  job: ExecutionJob;
  runId: string;
  /** The run's last transaction gave its lease back with its outcome: nothing left to release. */
  released?: boolean;
}

/** Most claims in one transaction. */
const MAX_CLAIM_BATCH = 32;

/** A run's claim with what its caller passed (a batch shares one pool; settings are each run's own). */
interface ClaimRequest {
  deps: LifecycleDeps;
  run: Run;
}

const claimersOf = perPool(
  (pool) =>
    new GroupCommit<ClaimRequest, Claimed | Done>((requests) => claimBatch(pool as Pool, requests), MAX_CLAIM_BATCH, (error, requests) =>
      requests[0]!.deps.log.warn({ err: error, size: requests.length }, 'claim batch failed; claiming its payments one by one'),
    ),
);

/** Claims the run's payment, in a batch with the other claims of the process that arrive meanwhile. */
export function claim(deps: LifecycleDeps, run: Run): Promise<Claimed | Done> {
  return claimersOf(deps.pool).submit({ deps, run });
}

async function claimBatch(pool: Pool, requests: readonly ClaimRequest[]): Promise<ItemOutcome<Claimed | Done>[]> {
  const { deps } = requests[0]!;
  const runs = requests.map((r) => r.run);
  return withTransaction(pool, async (tx) => {
    const now = deps.clock.now();
    const ids = runs.map((r) => r.job.payment_intent_id);
    const intents = await lockIntents(tx, ids);
    // After the locks, in a statement of its own (see executionFacts).
    const facts = await executionFactsOf(tx, ids);
    const answers: (Claimed | Done | null)[] = runs.map(() => null);
    const plain: { i: number; intent: PaymentIntentRow }[] = [];
    const seen = new Set<string>();
    for (const [i, run] of runs.entries()) {
      const intent = intents.get(run.job.payment_intent_id);
      const found = facts.get(run.job.payment_intent_id)!;
      const waiting = intent && (intent.status === 'route_selected' || intent.status === 'retrying');
      const approved = intent?.status !== 'route_selected' || !found.awaitsApproval;
      if (intent && waiting && approved && run.job.attempt === 1 + found.retries && !seen.has(intent.id)) {
        plain.push({ i, intent });
        seen.add(intent.id);
      }
    }
    // The plain case: no lease of a live run can exist (the payment is not broadcasting), so the lease is granted
    // outright, and the payment moves to broadcasting with its event.
    const leases: NewLease[] = plain.map(({ i, intent }) => ({
      intentId: intent.id,
      owner: runs[i]!.runId,
      attempt: runs[i]!.job.attempt,
      seconds: requests[i]!.deps.config.executionLeaseSeconds,
      takeovers: 0,
    }));
    await grantLeases(tx, leases);
    await changeStatuses(
      tx,
      plain.map(({ intent }): StatusChange => ({ intent, to: 'broadcasting', event: paymentEventOf({ ...intent, status: 'broadcasting' }, 'payment.broadcasting', now) })),
      now,
    );
    const attempts = await liveAttemptsOf(tx, plain.map((p) => p.intent.id));
    for (const { i, intent } of plain) {
      intent.status = 'broadcasting';
      const live = attempts.get(intent.id)!;
      if (live?.status === 'broadcasted') {
        await moveAndTell(tx, intent, 'broadcasted', 'payment.broadcasted', now, { tx_id: live.tx_id });
        answers[i] = { kind: 'done', why: 'already broadcast' };
      } else answers[i] = { intent, live };
    }
    // Anything else (a stale job, a crashed run's payment, one waiting for approval, a second run of one payment) is
    // claimed as alone, after the plain ones; its intent is already locked by this transaction.
    for (const [i, { deps: own, run }] of requests.entries()) answers[i] ??= await claimIntent(own, tx, run);
    return answers.map((value) => ({ ok: true as const, value: value! }));
  });
}

/** Takes the intent for this run: route_selected or retrying -> broadcasting, and loads what the next steps need. */
async function claimIntent(deps: LifecycleDeps, tx: Queryable, run: Run): Promise<Claimed | Done> {
  const { job } = run;
  const now = deps.clock.now();
  const intent = await findIntent(tx, job.payment_intent_id, { forUpdate: true });
  if (!intent) return { kind: 'done', why: 'unknown intent' };
  const found = await executionFacts(tx, intent.id);
  // The attempt number comes from the intent's history, not from the job: a job whose run crashed after its outcome
  // committed is re-run by pg-boss while the next attempt's job already waits. That stale run must do nothing.
  const attempt = 1 + found.retries;
  if (job.attempt !== attempt) return { kind: 'done', why: `job of attempt ${job.attempt}; the intent is at attempt ${attempt}` };
  // Spec: proceed only while the intent still waits for execution (or is being retried, or a crashed run left it).
  if (intent.status !== 'route_selected' && intent.status !== 'retrying' && intent.status !== 'broadcasting') {
    return { kind: 'done', why: `intent is ${intent.status}` };
  }
  if (intent.status === 'route_selected' && found.awaitsApproval) {
    // Only an approval queues this payment's job; a stray one must not send it (decision 10).
    return { kind: 'done', why: 'the payment waits for an operator approval' };
  }
  // The lease: only a run of this attempt that is still working ('broadcasting') and alive holds the payment back.
  const lease = await lockLease(tx, intent.id);
  const current = lease !== null && lease.attempt === attempt && intent.status === 'broadcasting';
  if (current && lease.owner !== run.runId && !lease.expired) return { kind: 'done', why: 'another run holds the execution lease' };
  // Taking over an expired lease of this attempt counts the run that died holding it.
  const takeovers = !current ? 0 : lease.owner === run.runId ? lease.takeovers : lease.takeovers + 1;
  await grantLease(tx, { intentId: intent.id, owner: run.runId, attempt, seconds: deps.config.executionLeaseSeconds, takeovers });
  if (intent.status !== 'broadcasting') {
    await moveAndTell(tx, intent, 'broadcasting', 'payment.broadcasting', now);
  }
  const live = await liveAttempt(tx, intent.id);
  if (live?.status === 'broadcasted') {
    await moveAndTell(tx, intent, 'broadcasted', 'payment.broadcasted', now, { tx_id: live.tx_id });
    return { kind: 'done', why: 'already broadcast' };
  }
  return { intent, live };
}

