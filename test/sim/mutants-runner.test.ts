// The mutant runner against a stand-in simulator in a small repository of its own: a planted bug is caught at the
// first seed that breaks an invariant and confirmed on the unplanted copy; a bug no seed finds is missed; a text that
// is not in the code plants nothing and says so; a seed that breaks the unplanted code too, a crash and a hang are
// errors, never catches. The stand-in reads the planted file the way the simulator runs the planted code.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mutant } from '../../sim/mutants/list.js';
import { runMutants, type MutantResult } from '../../sim/mutants/runner.js';
import { repositoryFiles } from '../../sim/mutants/scratch.js';
import { resultsTable } from '../../sim/mutants/table.js';
import { readRun } from '../../sim/mutants/verdict.js';

const nodeModules = fileURLToPath(new URL('../../node_modules', import.meta.url));

// Breaks invariant guard_on from seed 2 when the guard is off, and at seed 7 whatever the code (a seed that finds a bug
// of the code as it is); hangs
// or crashes when told to; otherwise clean. Its last line is its report, as the simulator's --json is.
const STAND_IN = `import { readFileSync } from 'node:fs';
const seed = Number(process.argv[process.argv.indexOf('--seed') + 1]);
const code = readFileSync('src/guard.ts', 'utf8') + readFileSync('src/other.ts', 'utf8');
console.log('running seed', seed);
if (code.includes("'hang'")) setInterval(() => undefined, 1000);
else if (code.includes("'crash'")) throw new Error('boom');
else if ((code.includes("'off'") && seed >= 2) || seed === 7) {
  console.log(JSON.stringify({ seed, ok: false, broken: { invariant: 'guard_on', details: 'the guard is off' } }));
  process.exit(1);
} else console.log(JSON.stringify({ seed, ok: true }));
`;

const edit = (file: string, find: string, replace: string) => ({ file, find, replace });
const mutant = (id: string, ...edits: ReturnType<typeof edit>[]): Mutant => ({ id, bug: `bug ${id}`, invariant: 'guard_on', edits });

