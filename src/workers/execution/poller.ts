// Execution jobs from pg-boss, several at a time. A pg-boss worker fetches a batch, runs the handler, then sleeps for
// its polling interval unless notified: with one job per fetch, a process could run at most two executions a second
// per worker. Here each fetch takes up to EXECUTION_BATCH jobs and runs them at once, and a full batch notifies its
// own worker so that a backlog drains without waiting between fetches (decision 113).
import type PgBoss from 'pg-boss';
import type { ExecutionJob } from '../../jobs/queue.js';

/** Jobs one fetch takes and runs at once. */
export const EXECUTION_BATCH = 16;
/** Seconds an idle poller waits before asking for jobs again (pg-boss's minimum is 0.5). */
export const EXECUTION_POLL_SECONDS = 0.5;

/**
 * Runs a fetched batch. pg-boss completes every job of a handler that returns, and fails them all when it throws; a
 * job whose run threw (an outage or a bug; business failures are handled inside the run) is failed here first, so it
 * alone is retried (completing only touches jobs still active).
 */
export async function runBatch(
  boss: PgBoss,
  queue: string,
  jobs: readonly PgBoss.Job<ExecutionJob>[],
  run: (job: ExecutionJob) => Promise<void>,
): Promise<void> {
  const outcomes = await Promise.allSettled(jobs.map((job) => run(job.data)));
  await Promise.all(
    outcomes.map((outcome, i) =>
      outcome.status === 'rejected' ? boss.fail(queue, jobs[i]!.id, { message: String((outcome.reason as Error)?.message ?? outcome.reason) }) : undefined,
    ),
  );
}

/** Starts one poller of `queue`; returns its pg-boss worker id. */
export async function startExecutionPoller(boss: PgBoss, queue: string, run: (job: ExecutionJob) => Promise<void>): Promise<string> {
  let id = '';
  id = await boss.work<ExecutionJob>(queue, { batchSize: EXECUTION_BATCH, pollingIntervalSeconds: EXECUTION_POLL_SECONDS }, async (jobs) => {
    await runBatch(boss, queue, jobs, run);
    if (jobs.length === EXECUTION_BATCH) boss.notifyWorker(id); // more are waiting: fetch again at once
  });
  return id;
}
