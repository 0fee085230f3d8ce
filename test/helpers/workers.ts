// Drives the workers by hand in tests: no timers, the manual clock decides what is due.
import type PgBoss from 'pg-boss';
import pino from 'pino';
import { confirmRound } from '../../src/core/payments/confirm/round.js';
import { executeBatch, type ExecutionDeps } from '../../src/core/payments/execute/execute.js';
import { runOf } from '../../src/core/payments/execute/run.js';
import { EXECUTION_BATCH_JOBS_MAX } from '../../src/bounds.js';
import { EXECUTION_QUEUE, type ExecutionJob } from '../../src/jobs/queue.js';
import type { TestContext } from './context.js';

const quiet = pino({ level: 'silent' });

/**
 * Runs one job through the execution batch path as a batch of one (under `runId`, a sweeper's owner, when given); a run
 * that fails rejects, as its job would fail.
 */
export async function executeAlone(deps: ExecutionDeps, job: ExecutionJob, runId?: string): Promise<void> {
  const [outcome] = await executeBatch(deps, [runId === undefined ? runOf(job) : { job, runId }]);
  if (!outcome!.ok) throw outcome!.error;
}

/**
 * Runs every queued execution job (retries included, ignoring their start time) until the queue is empty: each job as
 * a batch of one, or, `together`, each fetched page as one execution batch, as a poll of the worker runs it (its
 * payments of one chain then share on-chain transactions where the chain batches).
 */
export async function drainExecution(t: TestContext, maxJobs = 1000, options: { together?: boolean } = {}): Promise<number> {
  let ran = 0;
  for (;;) {
    const jobs: PgBoss.Job<ExecutionJob>[] = await t.boss.fetch<ExecutionJob>(EXECUTION_QUEUE, {
      batchSize: options.together ? EXECUTION_BATCH_JOBS_MAX : 20,
      ignoreStartAfter: true,
    });
    if (jobs.length === 0) return ran;
    const batches = options.together ? [jobs] : jobs.map((job) => [job]);
    for (const batch of batches) {
      const outcomes = await executeBatch({ ...t.ctx, log: quiet }, batch.map((job) => runOf(job.data)));
      for (const [k, outcome] of outcomes.entries()) {
        if (!outcome.ok) throw outcome.error;
        await t.boss.complete(EXECUTION_QUEUE, batch[k]!.id);
      }
      ran += batch.length;
      if (ran > maxJobs) throw new Error('execution did not converge');
    }
  }
}

export async function confirm(t: TestContext) {
  return confirmRound({ ...t.ctx, log: quiet });
}