describe('the mutant runner', () => {
  let root: string;
  let results: MutantResult[];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'stableroute-mutants-test-'));
    mkdirSync(join(root, 'src'));
    mkdirSync(join(root, 'sim'));
    writeFileSync(join(root, 'src/guard.ts'), "export const guard = 'on';\n");
    writeFileSync(join(root, 'src/other.ts'), "export const other = 'calm';\n");
    writeFileSync(join(root, 'sim/simulate.ts'), STAND_IN);
    writeFileSync(join(root, '.gitignore'), 'ignored.txt\n');
    writeFileSync(join(root, 'ignored.txt'), 'not copied\n');
    symlinkSync(nodeModules, join(root, 'node_modules'), 'dir');
    const options = { root, simulator: 'sim/simulate.ts', seedFirst: 1, seeds: 2, ops: 10, jobs: 2, baseline: true };
    execFileSync('git', ['init', '-q'], { cwd: root });
    execFileSync('git', ['add', 'src/guard.ts', '.gitignore'], { cwd: root });
    results = await runMutants(
      [
        mutant('caught', edit('src/guard.ts', "'on'", "'off'")),
        mutant('missed', edit('src/guard.ts', 'export const guard', 'export const  guard')),
        mutant('moved', edit('src/guard.ts', "'gone'", "'off'")),
        mutant('crash', edit('src/other.ts', "'calm'", "'crash'")),
      ],
      { ...options, runTimeoutSeconds: 30 },
    );
    results.splice(3, 0, ...(await runMutants([mutant('flaky', edit('src/other.ts', "'calm'", "'calmer'"))], { ...options, seedFirst: 7, runTimeoutSeconds: 30 })));
    results.push(...(await runMutants([mutant('hang', edit('src/other.ts', "'calm'", "'hang'"))], { ...options, runTimeoutSeconds: 8 })));
  }, 180_000);

  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('copies what git knows, tracked or new, never what it ignores', () => {
    expect(repositoryFiles(root).sort()).toEqual(['.gitignore', 'sim/simulate.ts', 'src/guard.ts', 'src/other.ts']);
  });

  it('catches a planted bug at the first seed that breaks an invariant, confirmed on the unplanted copy', () => {
    expect(results[0]).toMatchObject({ id: 'caught', kind: 'caught', seed: 2, invariant: 'guard_on', details: 'the guard is off', runs: 2 });
  });

  it('reports a bug no seed of the budget finds as missed', () => {
    expect(results[1]).toMatchObject({ id: 'missed', kind: 'missed', runs: 2 });
  });

  it('plants nothing when the text is not in the code, and says so', () => {
    expect(results[2]).toMatchObject({ id: 'moved', kind: 'not_found', runs: 0 });
    expect((results[2] as { details: string }).details).toMatch(/occurs 0 times in src\/guard\.ts/);
  });

  it('does not count a seed that breaks the unplanted code too', () => {
    expect(results[3]).toMatchObject({ id: 'flaky', kind: 'error', seed: 7 });
    expect((results[3] as { details: string }).details).toMatch(/without the mutant too/);
  });

  it('does not count a crash or a hang as a catch', () => {
    expect(results[4]).toMatchObject({ id: 'crash', kind: 'error', seed: 1 });
    expect((results[4] as { details: string }).details).toMatch(/Error: boom/);
    expect(results[5]).toMatchObject({ id: 'hang', kind: 'error', seed: 1 });
    expect((results[5] as { details: string }).details).toMatch(/deadline/);
  });

  it('leaves the repository as it was and removes its scratch copies', () => {
    expect(execFileSync('git', ['diff', '--stat'], { cwd: root }).toString()).toBe('');
    expect(existsSync(join(root, 'src/guard.ts'))).toBe(true);
  });

  it('prints one row per mutant and the budget', () => {
    const table = resultsTable(results, { seedFirst: 1, seeds: 2, ops: 10, runTimeoutSeconds: 30 });
    expect(table).toMatch(/^caught\s+caught\s+2\s+guard_on/m);
    expect(table).toMatch(/^missed\s+missed\s+-\s+none in 2 seeds/m);
    expect(table).toContain('1 of 6 mutants caught; budget: seeds 1..2, 10 operations each');
  });
});

describe('reading a simulator run', () => {
  const run = (code: number | null, stdout: string, stderr = '', timedOut = false) => readRun({ code, stdout, stderr, timedOut });

  it('is clean on exit 0, whatever it printed', () => {
    expect(run(0, 'invariant broken: nothing')).toEqual({ kind: 'clean' });
  });

  it('names the invariant from the JSON report, under the names a report may give it', () => {
    expect(run(1, '{"invariant":"postings_balance","details":"EUR off by 1"}')).toEqual({ kind: 'broken', invariant: 'postings_balance', details: 'EUR off by 1' });
    expect(run(1, 'op 1\n{"broken":{"name":"available_non_negative","details":{"chain":"base"}}}\n')).toMatchObject({
      kind: 'broken',
      invariant: 'available_non_negative',
      details: '{"chain":"base"}',
    });
    expect(run(1, '{"seed":4,"result":{"violation":{"invariant":"one_landed_transfer"}}}')).toMatchObject({ invariant: 'one_landed_transfer' });
  });

  it('falls back on the text when the report is not JSON', () => {
    expect(run(1, '', 'seed 3: broken invariant: statuses_forward\n  at op 12')).toMatchObject({ kind: 'broken', invariant: 'statuses_forward' });
  });

  it('calls a non-zero exit without an invariant, or a run past its deadline, an error', () => {
    expect(run(1, '{"error":{"message":"boom"}}', 'TypeError: boom')).toMatchObject({ kind: 'error' });
    expect(run(1, '', 'invariant checks: 1200')).toMatchObject({ kind: 'error' });
    expect(run(null, '', '', true)).toMatchObject({ kind: 'error', details: expect.stringMatching(/deadline/) });
  });
});
