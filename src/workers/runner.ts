// Starts every background worker of a process: execution (pg-boss), confirmation, webhooks, chain health.
import type { AppContext } from '../core/context.js';
import { EXECUTION_DEAD_LETTER_QUEUE, EXECUTION_QUEUE, type ExecutionJob } from '../jobs/queue.js';
import { confirmOnce } from './confirmation/confirm.js';
import { handleDeadExecution } from './execution/dead-letter.js';
import { executePayment, type ExecutionDeps } from './execution/execute.js';
import { collectOnce } from './health/collect.js';
import { every } from './periodic.js';
import { startWebhookWorker } from './webhooks/worker.js';

/** Execution jobs one process runs at once. */
export const EXECUTION_CONCURRENCY = 4;
const JOB_POLL_SECONDS = 0.5;

export interface Workers {
  stop(): Promise<void>;
}

export async function startWorkers(ctx: AppContext): Promise<Workers> {
  const log = ctx.log.child({ component: 'workers' });
  const deps: ExecutionDeps = { ...ctx, log: log.child({ worker: 'execution' }) };
  for (let i = 0; i < EXECUTION_CONCURRENCY; i++) {
    await ctx.boss.work<ExecutionJob>(EXECUTION_QUEUE, { batchSize: 1, pollingIntervalSeconds: JOB_POLL_SECONDS }, async ([job]) => {
      if (job) await executePayment(deps, job.data);
    });
  }
  await ctx.boss.work<ExecutionJob>(EXECUTION_DEAD_LETTER_QUEUE, { batchSize: 1, pollingIntervalSeconds: 2 }, async ([job]) => {
    if (job) await handleDeadExecution(deps, job.data);
  });
  const confirmation = every(
    'confirmation',
    ctx.config.confirmationPollSeconds,
    () => confirmOnce({ ...ctx, log: log.child({ worker: 'confirmation' }) }),
    log,
  );
  const health = every('health', ctx.config.healthCollectSeconds, () => collectOnce({ ...ctx, log: log.child({ worker: 'health' }) }), log);
  const webhooks = startWebhookWorker({ pool: ctx.pool, clock: ctx.clock, config: ctx.config, log: log.child({ worker: 'webhooks' }) });
  log.info('workers started');
  return {
    stop: async () => {
      // Stop taking jobs and let the running ones finish; an abandoned one is retried after its timeout.
      await ctx.boss.offWork(EXECUTION_QUEUE).catch(() => undefined);
      await ctx.boss.offWork(EXECUTION_DEAD_LETTER_QUEUE).catch(() => undefined);
      await Promise.all([confirmation.stop(), health.stop(), webhooks.stop()]);
      log.info('workers stopped');
    },
  };
}
