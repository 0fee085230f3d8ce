// Time, which only the simulator moves. The service reads the ManualClock; the database's own clock (now()) decides
// two things: execution leases (src/db/queries/leases.ts) and when a retried job is due (pg-boss start_after). When the
// simulator moves time by some seconds, it moves those deadlines back by as much, which is the database clock moving
// with it. A clock jump (an outside fault) goes past the quote expiry, the execution lease or the stuck threshold.
import type { World } from '../world.js';
import { SIM_SETTINGS } from '../world.js';

export async function advance(world: World, seconds: number): Promise<void> {
  world.clock.advance(Math.round(seconds * 1000));
  await world.pool.query(
    `WITH leases AS (UPDATE execution_leases SET expires_at = expires_at - make_interval(secs => $1) RETURNING 1)
     UPDATE pgboss.job SET start_after = start_after - make_interval(secs => $1) WHERE state IN ('created', 'retry') AND start_after > now()`,
    [seconds],
  );
}

export const JUMPS = {
  quote_expiry: SIM_SETTINGS.quoteTtlSeconds + 1,
  lease_expiry: SIM_SETTINGS.executionLeaseSeconds + 1,
  stuck_threshold: SIM_SETTINGS.stuckAfterSeconds + 1,
} as const;
export type Jump = keyof typeof JUMPS;
