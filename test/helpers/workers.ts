// Drives the workers by hand in tests: no timers, the manual clock decides what is due.
import type PgBoss from 'pg-boss';
import pino from 'pino';
import { EXECUTION_QUEUE, type ExecutionJob } from '../../src/jobs/queue.js';
import { confirmOnce } from '../../src/workers/confirmation/confirm.js';
import { executePayment } from '../../src/core/lifecycle/execute.js';
import type { TestContext } from './context.js';

const quiet = pino({ level: 'silent' });

/** Runs every queued execution job (retries included, ignoring their start time) until the queue is empty. */
export async function drainExecution(t: TestContext, maxJobs = 1000): Promise<number> {
  let ran = 0;
  for (;;) {
    const jobs: PgBoss.Job<ExecutionJob>[] = await t.boss.fetch<ExecutionJob>(EXECUTION_QUEUE, { batchSize: 20, ignoreStartAfter: true });
    if (jobs.length === 0) return ran;
    for (const job of jobs) {
      await executePayment({ ...t.ctx, log: quiet }, job.data);
      await t.boss.complete(EXECUTION_QUEUE, job.id);
      if (++ran > maxJobs) throw new Error('execution did not converge');
    }
  }
}

export async function confirm(t: TestContext) {
  return confirmOnce({ ...t.ctx, log: quiet });
}
