// process.worker_stalls (sim/process/stall.ts): one execution poll stalls at a chosen point, and within the same
// operation, in a fixed order, the clock moves past the execution lease, the other process's real lease sweeper takes
// the payments over, and the stalled run is released, either while the run that took over is at its first chain call
// (its lease alive, nothing of it written past its claim), or once it is done (then, one time in two, after a
// confirmation round too). The stale run must be stopped by the real re-checks.
//
// Invariant, inside the operation: `no_write_after_lease_taken_over`: released while another live run holds the lease
// of one of its payments, the stale run writes nothing of that payment (its status and history, its transfers, its
// postings, its refusals to sign). That is the lease's promise (decision 57): one run decides for a payment at a time,
// so a run presumed dead never moves, signs, debits or fails a payment that another run is executing. Released after
// the takeover ended, the money invariants (one landed transfer per payment, the books) judge what it did.
import pino from 'pino';
import { EXECUTION_BATCH_JOBS_MAX } from '../../src/bounds.js';
import { confirmRound } from '../../src/core/payments/confirm/round.js';
import { executeBatch } from '../../src/core/payments/execute/execute.js';
import { fetchRuns, type FetchedRun } from '../../src/core/payments/execute/fetch.js';
import { resumeExpiredExecutions } from '../../src/core/payments/execute/recover.js';
import { EXECUTION_QUEUE } from '../../src/jobs/queue.js';
import { settleJobs } from '../../src/workers/execution.js';
import { advance, JUMPS } from '../outside/clock.js';
import { gatedProcess, STALL_POINTS, stallingProcess } from '../process/stall.js';
import type { Queryable } from '../../src/db/pool.js';
import type { World } from '../world.js';
import { InvariantBroken, type OpEnv } from './env.js';

const quiet = pino({ level: 'silent' });

type Settled = { ok: true } | { ok: false; error: unknown };

/**
 * Worlds whose last stall found no run to stall (an empty queue, or runs with nothing to do): the next execution poll
 * stalls instead, until the run calms down. Most polls find nothing, so a stall would otherwise seldom happen.
 */
const waiting = new WeakSet<World>();

/** Whether a stall waits for this poll (never once the run is calm). */
export function stallWaits(env: OpEnv): boolean {
  if (env.faults.process.calm) waiting.delete(env.world);
  return waiting.has(env.world);
}

export async function stalledExecution(env: OpEnv, draws: readonly number[]): Promise<string> {
  const { world } = env;
  const point = STALL_POINTS[draws[0]! % STALL_POINTS.length]!;
  const mode = Math.floor(draws[0]! / STALL_POINTS.length) % 3;
  const releaseDuring = mode !== 0;
  const confirmFirst = Math.floor(draws[1]! / 2) % 2 === 0;
  const stalling = stallingProcess(world.ctx, point, world.databaseUrl);
  let fetched: FetchedRun[] = [];
  const poll = async (): Promise<void> => {
    const deps = { ...stalling.process, log: quiet };
    fetched = await fetchRuns(deps, EXECUTION_BATCH_JOBS_MAX);
    if (fetched.length === 0) return;
    for (const { run } of fetched) env.touched.add(run.job.payment_intent_id);
    const outcomes = await executeBatch(deps, fetched.map((f) => f.run));
    await settleJobs(deps.boss, EXECUTION_QUEUE, fetched.map((f) => f.job), outcomes);
  };
  const running: Promise<Settled> = poll().then(
    () => ({ ok: true }),
    (error: unknown) => ({ ok: false, error }),
  );
  const found: { exclusion: string | null } = { exclusion: null };
  const did: string[] = [];
  try {
    const stalled = await Promise.race([stalling.reached.then(() => true), running.then(() => false)]);
    if (!stalled) {
      waiting.add(world);
      return `would have stalled at ${point}: nothing reached it; the next poll will`;
    }
    waiting.delete(world);
    did.push(`stalled at ${stalling.at}${stalling.at === point ? '' : ` (drawn: ${point})`}`);
    // Its statements held back, its heartbeat silent: the leases run out, and the other process's sweeper takes them.
    await advance(world, JUMPS.lease_expiry);
    const releaseNow = async (): Promise<void> => {
      const taken = await takenOver(world.pool, fetched);
      const before = await stateOf(world.pool, taken);
      stalling.release();
      await running;
      const after = await stateOf(world.pool, taken);
      const changed = taken.filter((id) => before.get(id) !== after.get(id));
      if (changed.length > 0) {
        found.exclusion = changed
          .map((id) => `#${env.model.byId.get(id)?.index} (${id}), its lease another live run's: ${before.get(id)} -> ${after.get(id)}`)
          .join('; ');
      }
      did.push(`released while ${taken.length} of its payments were another run's`);
    };
    const taker = releaseDuring ? gatedProcess(world.second, releaseNow) : null;
    const swept = await resumeExpiredExecutions({ ...(taker?.process ?? world.second), log: quiet });
    did.push(`swept ${JSON.stringify(swept)}`);
    if (!stalling.released) {
      if (!releaseDuring && confirmFirst) did.push(`confirmed ${JSON.stringify(await confirmRound({ ...world.second, log: quiet }))}`);
      stalling.release();
      did.push('released after the takeover');
    }
  } finally {
    // Whatever happened (a database fault on the sweeper's pool), the stalled run is let go and ends before the next
    // operation: nothing of it may run behind the simulator's back.
    stalling.release();
    const outcome = await running;
    await stalling.close().catch(() => undefined);
    if (!outcome.ok && !(outcome.error instanceof InvariantBroken)) {
      // Its pool is clean (no database faults): a stale run that throws is a bug of its own, as any worker step's is.
      throw outcome.error;
    }
  }
  if (found.exclusion !== null) throw new InvariantBroken('no_write_after_lease_taken_over', `a stalled run wrote after its lease was taken over: ${found.exclusion}`);
  return did.join('; ');
}

/** The stale run's payments whose lease another run holds now, alive (by the database clock). */
export async function takenOver(db: Queryable, fetched: readonly FetchedRun[]): Promise<string[]> {
  if (fetched.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    `SELECT l.payment_intent_id AS id FROM execution_leases l
      WHERE l.payment_intent_id = ANY($1::text[]) AND l.expires_at > now() AND NOT l.owner = ANY($2::text[])
      ORDER BY l.payment_intent_id`,
    [fetched.map((f) => f.run.job.payment_intent_id), fetched.map((f) => f.run.runId)],
  );
  return rows.map((r) => r.id);
}

/** What a run's write would change of each payment, in words. */
export async function stateOf(db: Queryable, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; state: string }>(
    `SELECT i.id, concat_ws(' ', i.status,
              'transitions=' || (SELECT COUNT(*) FROM payment_intent_transitions t WHERE t.payment_intent_id = i.id),
              'attempts=[' || COALESCE((SELECT string_agg(a.id || ':' || a.status || COALESCE(':' || a.failure_reason, '') || COALESCE(':' || a.failure_detail, ''), ',' ORDER BY a.id)
                                          FROM payment_attempts a WHERE a.payment_intent_id = i.id), '') || ']',
              'ledger=' || (SELECT COUNT(*) FROM ledger_transactions l WHERE l.payment_intent_id = i.id),
              'refusals=' || (SELECT COUNT(*) FROM sign_refusals r WHERE r.payment_intent_id = i.id)) AS state
       FROM payment_intents i WHERE i.id = ANY($1::text[])`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, r.state]));
}
