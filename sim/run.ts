// One simulation: a world on a fresh database, N operations drawn from the seed with faults, every step's invariants,
// then calm: faults off, the run drains (time moves, the workers run, operators resolve what waits for them) until
// every payment is final, and the end invariants are checked.
import { createHash } from 'node:crypto';
import { createFaultPlan, FAULT_KINDS, type FaultKind, type FaultPlan, type FaultRates } from './faults/plan.js';
import { END_CHECKS, FULL_CHECKS, STEP_CHECKS, createWatermarks, type Check } from './invariants/checks.js';
import { dbFaults, InvariantBroken, isDatabaseFaultError, metDatabaseFault, type Faults, type OpEnv } from './ops/env.js';
import { nextOp, runOp } from './ops/index.js';
import { createModel } from './ops/model.js';
import { drain } from './ops/drain.js';
import type { LoggedOp, Report } from './report.js';
import { Rng } from './rng.js';
import { createWorld, type World } from './world.js';

/** The faults a run injects by default, per chance at each place one could happen. */
export const DEFAULT_RATES: FaultRates = {
  'chain.send_timeout_after_accept': 0.02,
  'chain.dropped_from_pool': 0.04,
  'chain.reorg_below_finality': 0.01,
  'chain.replacement_lands': 0.01,
  'chain.nonce_too_low': 0.01,
  'chain.already_known': 0.01,
  'chain.blockhash_expired_but_landed': 0.01,
  'chain.node_lags': 0.02,
  'chain.batch_reverted_by_recipient': 0.01,
  'chain.send_refused': 0.03,
  'db.ambiguous_commit': 0.002,
  'db.serialization_failure': 0.003,
  'db.deadlock': 0.002,
  'db.connection_lost': 0.002,
  'db.pool_exhausted': 0.002,
  'process.worker_dies': 0.03,
  'process.worker_stalls': 0.08,
  'process.workers_race': 0.2,
  'outside.webhook_fails': 0.1,
  'outside.webhook_hangs': 0.01,
  'outside.webhook_slow': 0.03,
  'outside.screening_timeout': 0.005,
  'outside.clock_jump': 0.04,
};

export interface SimulationOptions {
  seed: string;
  ops: number;
  databaseUrl: string;
  rates?: FaultRates;
  /** Run on the built-in simulated chains (src/chains/simulated) instead of the chain world of sim/chain. */
  builtinChains?: boolean;
  /** Share of sends the built-in simulated chains fail (0.05 by default). */
  chainFailureRate?: number;
  /** Full checks every this many operations (and at the end). */
  fullEvery?: number;
  /** Faults stop after this share of the operations. */
  calmAt?: number;
  /** Called after each operation (progress). */
  onOp?: (n: number) => void;
}

const LAST_OPS = 20;
const DB_FAULT_WINDOW_OPS = 4;
let spentSetup = 0;

