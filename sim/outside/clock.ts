// Time, which only the simulator moves. The service reads the ManualClock; the database's own clock (now()) decides
// two things: execution leases (src/db/queries/leases.ts) and when a retried job is due (pg-boss start_after). When the
// simulator moves time by some seconds, it moves those deadlines back by as much, which is the database clock moving
// with it. A clock jump (an outside fault) goes past the quote expiry, the execution lease or the stuck threshold.
import { createRequire } from 'node:module';
import type { World } from '../world.js';
import { SIM_SETTINGS } from '../world.js';

// pg-boss's own statement for expiring active jobs, as its supervisor runs it in a process started with supervise
// (src/runtime.ts); the simulator's queues are started without, so it runs it when time moves.
const plans = createRequire(import.meta.url)('pg-boss/src/plans.js') as { failJobsByTimeout(schema: string): string };
const EXPIRE_ACTIVE_JOBS_SQL = plans.failJobsByTimeout('pgboss');

export async function advance(world: World, seconds: number): Promise<void> {
  world.clock.advance(Math.round(seconds * 1000));
  await world.pool.query(
    `WITH leases AS (UPDATE execution_leases SET expires_at = expires_at - make_interval(secs => $1) RETURNING 1),
          active AS (UPDATE pgboss.job SET started_on = started_on - make_interval(secs => $1) WHERE state = 'active' RETURNING 1)
     UPDATE pgboss.job SET start_after = start_after - make_interval(secs => $1) WHERE state IN ('created', 'retry') AND start_after > now()`,
    [seconds],
  );
  // An execution job whose process died stays active until it expires; then pg-boss retries it (decision 191).
  await world.pool.query(EXPIRE_ACTIVE_JOBS_SQL);
}

export const JUMPS = {
  quote_expiry: SIM_SETTINGS.quoteTtlSeconds + 1,
  lease_expiry: SIM_SETTINGS.executionLeaseSeconds + 1,
  stuck_threshold: SIM_SETTINGS.stuckAfterSeconds + 1,
} as const;
export type Jump = keyof typeof JUMPS;
