// Execution jobs from pg-boss, several at a time, fetched by our own periodic loop rather than pg-boss's `work()`.
// pg-boss v10 completes (or fails) a handler's jobs without awaiting the call: when the database goes away in that
// instant (a restart, a failover), the rejected promise is unhandled and Node ends the process. Here every pg-boss call
// is awaited inside the loop's tick, so an outage fails the tick, which is logged and retried with backoff
// (periodic.ts); jobs it left active expire and pg-boss retries them. Each fetch takes up to `batchSize` jobs and runs
// them at once; a full batch fetches again at once, so a backlog drains without waiting between fetches (decision 144).
import type { Logger } from 'pino';
import type PgBoss from 'pg-boss';
import type { ExecutionJob } from '../../jobs/queue.js';
import { every, RUN_AGAIN, type Periodic } from '../periodic.js';

/** Jobs one fetch takes and runs at once. */
export const EXECUTION_BATCH = 16;
/** Seconds an idle poller waits before asking for jobs again. */
export const EXECUTION_POLL_SECONDS = 0.5;

/**
 * Runs a fetched batch and settles its jobs: the runs that returned complete, a run that threw (an outage or a bug;
 * business failures are handled inside the run) fails its own job alone, which pg-boss retries.
 */
export async function runBatch(
  boss: PgBoss,
  queue: string,
  jobs: readonly PgBoss.Job<ExecutionJob>[],
  run: (job: ExecutionJob) => Promise<void>,
): Promise<void> {
  const outcomes = await Promise.allSettled(jobs.map((job) => run(job.data)));
  const done = jobs.filter((_, i) => outcomes[i]!.status === 'fulfilled').map((job) => job.id);
  await Promise.all([
    done.length > 0 ? boss.complete(queue, done) : undefined,
    ...outcomes.map((outcome, i) =>
      outcome.status === 'rejected' ? boss.fail(queue, jobs[i]!.id, { message: String((outcome.reason as Error)?.message ?? outcome.reason) }) : undefined,
    ),
  ]);
}

export interface PollerOptions {
  batchSize: number;
  pollSeconds: number;
  /** How long stop() waits for the batch in flight (its jobs expire and are retried if it never ends). */
  stopTimeoutMs: number;
}

/** Polls `queue` until stopped: each tick fetches up to `batchSize` jobs and runs them with `run`. */
export function startQueuePoller(
  boss: PgBoss,
  queue: string,
  options: PollerOptions,
  run: (job: ExecutionJob) => Promise<void>,
  log: Logger,
): Periodic {
  return every(
    `queue:${queue}`,
    options.pollSeconds,
    async () => {
      const jobs = await boss.fetch<ExecutionJob>(queue, { batchSize: options.batchSize });
      if (jobs.length === 0) return undefined;
      await runBatch(boss, queue, jobs, run);
      return jobs.length === options.batchSize ? RUN_AGAIN : undefined;
    },
    log,
    { stopTimeoutMs: options.stopTimeoutMs },
  );
}
