// Fast recovery of executions whose worker died (decision 57). A run renews its lease every few seconds; a lease that
// ran out means the run is gone. Every worker process sweeps for such leases, takes one over (under the intent's row
// lock, SKIP LOCKED, so two sweepers never take the same one and a run in the middle of a step is never taken from)
// and resumes the execution at once, in-process, as the lease's new owner: the run asks the chain about anything its
// predecessor signed and re-sends the same bytes, or signs if nothing was signed. The pg-boss job of the dead run
// expires later and finds the payment handled. After MAX_TAKEOVERS dead runs of one attempt the execution is
// abandoned instead (abandon.ts), so a payment that crashes its worker every time cannot crash them forever.
import { dropStaleLeases, releaseLease, takeExpiredLeases } from '../../db/queries/leases.js';
import { newId } from '../../ids.js';
import { handleDeadExecution } from './abandon.js';
import type { LifecycleDeps } from './deps.js';
import { executePayment } from './execute.js';

/** Runs of one attempt that may die holding the lease before it is abandoned: pg-boss's 3 runs, the same budget. */
export const MAX_TAKEOVERS = 3;
/** Leases one sweep takes over at most; the rest wait for the next sweep (or another process's). */
export const SWEEP_LIMIT = 8;

export interface RecoveryCounts {
  resumed: number;
  abandoned: number;
}

export async function resumeExpiredExecutions(deps: LifecycleDeps, limit = SWEEP_LIMIT): Promise<RecoveryCounts> {
  await dropStaleLeases(deps.pool);
  const taken = await takeExpiredLeases(deps.pool, `${newId('run')}_`, deps.config.executionLeaseSeconds, limit);
  const counts: RecoveryCounts = { resumed: 0, abandoned: 0 };
  await Promise.all(
    taken.map(async (lease) => {
      const job = { payment_intent_id: lease.intentId, attempt: lease.attempt };
      const log = deps.log.child({ payment_intent_id: lease.intentId, attempt: lease.attempt, takeovers: lease.takeovers });
      try {
        if (lease.takeovers >= MAX_TAKEOVERS) {
          log.error('execution runs keep dying: abandoned');
          try {
            await handleDeadExecution(deps, job, { runId: lease.owner });
          } finally {
            await releaseLease(deps.pool, lease.intentId, lease.owner);
          }
          counts.abandoned++;
        } else {
          log.warn('execution lease expired (its worker died): resumed here');
          await executePayment(deps, job, { runId: lease.owner });
          counts.resumed++;
        }
      } catch (error) {
        // An outage: the lease is released, and the dead run's pg-boss job (retried when it expires) takes it from here.
        log.error({ err: error }, 'resuming an execution failed');
      }
    }),
  );
  return counts;
}
