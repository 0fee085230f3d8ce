// Worker steps, called as the worker loops call them (src/workers/*): an execution poll (fetch with leases, the batch,
// the jobs settled), a dead-letter poll, a confirmation round, a webhook delivery pass, the lease sweeper, a deposits
// scan. Process faults live here: a poll's process may die at a chosen point (mortal.ts) or stall there and carry on
// after its payments were taken over (stall.ts), and two processes may poll the same queue at once.
import pino from 'pino';
import { EXECUTION_BATCH_JOBS_MAX, DEAD_LETTER_BATCH_JOBS_MAX } from '../../src/bounds.js';
import { handleDeadExecution } from '../../src/core/payments/execute/abandon.js';
import { confirmRound } from '../../src/core/payments/confirm/round.js';
import { executeBatch } from '../../src/core/payments/execute/execute.js';
import { fetchRuns } from '../../src/core/payments/execute/fetch.js';
import { resumeExpiredExecutions } from '../../src/core/payments/execute/recover.js';
import { scanDeposits } from '../../src/core/treasury/deposits/scan.js';
import { deliverDueEvents } from '../../src/core/webhooks/delivery.js';
import { EXECUTION_DEAD_LETTER_QUEUE, EXECUTION_QUEUE, type ExecutionJob } from '../../src/jobs/queue.js';
import { settleJobs } from '../../src/workers/execution.js';
import { DEATH_POINTS, mortalProcess, type DeathPoint } from '../process/mortal.js';
import type { Process } from '../world.js';
import type { OpEnv } from './env.js';
import { stalledExecution, stallWaits } from './stall.js';

const quiet = pino({ level: 'silent' });

/** One tick of an execution poller of `process`, as src/workers/execution.ts runs it (without the window wait). */
async function executionPoll(process: Process): Promise<number> {
  const deps = { ...process, log: quiet };
  const fetched = await fetchRuns(deps, EXECUTION_BATCH_JOBS_MAX);
  if (fetched.length === 0) return 0;
  const outcomes = await executeBatch(deps, fetched.map((f) => f.run));
  await settleJobs(deps.boss, EXECUTION_QUEUE, fetched.map((f) => f.job), outcomes);
  return fetched.length;
}

/** Runs `step` on a process that may die at `point`; true when it died (its work is dropped, its promise left). */
async function mortally(env: OpEnv, base: Process, point: DeathPoint | null, step: (p: Process) => Promise<unknown>): Promise<boolean> {
  const mortal = mortalProcess(base, point, env.world.databaseUrl);
  const running = step(mortal.process);
  running.catch(() => undefined);
  await Promise.race([running, mortal.died]);
  return mortal.dead;
}

export async function executionOp(env: OpEnv, draws: readonly number[]): Promise<string> {
  const { world, faults } = env;
  // A stall (stall.ts) is a poll of its own: it neither dies nor races. One that found nothing to stall on waits for
  // the next poll.
  const stalls = faults.process.roll('process.worker_stalls') || stallWaits(env);
  const dies = !stalls && faults.process.roll('process.worker_dies');
  const races = !stalls && faults.process.roll('process.workers_race');
  const point: DeathPoint | null = dies ? DEATH_POINTS[draws[0]! % 4]! : null;
  // Now and then the queue hands out again the execution job of a payment already broadcasting or broadcast (pg-boss
  // delivers at least once): the service must find it as left and do nothing.
  const redelivered = draws[2]! % 6 === 0 ? await redeliverExecution(env, draws[3]!) : '';
  if (stalls) return `${redelivered}${await stalledExecution(env, draws)}`;
  if (point === 'claim') {
    // The jobs fetched and leased, then the process gone before its claim: its runs are simply dropped.
    await fetchRuns(world.ctx, EXECUTION_BATCH_JOBS_MAX);
    return 'died at claim';
  }
  if (races) {
    const [first, second] = await Promise.all([
      mortally(env, world.ctx, point, executionPoll),
      mortally(env, world.second, null, executionPoll),
    ]);
    return `${redelivered}two pollers raced${first || second ? `; one died at ${point}` : ''}`;
  }
  if (point) {
    const died = await mortally(env, world.ctx, point, executionPoll);
    return `${redelivered}${died ? `died at ${point}` : `would have died at ${point}: nothing reached it`}`;
  }
  return `${redelivered}executed ${await executionPoll(draws[1]! % 2 === 0 ? world.ctx : world.second)}`;
}

