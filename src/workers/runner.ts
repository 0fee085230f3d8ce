// Starts every background worker of a process: execution (pg-boss jobs running src/core/payments/execute), confirmation,
// webhooks, chain health, deposits, reconciliation, operator alerts. Workers schedule; the use cases they run live in src/core.
import { EXECUTION_POLLERS, LEASE_SWEEP_LEASES_MAX } from '../bounds.js';
import type { AppContext } from '../core/context.js';
import { deliverAlertNotifications } from '../core/operators/alerts.js';
import { runReconciliation } from '../core/treasury/reconcile-runs.js';
import type { ExecutionDeps } from '../core/payments/execute/execute.js';
import { resumeExpiredExecutions } from '../core/payments/execute/recover.js';
import { scanDeposits } from '../core/treasury/deposits/scan.js';
import { recordHealthSnapshots } from '../core/health/health-snapshots.js';
import { checkBooks } from '../core/treasury/books/check.js';
import { checkReplication } from '../core/treasury/books/replication.js';
import { EXECUTION_DEAD_LETTER_QUEUE, EXECUTION_QUEUE } from '../jobs/queue.js';
import { startConfirmationWorker } from './confirmation.js';
import { startQueuePoller } from './execution.js';
import { every, RUN_AGAIN } from './periodic.js';
import { startWebhookWorker } from './webhooks.js';
import { tokensOfConfig } from '../config.js';

export interface Workers {
  stop(): Promise<void>;
}

export async function startWorkers(ctx: AppContext): Promise<Workers> {
  const log = ctx.log.child({ component: 'workers' });
  const deps: ExecutionDeps = { ...ctx, log: log.child({ worker: 'execution' }) };
  // A stopping process waits this long for the executions in flight; what it abandons expires and is retried.
  const stopTimeoutMs = ctx.config.executionJobTimeoutSeconds * 1000;
  const pollers = Array.from({ length: EXECUTION_POLLERS }, () => startQueuePoller(deps, EXECUTION_QUEUE, stopTimeoutMs));
  const deadLetters = startQueuePoller(deps, EXECUTION_DEAD_LETTER_QUEUE, stopTimeoutMs);
  const confirmation = startConfirmationWorker(
    { ...ctx, log: log.child({ worker: 'confirmation' }) },
    { pollSeconds: ctx.config.confirmationPollSeconds, headPollSeconds: ctx.config.confirmationHeadPollSeconds },
  );
  // Executions whose worker died are resumed as soon as their lease runs out (decisions 57, 191); a full sweep sweeps
  // again at once.
  const recovery = every(
    'execution-recovery',
    ctx.config.executionLeaseSeconds / 2,
    async () => {
      const { resumed, abandoned } = await resumeExpiredExecutions({ ...ctx, log: log.child({ worker: 'recovery' }) });
      return resumed + abandoned >= LEASE_SWEEP_LEASES_MAX ? RUN_AGAIN : undefined;
    },
    log,
  );
  const health = every('health', ctx.config.healthCollectSeconds, () => recordHealthSnapshots({ ...ctx, log: log.child({ worker: 'health' }) }), log);
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
    () => runReconciliation({ ...ctx, tokensOf: tokensOfConfig(ctx.config), log: log.child({ worker: 'reconciliation' }) }),
    log,
  );
  // Operator alerts to OPERATOR_WEBHOOK_URL (decision 120).
  const operatorAlerts = every(
    'operator-alerts',
    ctx.config.webhookPollSeconds,
    () => deliverAlertNotifications({ ...ctx, log: log.child({ worker: 'operator-alerts' }) }),
    log,
  );
  // The database's history, each held chain's treasury against the books (decisions 198, 199), and in production
  // whether the database still has a synchronous standby.
  const books = every(
    'books',
    ctx.config.booksCheckSeconds,
    async () => {
      const booksLog = log.child({ worker: 'books' });
      await checkBooks({ ...ctx, log: booksLog });
      if (ctx.config.production) await checkReplication({ ...ctx, log: booksLog });
    },
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
        books.stop(),
        webhooks.stop(),
      ]);
      log.info('workers stopped');
    },
  };
}
