// The job queue: pg-boss in the same PostgreSQL. Jobs are enqueued on the caller's transaction, so a business write
// and its job commit or vanish together.
import PgBoss from 'pg-boss';
import { connectionTarget } from '../db/connection-target.js';
import type { Queryable } from '../db/pool.js';
import { EXECUTION_ATTEMPTS_MAX, QUEUE_POOL_CONNECTIONS } from '../bounds.js';

export const EXECUTION_QUEUE = 'payment-execute';
/** Execution jobs that failed for good are set aside here for operators (pg-boss dead-letter queue). */
export const EXECUTION_DEAD_LETTER_QUEUE = 'payment-execute-dead';

export interface ExecutionJob {
  payment_intent_id: string;
  /** 1-based attempt number of the execution. */
  attempt: number;
}

export interface QueueOptions {
  connectionString: string;
  /** Seconds an active job may run before pg-boss presumes its worker dead and retries it. */
  jobTimeoutSeconds: number;
  /** First delay before pg-boss re-runs a crashed or timed-out job (EXECUTION_RETRY_DELAY_SECONDS), doubling after. */
  retryDelaySeconds: number;
  /** How often pg-boss maintenance runs (expires jobs of dead workers). */
  maintenanceIntervalSeconds?: number;
  supervise: boolean;
}

export async function startQueue(options: QueueOptions): Promise<PgBoss> {
  const boss = new PgBoss({
    // pg-boss builds its pool from these: the same host selection as ours (a failover moves it too).
    ...connectionTarget(options.connectionString).poolOptions,
    max: QUEUE_POOL_CONNECTIONS,
    application_name: 'stableroute-queue',
    supervise: options.supervise,
    schedule: false,
    maintenanceIntervalSeconds: Math.max(1, Math.round(options.maintenanceIntervalSeconds ?? 30)),
  });
  boss.on('error', () => undefined); // surfaced through job outcomes and the logs of the caller
  await boss.start();
  await ensureQueues(boss, options);
  return boss;
}

async function ensureQueues(boss: PgBoss, options: QueueOptions): Promise<void> {
  if (!(await boss.getQueue(EXECUTION_DEAD_LETTER_QUEUE))) {
    await boss.createQueue(EXECUTION_DEAD_LETTER_QUEUE, { name: EXECUTION_DEAD_LETTER_QUEUE, retentionDays: 30 });
  }
  const executionQueue = {
    name: EXECUTION_QUEUE,
    // Our worker schedules business retries itself, as new jobs. pg-boss re-runs only crashed or timed-out runs,
    // with the same backoff (pg-boss counts whole seconds); after those, the job lands in the dead-letter queue.
    retryLimit: EXECUTION_ATTEMPTS_MAX - 1,
    retryDelay: Math.max(1, Math.ceil(options.retryDelaySeconds)),
    retryBackoff: true,
    expireInSeconds: Math.max(1, Math.ceil(options.jobTimeoutSeconds)),
    deadLetter: EXECUTION_DEAD_LETTER_QUEUE,
  };
  if (!(await boss.getQueue(EXECUTION_QUEUE))) await boss.createQueue(EXECUTION_QUEUE, executionQueue);
  else await boss.updateQueue(EXECUTION_QUEUE, executionQueue);
}

/** pg-boss's Db port over one of our transaction clients. */
export function onTransaction(tx: Queryable): PgBoss.Db {
  return { executeSql: (text, values) => tx.query(text, values) };
}

/**
 * Queues a retry of an execution on the caller's transaction, `delaySeconds` from now. The delay is relative: pg-boss
 * compares start times with the database clock, so an absolute time from this process's clock would run early if the
 * two clocks drift.
 */
export async function enqueueRetry(boss: PgBoss, tx: Queryable, job: ExecutionJob, delaySeconds: number): Promise<void> {
  await boss.send(EXECUTION_QUEUE, job, { db: onTransaction(tx), startAfter: delaySeconds });
}

/** Queues execution jobs to run at once on the caller's transaction, in one statement (a reservation batch, an approval). */
export async function enqueueExecutions(boss: PgBoss, tx: Queryable, jobs: readonly ExecutionJob[]): Promise<void> {
  if (jobs.length === 0) return;
  await boss.insert(
    jobs.map((data) => ({ name: EXECUTION_QUEUE, data })),
    { db: onTransaction(tx) },
  );
}

/**
 * Fetches up to `batchSize` due execution jobs on the caller's transaction: they turn active when it commits, with what
 * else it wrote (the runs' leases), or not at all.
 */
export async function fetchExecutions(boss: PgBoss, tx: Queryable, batchSize: number): Promise<PgBoss.Job<ExecutionJob>[]> {
  return boss.fetch<ExecutionJob>(EXECUTION_QUEUE, { batchSize, db: onTransaction(tx) });
}

export async function setAside(boss: PgBoss, tx: Queryable, job: ExecutionJob & { reason: string }): Promise<void> {
  await boss.send(EXECUTION_DEAD_LETTER_QUEUE, job, { db: onTransaction(tx) });
}
