// The runs a poller takes: its execution jobs fetched from pg-boss and each job's payment leased to its run, in one
// transaction (decision 191). A fetched job that is not claimed yet is then as visible as a claimed one: when the worker
// dies between its fetch and its claim, the lease runs out and the sweeper (recover.ts) resumes the payment within
// EXECUTION_LEASE_SECONDS, instead of pg-boss expiring the job a minute or more later. The job stays pg-boss's: it
// completes, fails, is retried or set aside as before, and a run of it that finds the payment handled does nothing.
import type PgBoss from 'pg-boss';
import { withTransaction } from '../../../db/pool.js';
import { insertFetchedLeases } from '../../../db/queries/leases.js';
import { fetchExecutions, type ExecutionJob } from '../../../jobs/queue.js';
import { intentIdOf, runOf, type ExecutionDeps, type ExecutionRun } from './run.js';

export interface FetchedRun {
  job: PgBoss.Job<ExecutionJob>;
  run: ExecutionRun;
}

/** Up to `batchSize` due execution jobs, each with the run that holds its payment's lease from now on (if none did). */
export async function fetchRuns(deps: Pick<ExecutionDeps, 'pool' | 'boss' | 'config'>, batchSize: number): Promise<FetchedRun[]> {
  return withTransaction(deps.pool, async (tx) => {
    const fetched = (await fetchExecutions(deps.boss, tx, batchSize)).map((job) => ({ job, run: runOf(job.data) }));
    await insertFetchedLeases(
      tx,
      fetched.map(({ run }) => ({ intentId: intentIdOf(run), owner: run.runId, attempt: run.job.attempt })),
      deps.config.executionLeaseSeconds,
    );
    return fetched;
  });
}
