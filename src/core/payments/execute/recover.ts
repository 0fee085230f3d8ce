// Fast recovery of executions whose worker died (decision 57). A run holds its payment's lease from its job's fetch
// (decision 191) and renews it every few seconds; a lease that ran out means the run is gone, whether it died before
// its claim or after. Every worker process sweeps for such leases, takes them over (under the intents' row locks, SKIP
// LOCKED, so two sweepers never take the same one and a run in the middle of a step is never taken from) and resumes
// the executions at once, in-process, as one batch under the leases' new owners: each run claims the payment as its
// job's run would, asks the chain about anything its predecessor signed and re-sends the same bytes, or signs if
// nothing was signed. The pg-boss job of a dead run expires later and finds the payment handled. After LEASE_TAKEOVERS_MAX dead runs of one attempt the
// execution is abandoned instead (abandon.ts), so a payment that crashes its worker every time cannot crash them
// forever. A resumption that fails (an outage) keeps its lease to run out, so a later sweep takes the payment up again
// (one more takeover): the run it took over may not have been dead, only paused, and then its job ended when it woke
// and found the lease another's (decision 240).
import { LEASE_SWEEP_LEASES_MAX, LEASE_TAKEOVERS_MAX } from '../../../bounds.js';
import { deleteStaleLeases, deleteLeases, claimExpiredLeases, type TakenLease } from '../../../db/queries/leases.js';
import { newId } from '../../../ids.js';
import { handleDeadExecution } from './abandon.js';
import { executeBatch } from './execute.js';
import { runLog, type ExecutionDeps, type ExecutionRun } from './run.js';

export interface RecoveryCounts {
  resumed: number;
  abandoned: number;
}

const jobOf = (lease: TakenLease) => ({ payment_intent_id: lease.intentId, attempt: lease.attempt });

export async function resumeExpiredExecutions(deps: ExecutionDeps, limit = LEASE_SWEEP_LEASES_MAX): Promise<RecoveryCounts> {
  await deleteStaleLeases(deps.pool);
  const taken = await claimExpiredLeases(deps.pool, `${newId('run')}_`, deps.config.executionLeaseSeconds, limit);
  const counts: RecoveryCounts = { resumed: 0, abandoned: 0 };
  const dying = taken.filter((lease) => lease.takeovers >= LEASE_TAKEOVERS_MAX);
  const resumed: ExecutionRun[] = taken.filter((lease) => lease.takeovers < LEASE_TAKEOVERS_MAX).map((lease) => ({ job: jobOf(lease), runId: lease.owner }));
  const takeovers = new Map(taken.map((lease) => [lease.owner, lease.takeovers]));
  await Promise.all([
    ...dying.map(async (lease) => {
      const run = { job: jobOf(lease), runId: lease.owner };
      const log = runLog(deps, run).child({ takeovers: lease.takeovers });
      log.error('execution runs keep dying: abandoned');
      try {
        try {
          await handleDeadExecution(deps, run.job, { runId: lease.owner });
        } finally {
          await deleteLeases(deps.pool, [{ intentId: lease.intentId, owner: lease.owner }]);
        }
        counts.abandoned++;
      } catch (error) {
        log.error({ err: error }, 'resuming an execution failed');
      }
    }),
    (async () => {
      if (resumed.length === 0) return;
      for (const run of resumed) runLog(deps, run).child({ takeovers: takeovers.get(run.runId) }).warn('execution lease expired (its worker died): resumed here');
      const outcomes = await executeBatch(deps, resumed, 'run_out').catch((error: unknown) => resumed.map(() => ({ ok: false as const, error })));
      outcomes.forEach((outcome, i) => {
        if (outcome.ok) counts.resumed++;
        else runLog(deps, resumed[i]!).error({ err: outcome.error }, 'resuming an execution failed');
      });
    })(),
  ]);
  return counts;
}
