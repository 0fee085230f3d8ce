// npm run simulate -- --seed S --ops N [--quiet] [--json] [--profile] [--no-faults] [--builtin-chains]
// Runs the service under the simulator (sim/run.ts) and prints its report; exits 1 when an invariant broke (with the
// seed, the invariant and the last operations), 2 on a usage error.
import { parseArgs } from 'node:util';
import pino from 'pino';
import { serverOrEmbedded } from '../src/db/embedded.js';
import { formatReport, jsonReport } from './report.js';
import { runSimulation } from './run.js';

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        seed: { type: 'string', default: '1' },
        ops: { type: 'string', default: '1000' },
        quiet: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        'no-faults': { type: 'boolean', default: false },
        'builtin-chains': { type: 'boolean', default: false },
        profile: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\nusage: npm run simulate -- --seed S --ops N [--quiet] [--json] [--profile] [--no-faults] [--builtin-chains]\n`);
    return 2;
  }
  const ops = Number(values.ops);
  if (!Number.isInteger(ops) || ops < 1) {
    process.stderr.write(`--ops: expected a positive integer, got "${values.ops}"\n`);
    return 2;
  }
  const quiet = values.quiet || values.json;
  const step = Math.max(100, Math.floor(ops / 20));
  // DATABASE_URL's server, or an embedded one for this run (started in a temporary directory, removed at the end).
  if (!process.env.DATABASE_URL && !quiet) process.stderr.write('no DATABASE_URL: starting an embedded PostgreSQL for this run\n');
  const server = await serverOrEmbedded(process.env.DATABASE_URL, 'stableroute-sim-', pino({ level: 'warn' }, pino.destination(2)));
  // Stopped (Ctrl-C, kill): an embedded server goes with the run instead of staying behind in its temporary folder.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void server.stop().finally(() => process.exit(130)));
  const report = await runSimulation({
    seed: values.seed,
    ops,
    databaseUrl: server.url,
    ...(values['no-faults'] ? { rates: {} } : {}),
    builtinChains: values['builtin-chains'],
    onOp: quiet ? undefined : (n) => n % step === 0 && process.stderr.write(`  ${n}/${ops}\n`),
  }).finally(() => server.stop());
  process.stdout.write(`${values.json ? jsonReport(report) : formatReport(report)}\n`);
  if (values.profile) process.stdout.write(`time spent (ms): ${JSON.stringify(report.spentMs)}\n`);
  return report.ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`simulate: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(3);
  },
);