export async function runSimulation(options: SimulationOptions): Promise<Report> {
  const started = performance.now();
  const root = new Rng(options.seed);
  const opRng = root.fork('ops');
  const rates = options.rates ?? DEFAULT_RATES;
  const faults: Faults = {
    process: createFaultPlan(root.fork('faults:process'), rates),
    outside: createFaultPlan(root.fork('faults:outside'), rates),
    chain: createFaultPlan(root.fork('faults:chain'), rates),
    db: createFaultPlan(root.fork('faults:db'), rates),
  };
  const plans: FaultPlan[] = Object.values(faults);
  const setupStarted = performance.now();
  const world = await createWorld({ seed: options.seed, rng: root.fork('world'), faults: faults.outside, dbFaults: faults.db, chainFaults: options.builtinChains ? null : faults.chain, databaseUrl: options.databaseUrl, chainFailureRate: options.builtinChains ? (options.chainFailureRate ?? 0.05) : 0 });
  spentSetup = performance.now() - setupStarted;
  const model = createModel();
  const marks = createWatermarks();
  const lastOps: LoggedOp[] = [];
  const opsByKind: Record<string, number> = {};
  let checks = 0;
  let ran = 0;
  const fullEvery = options.fullEvery ?? 100;
  const calmAt = Math.floor(options.ops * (options.calmAt ?? 0.8));

  const spent = new Map<string, number>();
  const timed = async <T>(label: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      spent.set(label, (spent.get(label) ?? 0) + performance.now() - t0);
    }
  };
  // The checks of a list only read, so they run at once (each on a connection of the simulator's pool; what a check
  // remembers between steps it reads before its first query); the first broken one in the list's order is reported.
  const runChecks = async (list: readonly Check[]) => {
    checks += list.length;
    const problems = await Promise.all(list.map((check) => timed(`check:${check.name}`, () => check.run(world, marks))));
    const first = problems.findIndex((problem) => problem !== null);
    if (first >= 0) throw new InvariantBroken(list[first]!.name, problems[first]!);
  };
  // What every operation did, hashed: two runs of one seed that print the same digest ran the same operations to the
  // same outcomes (the replay check; SIM_TRACE=1 on both shows where two runs part). The drain's rounds are left out:
  // it loops until everything is final, and how much one round finds depends on the database's own clock.
  const digest = createHash('sha256');
  const digested = (op: LoggedOp) => op.kind.startsWith('drain:') || digest.update(`${JSON.stringify(op)}\n`);
  const log = (n: number, kind: string, did: string) => {
    if (process.env.SIM_TRACE) process.stderr.write(`#${n} ${kind}: ${did}\n`);
    lastOps.push({ n, kind, did });
    if (lastOps.length > LAST_OPS) digested(lastOps.shift()!);
  };

  const dbCounts: number[] = [];
  let broken: InvariantBroken | null = null;
  try {
    for (let n = 1; n <= options.ops; n++) {
      if (n === calmAt + 1) for (const plan of plans) plan.calmDown();
      for (const plan of plans) plan.beginOp(n);
      const op = nextOp(opRng, n);
      opsByKind[op.kind] = (opsByKind[op.kind] ?? 0) + 1;
      // A pool exhausted by a fault refuses a few connects after the one counted, maybe in the next operations: an
      // operation counts as meeting a database fault when one was injected within the last few operations.
      dbCounts.push(dbFaults(faults));
      if (dbCounts.length > DB_FAULT_WINDOW_OPS) dbCounts.shift();
      const env: OpEnv = { world, model, faults, dbFaultsBefore: dbCounts[0]!, touched: new Set() };
      try {
        log(n, op.kind, '(running)');
        lastOps.at(-1)!.did = await timed(`op:${op.kind}`, () => runOp(env, op));
        if (process.env.SIM_TRACE) process.stderr.write(`#${n} ${op.kind} did: ${lastOps.at(-1)!.did}\n`);
      } catch (error) {
        if (error instanceof InvariantBroken) throw error;
        // A worker step that fails on a database fault fails as its loop's tick would: logged, and run again later.
        if (metDatabaseFault(env) || isDatabaseFaultError(env, error)) lastOps.at(-1)!.did = `failed under a database fault: ${(error as Error)?.message ?? String(error)}`;
        else throw new InvariantBroken('operation_completes', `${op.kind} threw: ${(error as Error)?.stack ?? String(error)}`);
      }
      ran = n;
      world.chains?.tick();
      await runChecks(STEP_CHECKS);
      if (n % fullEvery === 0) await runChecks(FULL_CHECKS);
      options.onOp?.(n);
    }
    for (const plan of plans) plan.calmDown();
    const drained = await drain({ world, model, faults, dbFaultsBefore: dbFaults(faults), touched: new Set() }, (kind, did) => log(ran, `drain:${kind}`, did), () => runChecks(STEP_CHECKS));
    if (drained !== null) throw new InvariantBroken('every_payment_final', drained);
    await runChecks(FULL_CHECKS);
    await runChecks(END_CHECKS);
  } catch (error) {
    if (!(error instanceof InvariantBroken)) throw error;
    broken = error;
  } finally {
    await closeQuietly(world);
  }
  for (const op of lastOps) digested(op);
  const seconds = (performance.now() - started) / 1000;
  const counts: Partial<Record<FaultKind, number>> = {};
  for (const kind of FAULT_KINDS) {
    const total = plans.reduce((sum, plan) => sum + (plan.counts.get(kind) ?? 0), 0);
    if (total > 0) counts[kind] = total;
  }
  return {
    seed: options.seed,
    ops: options.ops,
    ok: broken === null,
    ...(broken ? { invariant: broken.invariant, details: broken.details } : {}),
    lastOps,
    opsByKind,
    faults: counts,
    digest: digest.digest('hex').slice(0, 16),
    checks,
    payments: model.payments.length,
    spentMs: Object.fromEntries([['setup', spentSetup] as [string, number], ...spent].sort(([, a], [, b]) => b - a).map(([k, ms]) => [k, Math.round(ms)])),
    seconds,
    opsPerSecond: ran / seconds,
  };
}

async function closeQuietly(world: World): Promise<void> {
  await world.close().catch(() => undefined);
}
