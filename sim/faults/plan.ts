// Which faults a run injects, and how often: every fault layer asks its plan before doing something wrong, and the
// plan counts what it allowed, for the report. A plan is switched off once the run enters its calm phase, so that the
// end-of-run invariants (every payment final, reconcile clean, every webhook delivered) can be checked.
import { Rng } from '../rng.js';

export const FAULT_KINDS = [
  // chain
  'chain.send_timeout_after_accept',
  'chain.dropped_from_pool',
  'chain.reorg_below_finality',
  'chain.replacement_lands',
  'chain.nonce_too_low',
  'chain.already_known',
  'chain.blockhash_expired_but_landed',
  'chain.node_lags',
  'chain.batch_reverted_by_recipient',
  'chain.send_refused',
  // database
  'db.ambiguous_commit',
  'db.serialization_failure',
  'db.deadlock',
  'db.connection_lost',
  'db.pool_exhausted',
  // process
  'process.worker_dies',
  'process.worker_stalls',
  'process.workers_race',
  // outside
  'outside.webhook_fails',
  'outside.webhook_hangs',
  'outside.webhook_slow',
  'outside.screening_timeout',
  'outside.clock_jump',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultPlan {
  /**
   * Asks whether to inject this fault now; counts it when the answer is yes. False for every kind once calm. `key`
   * names the moment (a statement's text): moments with different keys draw from different streams, so that one asked
   * more often (a background statement) does not move the draws of another.
   */
  roll(kind: FaultKind, key?: string): boolean;
  /** The run enters operation `n`: from here each kind draws from its own stream of (seed, n, kind). */
  beginOp(n: number): void;
  /** Counts a fault injected without a roll (a fault the layer decided by its own rule). */
  count(kind: FaultKind): void;
  readonly counts: ReadonlyMap<FaultKind, number>;
  readonly calm: boolean;
  /** From now on no fault is injected: the run drains. */
  calmDown(): void;
}

export type FaultRates = Partial<Record<FaultKind, number>>;

export function createFaultPlan(rng: Rng, rates: FaultRates): FaultPlan {
  const counts = new Map<FaultKind, number>();
  // One stream per (operation, kind, key), made when it is first asked in that operation: how many times one kind is
  // asked (a webhook retried, one more statement in a transaction) never moves another kind's draws, and a difference
  // in one operation never moves the draws of the operations after it. The same seed draws the same faults for the
  // same questions, whatever the timing of the ones before (decision 222).
  const base = rng.int(0, 2 ** 30);
  let op = 0;
  let streams = new Map<string, Rng>();
  let calm = false;
  const count = (kind: FaultKind): void => {
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
    if (process.env.SIM_TRACE) process.stderr.write(`  #${op} fault ${kind}\n`);
  };
  const stream = (name: string): Rng => {
    let s = streams.get(name);
    if (!s) streams.set(name, (s = new Rng(`${base}:${op}:${name}`)));
    return s;
  };
  return {
    roll(kind, key = '') {
      // Draw even when calm or when the rate is 0, so that turning one kind off does not shift the others' draws.
      const hit = stream(`${kind}:${key}`).next() < (rates[kind] ?? 0);
      if (calm || !hit) return false;
      count(kind);
      return true;
    },
    beginOp(n) {
      op = n;
      streams = new Map();
    },
    count,
    counts,
    get calm() {
      return calm;
    },
    calmDown() {
      calm = true;
    },
  };
}

/** No faults at all: a clean run, or a component tested alone. */
export function noFaults(): FaultPlan {
  const counts = new Map<FaultKind, number>();
  return { roll: () => false, beginOp: () => undefined, count: () => undefined, counts, calm: true, calmDown: () => undefined };
}