async function redeliverExecution(env: OpEnv, draw: number): Promise<string> {
  const { rows } = await env.world.pool.query<{ id: string; attempts: number }>(
    `SELECT pi.id, (SELECT COUNT(*) FROM payment_attempts a WHERE a.payment_intent_id = pi.id)::int AS attempts
       FROM payment_intents pi WHERE pi.status IN ('broadcasting', 'broadcasted')`,
  );
  if (rows.length === 0) return '';
  // In the run's order of creation (the ids are random): the same draw names the same payment in a replay.
  const order = (id: string) => env.model.byId.get(id)?.index ?? Number.MAX_SAFE_INTEGER;
  rows.sort((a, b) => order(a.id) - order(b.id));
  const row = rows[draw % rows.length]!;
  await env.world.ctx.boss.send(EXECUTION_QUEUE, { payment_intent_id: row.id, attempt: Math.max(1, row.attempts) } satisfies ExecutionJob);
  env.touched.add(row.id);
  return `re-delivered the job of #${env.model.byId.get(row.id)?.index}; `;
}

export async function deadLetterOp(env: OpEnv): Promise<string> {
  const deps = { ...env.world.ctx, log: quiet };
  const jobs = await deps.boss.fetch<ExecutionJob>(EXECUTION_DEAD_LETTER_QUEUE, { batchSize: DEAD_LETTER_BATCH_JOBS_MAX });
  for (const job of jobs) {
    await handleDeadExecution(deps, job.data);
    await deps.boss.complete(EXECUTION_DEAD_LETTER_QUEUE, job.id);
  }
  return `dead letters ${jobs.length}`;
}

export async function confirmOp(env: OpEnv, draws: readonly number[]): Promise<string> {
  const { world, faults } = env;
  const dies = faults.process.roll('process.worker_dies');
  const races = faults.process.roll('process.workers_race');
  const round = (p: Process) => confirmRound({ ...p, log: quiet });
  if (races) {
    const died = await Promise.all([mortally(env, world.ctx, dies ? 'confirm' : null, round), mortally(env, world.second, null, round)]);
    return `two confirmation rounds raced${died[0] ? '; one died' : ''}`;
  }
  if (dies) return (await mortally(env, world.ctx, 'confirm', round)) ? 'died at confirm' : 'confirmed (nothing to ask)';
  const summary = await round(draws[0]! % 2 === 0 ? world.ctx : world.second);
  return `confirmed ${JSON.stringify(summary)}`;
}

export async function webhooksOp(env: OpEnv): Promise<string> {
  const { ctx } = env.world;
  // One lane: the receiver's fault draws follow the order of the events, not the lanes' race.
  const counts = await deliverDueEvents({ pool: ctx.pool, clock: ctx.clock, config: ctx.config, log: quiet }, { batchSize: 20, concurrency: 1 });
  return `webhooks ${JSON.stringify(counts)}`;
}

export async function sweepOp(env: OpEnv, draws: readonly number[]): Promise<string> {
  const process = draws[0]! % 2 === 0 ? env.world.ctx : env.world.second;
  const counts = await resumeExpiredExecutions({ ...process, log: quiet });
  return `swept ${JSON.stringify(counts)}`;
}

export async function scanOp(env: OpEnv): Promise<string> {
  const result = await scanDeposits({ ...env.world.ctx, log: quiet });
  return `scanned ${JSON.stringify(result)}`;
}
