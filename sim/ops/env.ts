// What every operation gets: the world, the model, the fault plans and the raw draws the generator made for it.
import { POOL_TIMEOUT_MESSAGE } from '../faults/db-errors.js';
import type { FaultPlan } from '../faults/plan.js';
import type { Model } from './model.js';
import type { World } from '../world.js';

/** One plan per layer, each on its own stream, so that one layer's rolls never shift another's. */
export interface Faults {
  process: FaultPlan;
  outside: FaultPlan;
  chain: FaultPlan;
  db: FaultPlan;
}

export interface OpEnv {
  world: World;
  model: Model;
  faults: Faults;
  /** Database faults injected before this operation began: more since means the operation met one. */
  dbFaultsBefore: number;
  /** Payment ids the operation touched (created, moved, decided): the invariants look at these first. */
  touched: Set<string>;
}

/** A broken invariant seen inside an operation (a replay that answered another payment, a 5xx). */
export class InvariantBroken extends Error {
  override readonly name = 'InvariantBroken';
  constructor(
    readonly invariant: string,
    readonly details: string,
  ) {
    super(`${invariant}: ${details}`);
  }
}

/** Database faults injected so far. */
export function dbFaults(faults: Faults): number {
  let total = 0;
  for (const n of faults.db.counts.values()) total += n;
  return total;
}

/** Whether this operation met a database fault (then a 5xx or a failed worker step is the service's honest answer). */
export function metDatabaseFault(env: OpEnv): boolean {
  return dbFaults(env.faults) > env.dbFaultsBefore;
}

const DATABASE_FAULT_CODES = new Set(['40001', '40P01', '57P01']);

/**
 * Whether `error` is one the database faults make (sim/faults/db-errors.ts), once any was injected: a pool exhausted
 * by a fault refuses a few more connects, on its own pool, whenever that pool is next used.
 */
export function isDatabaseFaultError(env: OpEnv, error: unknown): boolean {
  if (dbFaults(env.faults) === 0) return false;
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  return (code !== undefined && DATABASE_FAULT_CODES.has(code)) || message === POOL_TIMEOUT_MESSAGE || /Connection terminated|connection lost|terminating connection/i.test(message ?? '');
}

/** The service's own answer to a database it cannot reach (a pool a fault left exhausted, maybe ops ago). */
export function isUnavailableAfterFaults(env: OpEnv, res: { statusCode: number; body: string }): boolean {
  return res.statusCode === 503 && dbFaults(env.faults) > 0 && res.body.includes('"SERVICE_UNAVAILABLE"');
}

/** An answer of the service: a 5xx is a bug (a business refusal is a 4xx with a code), unless a database fault hit it. */
export function expectNoServerError(env: OpEnv, what: string, res: { statusCode: number; body: string }, allowed: readonly number[] = []): void {
  const unavailable = isUnavailableAfterFaults(env, res);
  if (res.statusCode >= 500 && !allowed.includes(res.statusCode) && !metDatabaseFault(env) && !unavailable) throw new InvariantBroken('no_server_error', `${what} answered ${res.statusCode}: ${res.body.slice(0, 400)}`);
}
