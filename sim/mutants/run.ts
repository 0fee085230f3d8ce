// `npm run simulate:mutants [-- --only ID[,ID]] [--seeds K] [--ops N] [--seed-first S] [--jobs 1|2]
// [--timeout-seconds T] [--no-baseline] [--list] [--typecheck] [--json]`: plants each bug of sim/mutants/list.ts, one at a time, in
// a scratch copy of this repository and runs the simulator there over the seed budget; prints a table (caught or
// missed, seed, invariant, time) and exits non-zero when a mutant is missed, cannot be planted, or errs. `--list` says
// what each mutant plants; `--typecheck` only checks that every planted mutant compiles.
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { serverOrEmbedded } from '../../src/db/embedded.js';
import { MUTANTS } from './list.js';
import { killRunning, runMutants } from './runner.js';
import { resultsTable } from './table.js';
import { typeErrors } from './typecheck.js';

/** The default budget: seeds 1..SEEDS_DEFAULT, OPS_DEFAULT operations each, a run killed after RUN_TIMEOUT_SECONDS_DEFAULT. */
const SEEDS_DEFAULT = 6;
const OPS_DEFAULT = 1000;
const RUN_TIMEOUT_SECONDS_DEFAULT = 600;

const { values } = parseArgs({
  options: {
    only: { type: 'string', multiple: true },
    seeds: { type: 'string' },
    ops: { type: 'string' },
    'seed-first': { type: 'string' },
    jobs: { type: 'string' },
    'timeout-seconds': { type: 'string' },
    'no-baseline': { type: 'boolean' },
    simulator: { type: 'string' },
    list: { type: 'boolean' },
    typecheck: { type: 'boolean' },
    json: { type: 'boolean' },
  },
});

function positive(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) {
    console.error(`--${name} takes a positive integer, not ${text}`);
    process.exit(2);
  }
  return value;
}

const only = (values.only ?? []).flatMap((v) => v.split(',')).filter((v) => v.length > 0);
const unknown = only.filter((id) => !MUTANTS.some((m) => m.id === id));
if (unknown.length > 0) {
  console.error(`no mutant ${unknown.join(', ')}; the mutants are: ${MUTANTS.map((m) => m.id).join(', ')}`);
  process.exit(2);
}
const mutants = only.length > 0 ? MUTANTS.filter((m) => only.includes(m.id)) : MUTANTS;

if (values.list) {
  for (const m of mutants) console.log(`${m.id}\n  bug: ${m.bug}\n  where: ${[...new Set(m.edits.map((e) => e.file))].join(', ')}\n  caught by: ${m.invariant}`);
  process.exit(0);
}

if (values.typecheck) {
  const errors = typeErrors(fileURLToPath(new URL('../..', import.meta.url)), mutants);
  for (const [id, found] of errors) console.log(`${id}: ${found.length === 0 ? 'compiles' : found.join('; ')}`);
  process.exit([...errors.values()].every((found) => found.length === 0) ? 0 : 1);
}

const budget = {
  seedFirst: positive('seed-first', values['seed-first'], 1),
  seeds: positive('seeds', values.seeds, SEEDS_DEFAULT),
  ops: positive('ops', values.ops, OPS_DEFAULT),
  runTimeoutSeconds: positive('timeout-seconds', values['timeout-seconds'], RUN_TIMEOUT_SECONDS_DEFAULT),
};
const root = fileURLToPath(new URL('../..', import.meta.url));
// One database server for every run: DATABASE_URL's, or an embedded one started here for the whole tour.
const server = await serverOrEmbedded(process.env.DATABASE_URL, 'stableroute-mutants-', pino({ level: 'warn' }, pino.destination(2)));
process.env.DATABASE_URL = server.url;
// Stopped (Ctrl-C, a deadline): the simulator runs go with it, not left behind holding their databases.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    killRunning();
    void server.stop().finally(() => process.exit(130));
  });
}
console.error(`${mutants.length} mutants; seeds ${budget.seedFirst}..${budget.seedFirst + budget.seeds - 1}, ${budget.ops} operations each`);
const results = await runMutants(mutants, {
  ...budget,
  root,
  simulator: values.simulator ?? 'sim/simulate.ts',
  jobs: positive('jobs', values.jobs, 1),
  baseline: !values['no-baseline'],
  onRun: (mutant, seed, verdict, seconds) =>
    console.error(`  ${mutant.id} seed ${seed}: ${verdict.kind === 'broken' ? `broke ${verdict.invariant}` : verdict.kind} (${seconds.toFixed(1)}s)`),
});
await server.stop();
if (values.json) console.log(JSON.stringify({ budget, results }));
else console.log(resultsTable(results, budget));
process.exit(results.every((r) => r.kind === 'caught') ? 0 : 1);
