// npm run simulate -- --seed S --ops N [--quiet] [--json]
// Runs the service under the simulator (sim/run.ts) and prints its report; exits 1 when an invariant broke (with the
// seed, the invariant and the last operations), 2 on a usage error.
import { parseArgs } from 'node:util';
import { formatReport, jsonReport } from './report.js';
import { runSimulation } from './run.js';

const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

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
        profile: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\nusage: npm run simulate -- --seed S --ops N [--quiet] [--json] [--no-faults]\n`);
    return 2;
  }
  const ops = Number(values.ops);
  if (!Number.isInteger(ops) || ops < 1) {
    process.stderr.write(`--ops: expected a positive integer, got "${values.ops}"\n`);
    return 2;
  }
  const quiet = values.quiet || values.json;
  const step = Math.max(100, Math.floor(ops / 20));
  const report = await runSimulation({
    seed: values.seed,
    ops,
    databaseUrl: process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL,
    ...(values['no-faults'] ? { rates: {} } : {}),
    onOp: quiet ? undefined : (n) => n % step === 0 && process.stderr.write(`  ${n}/${ops}\n`),
  });
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
