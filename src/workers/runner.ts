// Starts every background worker of a process: execution (pg-boss jobs running src/core/lifecycle), confirmation,
// webhooks, chain health, deposits, reconciliation, operator alerts. Workers schedule; the use cases they run live in src/core.
import type { AppContext } from '../core/context.js';
import { deliverAlertNotifications } from '../core/alerts.js';
import { handleDeadExecution } from '../core/lifecycle/abandon.js';
import { runReconciliation } from '../core/reconcile-runs.js';
import { executePayment, type ExecutionDeps } from '../core/lifecycle/execute.js';
import { resumeExpiredExecutions } from '../core/lifecycle/recover.js';
import { scanDeposits } from '../core/deposits/scan.js';
import { EXECUTION_DEAD_LETTER_QUEUE, EXECUTION_QUEUE } from '../jobs/queue.js';
import { startConfirmationWorker } from './confirmation/confirm.js';
import { EXECUTION_BATCH, EXECUTION_POLL_SECONDS, startQueuePoller } from './execution/poller.js';
import { collectOnce } from './health/collect.js';
import { every, RUN_AGAIN } from './periodic.js';
import { startWebhookWorker } from './webhooks/worker.js';

/** Execution pollers per process; each runs up to EXECUTION_BATCH executions at once (poller.ts). */
export const EXECUTION_POLLERS = 2;
/** Seconds between looks at the dead-letter queue: a rare path, off the hot one. */
const DEAD_LETTER_POLL_SECONDS = 2;

export interface Workers {
  stop(): Promise<void>;
}

export async function startWorkers(ctx: AppContext): Promise<Workers> {
  const log = ctx.log.child({ component: 'workers' });
  const deps: ExecutionDeps = { ...ctx, log: log.child({ worker: 'execution' }) };
  // A stopping process waits this long for the executions in flight; what it abandons expires and is retried.
  const stopTimeoutMs = ctx.config.executionJobTimeoutSeconds * 1000;
  const pollers = Array.from({ length: EXECUTION_POLLERS }, () =>
    startQueuePoller(
      ctx.boss,
      EXECUTION_QUEUE,
      { batchSize: EXECUTION_BATCH, pollSeconds: EXECUTION_POLL_SECONDS, stopTimeoutMs },
      (job) => executePayment(deps, job),
      log,
    ),
  );
  const deadLetters = startQueuePoller(
    ctx.boss,
    EXECUTION_DEAD_LETTER_QUEUE,
    { batchSize: 1, pollSeconds: DEAD_LETTER_POLL_SECONDS, stopTimeoutMs },
    (job) => handleDeadExecution(deps, job),
    log,
  );
  const confirmation = startConfirmationWorker(
    { ...ctx, log: log.child({ worker: 'confirmation' }) },
    { pollSeconds: ctx.config.confirmationPollSeconds, headPollSeconds: ctx.config.confirmationHeadPollSeconds },
  );
  // Executions whose worker died are resumed as soon as their lease runs out (decision 57).
  const recovery = every(
    'execution-recovery',
    ctx.config.executionLeaseSeconds / 2,
    () => resumeExpiredExecutions({ ...ctx, log: log.child({ worker: 'recovery' }) }),
    log,
  );
  const health = every('health', ctx.config.healthCollectSeconds, () => collectOnce({ ...ctx, log: log.child({ worker: 'health' }) }), log);
  // Transfers into the treasuries, booked once each (decision 122); a backlog is read page after page without waiting.
  const deposits = every(
    'deposits',
    ctx.config.depositPollSeconds,
    async () => ((await scanDeposits({ ...ctx, log: log.child({ worker: 'deposits' }) })).more ? RUN_AGAIN : undefined),
    log,
  );
  // The ledger against each chain, one run per period across processes (decision 119).
  const reconciliation = every(
    'reconciliation',
    ctx.config.reconcileIntervalSeconds,
    () => runReconciliation({ ...ctx, log: log.child({ worker: 'reconciliation' }) }),
    log,
  );
  // Operator alerts to OPERATOR_WEBHOOK_URL (decision 120).
  const operatorAlerts = every(
    'operator-alerts',
    ctx.config.webhookPollSeconds,
    () => deliverAlertNotifications({ ...ctx, log: log.child({ worker: 'operator-alerts' }) }),
    log,
  );
  const webhooks = startWebhookWorker({ pool: ctx.pool, clock: ctx.clock, config: ctx.config, log: log.child({ worker: 'webhooks' }), metrics: ctx.metrics });
  log.info('workers started');
  return {
    stop: async () => {
      // Stop taking jobs and let the running ones finish; an abandoned one is retried after its timeout.
      await Promise.all([
        ...pollers.map((poller) => poller.stop()),
        deadLetters.stop(),
        recovery.stop(),
        confirmation.stop(),
        health.stop(),
        deposits.stop(),
        reconciliation.stop(),
        operatorAlerts.stop(),
        webhooks.stop(),
      ]);
      log.info('workers stopped');
    },
  };
}
