// A batch's runs hold their payments' execution leases from their claims to their ends (decision 57): every third of
// a lease's length, one statement pushes all of them out, so a live run never loses its lease to the sweeper. A
// renewal that fails (the database is away) is only logged: the leases then run out and, if the runs are alive, their
// next locked step finds they were taken over and stops there.
import { updateLeaseExpiries } from '../../../db/queries/leases.js';
import { intentIdOf, type ExecutionDeps, type ExecutionRun } from './run.js';

/** Starts renewing the runs' leases; the answer stops it. */
export function startHeartbeat(deps: ExecutionDeps, runs: readonly ExecutionRun[]): () => void {
  const seconds = deps.config.executionLeaseSeconds;
  const leases = runs.map((run) => ({ intentId: intentIdOf(run), owner: run.runId }));
  const timer = setInterval(() => {
    updateLeaseExpiries(deps.pool, leases, seconds).catch((error: unknown) =>
      deps.log.warn({ err: error, payment_intent_ids: leases.map((l) => l.intentId) }, 'execution lease renewal failed'),
    );
  }, (seconds * 1000) / 3);
  timer.unref();
  return () => clearInterval(timer);
}
