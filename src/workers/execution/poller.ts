// Execution jobs from pg-boss, a batch at a time, fetched by our own periodic loop rather than pg-boss's `work()`.
// pg-boss v10 completes (or fails) a handler's jobs without awaiting the call: when the database goes away in that
// instant (a restart, a failover), the rejected promise is unhandled and Node ends the process. Here every pg-boss call
// is awaited inside the loop's tick, so an outage fails the tick, which is logged and retried with backoff
// (periodic.ts); jobs it left active expire and pg-boss retries them. Each tick gathers up to EXECUTION_BATCH_JOBS_MAX
// jobs within the batching window (gather, below) and runs them as one batch through src/core/execution; a full batch
// fetches again at once, so a backlog drains without waiting between fetches (decision 144).
import { setTimeout as delay } from 'node:timers/promises';
import type PgBoss from 'pg-boss';
import {
  DEAD_LETTER_BATCH_JOBS_MAX,
  DEAD_LETTER_IDLE_POLL_SECONDS,
  EXECUTION_BATCH_JOBS_MAX,
  EXECUTION_IDLE_POLL_SECONDS,
  EXECUTION_WINDOW_MS,
  EXECUTION_WINDOW_POLL_MS,
} from '../../bounds.js';
import { handleDeadExecution } from '../../core/execution/abandon.js';
import { executeBatch, type ExecutionDeps } from '../../core/execution/execute.js';
import { runOf } from '../../core/execution/run.js';
import type { ItemOutcome } from '../../db/group-commit.js';
import { EXECUTION_DEAD_LETTER_QUEUE, EXECUTION_QUEUE, type ExecutionJob } from '../../jobs/queue.js';
import { every, RUN_AGAIN, type Periodic } from '../periodic.js';

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

const POLLS = {
  [EXECUTION_QUEUE]: { batchSize: EXECUTION_BATCH_JOBS_MAX, idleSeconds: EXECUTION_IDLE_POLL_SECONDS, windowMs: EXECUTION_WINDOW_MS },
  // Executions given up on (src/core/execution/abandon.ts): a rare path, off the hot one.
  [EXECUTION_DEAD_LETTER_QUEUE]: { batchSize: DEAD_LETTER_BATCH_JOBS_MAX, idleSeconds: DEAD_LETTER_IDLE_POLL_SECONDS, windowMs: 0 },
};

/**
 * The jobs of one batch: up to `batchSize` at once, and when fewer came, whatever comes due within `windowMs` of the
 * first (the batching window of issue 28: payments of one chain due together share on-chain transactions). A backlog
 * fills the batch in one fetch and waits for nothing; an idle queue costs one fetch.
 */
async function gather(boss: PgBoss, queue: string, batchSize: number, windowMs: number): Promise<PgBoss.Job<ExecutionJob>[]> {
  const jobs = await boss.fetch<ExecutionJob>(queue, { batchSize });
  if (jobs.length === 0) return jobs;
  const deadline = performance.now() + windowMs;
  for (let left = windowMs; jobs.length < batchSize && left > 0; left = deadline - performance.now()) {
    await delay(Math.min(left, EXECUTION_WINDOW_POLL_MS));
    jobs.push(...(await boss.fetch<ExecutionJob>(queue, { batchSize: batchSize - jobs.length })));
  }
  return jobs;
}

/** Polls `queue` until stopped, a batch per tick. `stopTimeoutMs`: how long stop() waits for the batch in flight. */
export function startQueuePoller(deps: ExecutionDeps, queue: keyof typeof POLLS, stopTimeoutMs: number): Periodic {
  const { batchSize, idleSeconds, windowMs } = POLLS[queue];
  return every(
    `queue:${queue}`,
    idleSeconds,
    async () => {
      const jobs = await gather(deps.boss, queue, batchSize, windowMs);
      if (jobs.length === 0) return undefined;
      const outcomes =
        queue === EXECUTION_QUEUE
          ? await executeBatch(deps, jobs.map((job) => runOf(job.data)))
          : await Promise.all(
              jobs.map((job) => handleDeadExecution(deps, job.data).then((): ItemOutcome<void> => ({ ok: true, value: undefined }), (error: unknown): ItemOutcome<void> => ({ ok: false, error }))),
            );
      await settleJobs(deps.boss, queue, jobs, outcomes);
      // More may be due: a batch gathered within a window looks again at once (the window paces it), a batch fetched
      // without one only when it came back full.
      return jobs.length === batchSize || windowMs > 0 ? RUN_AGAIN : undefined;
    },
    deps.log,
    { stopTimeoutMs },
  );
}
