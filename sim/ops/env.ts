// What every operation gets: the world, the model, the fault plans and the raw draws the generator made for it.
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

/** An answer of the service: any 5xx is a bug (a business refusal is a 4xx with a code). */
export function expectNoServerError(what: string, res: { statusCode: number; body: string }, allowed: readonly number[] = []): void {
  if (res.statusCode >= 500 && !allowed.includes(res.statusCode)) throw new InvariantBroken('no_server_error', `${what} answered ${res.statusCode}: ${res.body.slice(0, 400)}`);
}
