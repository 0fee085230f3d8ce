// Execution jobs from pg-boss, a batch at a time, fetched by our own periodic loop rather than pg-boss's `work()`.
// pg-boss v10 completes (or fails) a handler's jobs without awaiting the call: when the database goes away in that
// instant (a restart, a failover), the rejected promise is unhandled and Node ends the process. Here every pg-boss call
// is awaited inside the loop's tick, so an outage fails the tick, which is logged and retried with backoff
// (periodic.ts); jobs it left active expire and pg-boss retries them. Each tick gathers up to EXECUTION_BATCH_JOBS_MAX
// jobs within the batching window (gather, below) and runs them as one batch through src/core/payments/execute; a full batch
// fetches again at once, so a backlog drains without waiting between fetches (decision 144). An execution job is
// fetched with its payment's lease (fetch.ts): if this process dies before its runs end, another resumes them as soon
// as the leases run out (decision 191).
import { setTimeout as delay } from 'node:timers/promises';
import type PgBoss from 'pg-boss';
import {
  DEAD_LETTER_BATCH_JOBS_MAX,
  DEAD_LETTER_IDLE_POLL_SECONDS,
  EXECUTION_BATCH_JOBS_MAX,
  EXECUTION_IDLE_POLL_SECONDS,
  EXECUTION_WINDOW_MS,
  EXECUTION_WINDOW_POLL_MS,
} from '../bounds.js';
import { handleDeadExecution } from '../core/payments/execute/abandon.js';
import { executeBatch, type ExecutionDeps } from '../core/payments/execute/execute.js';
import { fetchRuns, type FetchedRun } from '../core/payments/execute/fetch.js';
import type { ItemOutcome } from '../db/group-commit.js';
import { EXECUTION_DEAD_LETTER_QUEUE, EXECUTION_QUEUE, type ExecutionJob } from '../jobs/queue.js';
import { every, RUN_AGAIN, type Periodic } from './periodic.js';

/**
 * Settles a batch's jobs: the runs that ended complete, a run that failed (an outage or a bug; business failures are
 * handled inside the run) fails its own job alone, which pg-boss retries.
 */
export async function settleJobs(boss: PgBoss, queue: string, jobs: readonly PgBoss.Job<ExecutionJob>[], outcomes: readonly ItemOutcome<void>[]): Promise<void> {
  const done = jobs.filter((_, i) => outcomes[i]!.ok).map((job) => job.id);
  await Promise.all([
    done.length > 0 ? boss.complete(queue, done) : undefined,
    ...outcomes.map((outcome, i) =>
      outcome.ok ? undefined : boss.fail(queue, jobs[i]!.id, { message: String((outcome.error as Error)?.message ?? outcome.error) }),
    ),
  ]);
}

/** How a queue is polled: its batch, its waits, how its jobs are fetched and how a batch of them runs. */
interface Poll<T extends { job: PgBoss.Job<ExecutionJob> }> {
  batchSize: number;
  idleSeconds: number;
  windowMs: number;
  fetch(deps: ExecutionDeps, batchSize: number): Promise<T[]>;
  run(deps: ExecutionDeps, fetched: readonly T[]): Promise<ItemOutcome<void>[]>;
}

const EXECUTION_POLL: Poll<FetchedRun> = {
  batchSize: EXECUTION_BATCH_JOBS_MAX,
  idleSeconds: EXECUTION_IDLE_POLL_SECONDS,
  windowMs: EXECUTION_WINDOW_MS,
  fetch: fetchRuns,
  run: (deps, fetched) => executeBatch(deps, fetched.map((f) => f.run)),
};

// Executions given up on (src/core/payments/execute/abandon.ts): a rare path, off the hot one.
const DEAD_LETTER_POLL: Poll<{ job: PgBoss.Job<ExecutionJob> }> = {
  batchSize: DEAD_LETTER_BATCH_JOBS_MAX,
  idleSeconds: DEAD_LETTER_IDLE_POLL_SECONDS,
  windowMs: 0,
  fetch: async (deps, batchSize) => (await deps.boss.fetch<ExecutionJob>(EXECUTION_DEAD_LETTER_QUEUE, { batchSize })).map((job) => ({ job })),
  run: (deps, fetched) =>
    Promise.all(
      fetched.map(({ job }) =>
        handleDeadExecution(deps, job.data).then((): ItemOutcome<void> => ({ ok: true, value: undefined }), (error: unknown): ItemOutcome<void> => ({ ok: false, error })),
      ),
    ),
};

/**
 * The jobs of one batch: up to `batchSize` at once, and when fewer came, whatever comes due within `windowMs` of the
 * first (the batching window of issue 28: payments of one chain due together share on-chain transactions). A backlog
 * fills the batch in one fetch and waits for nothing; an idle queue costs one fetch.
 */
async function gather<T extends { job: PgBoss.Job<ExecutionJob> }>(deps: ExecutionDeps, poll: Poll<T>): Promise<T[]> {
  const { batchSize, windowMs } = poll;
  const fetched = await poll.fetch(deps, batchSize);
  if (fetched.length === 0) return fetched;
  const deadline = performance.now() + windowMs;
  for (let left = windowMs; fetched.length < batchSize && left > 0; left = deadline - performance.now()) {
    await delay(Math.min(left, EXECUTION_WINDOW_POLL_MS));
    fetched.push(...(await poll.fetch(deps, batchSize - fetched.length)));
  }
  return fetched;
}

/** Polls `queue` until stopped, a batch per tick. `stopTimeoutMs`: how long stop() waits for the batch in flight. */
export function startQueuePoller(deps: ExecutionDeps, queue: typeof EXECUTION_QUEUE | typeof EXECUTION_DEAD_LETTER_QUEUE, stopTimeoutMs: number): Periodic {
  return queue === EXECUTION_QUEUE ? startPoll(deps, queue, EXECUTION_POLL, stopTimeoutMs) : startPoll(deps, queue, DEAD_LETTER_POLL, stopTimeoutMs);
}

function startPoll<T extends { job: PgBoss.Job<ExecutionJob> }>(deps: ExecutionDeps, queue: string, poll: Poll<T>, stopTimeoutMs: number): Periodic {
  return every(
    `queue:${queue}`,
    poll.idleSeconds,
    async () => {
      const fetched = await gather(deps, poll);
      if (fetched.length === 0) return undefined;
      const outcomes = await poll.run(deps, fetched);
      await settleJobs(deps.boss, queue, fetched.map((f) => f.job), outcomes);
      // More may be due: a batch gathered within a window looks again at once (the window paces it), a batch fetched
      // without one only when it came back full.
      return fetched.length === poll.batchSize || poll.windowMs > 0 ? RUN_AGAIN : undefined;
    },
    deps.log,
    { stopTimeoutMs },
  );
}
