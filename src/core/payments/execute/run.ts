// One run of an execution job, as every step of a batch carries it: the job, and the id under which the run holds its
// payment's execution lease (decision 57).
import type { Logger } from 'pino';
import { newId } from '../../../ids.js';
import type { ExecutionJob } from '../../../jobs/queue.js';
import type { Config } from '../../../config.js';
import type { LifecycleDeps } from '../../context.js';
import type { Screener } from '../../screening/screener.js';

/** What an execution needs: the lifecycle's context, and the screening it runs right before signing. */
export type ExecutionDeps = LifecycleDeps & {
  screener: Screener;
  config: LifecycleDeps['config'] & Pick<Config, 'operatorWebhookUrl'>;
};

export interface ExecutionRun {
  job: ExecutionJob;
  /** The lease owner this run is: a sweeper that took over an expired lease runs as the owner it took it for. */
  runId: string;
}

/** A new run of `job`, under an owner id of its own. */
export function runOf(job: ExecutionJob): ExecutionRun {
  return { job, runId: newId('run') };
}

export function intentIdOf(run: ExecutionRun): string {
  return run.job.payment_intent_id;
}

export function runLog(deps: Pick<ExecutionDeps, 'log'>, run: ExecutionRun): Logger {
  return deps.log.child({ payment_intent_id: run.job.payment_intent_id, attempt: run.job.attempt });
}
