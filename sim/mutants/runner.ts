// Runs the simulator against each mutant: a scratch copy of the repository per mutant, the mutant planted, then the
// simulator over the seed budget (seeds first..first+K-1, N operations each) until a run breaks an invariant. A catch is
// confirmed by running the same seed on the unplanted copy: a seed that breaks the code as it is proves nothing about
// the mutant. Mutants run with bounded concurrency (the machines have 2 cores).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Mutant } from './list.js';
import { MutantTextError, plant } from './plant.js';
import { makeScratch } from './scratch.js';
import { readRun, type RunVerdict } from './verdict.js';

export interface Budget {
  /** The first seed; seeds run first, first+1, ... */
  seedFirst: number;
  seeds: number;
  ops: number;
  /** One simulator run's deadline. */
  runTimeoutSeconds: number;
}

export interface RunnerOptions extends Budget {
  /** The repository copied for each mutant. */
  root: string;
  /** The simulator's entry point, from the root. */
  simulator: string;
  /** Mutants run at once. */
  jobs: number;
  /** Confirm each catch on the unplanted copy. */
  baseline: boolean;
  onRun?: (mutant: Mutant, seed: number, verdict: RunVerdict, seconds: number) => void;
}

export type MutantResult =
  | { id: string; kind: 'caught'; seed: number; invariant: string; details: string; runs: number; seconds: number }
  | { id: string; kind: 'missed'; runs: number; seconds: number }
  /** Its text is not in the code (not once): nothing was planted. */
  | { id: string; kind: 'not_found'; details: string; runs: 0; seconds: number }
  /** The planted copy crashed, hung, or its catching seed breaks the unplanted code too. */
  | { id: string; kind: 'error'; seed: number | null; details: string; runs: number; seconds: number };

export const MUTANT_JOBS_MAX = 2;

export async function runMutants(mutants: readonly Mutant[], options: RunnerOptions): Promise<MutantResult[]> {
  const jobs = Math.max(1, Math.min(options.jobs, MUTANT_JOBS_MAX));
  const results: MutantResult[] = new Array(mutants.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < mutants.length) {
      const k = next++;
      results[k] = await runMutant(mutants[k]!, options);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, mutants.length) }, worker));
  return results;
}

export async function runMutant(mutant: Mutant, options: RunnerOptions): Promise<MutantResult> {
  const started = performance.now();
  const seconds = () => Math.round((performance.now() - started) / 100) / 10;
  const scratch = makeScratch(options.root, mutant.id);
  try {
    let files;
    try {
      files = plant(mutant, (file) => readFileSync(join(scratch.dir, file), 'utf8'));
    } catch (error) {
      if (error instanceof MutantTextError) return { id: mutant.id, kind: 'not_found', details: error.message, runs: 0, seconds: seconds() };
      throw error;
    }
    for (const [file, { after }] of files) writeFileSync(join(scratch.dir, file), after);
    let runs = 0;
    // A seed that crashes or hangs says nothing either way: the next seed is tried, and the first such is reported
    // when no seed catches the mutant.
    let failed: { seed: number; details: string } | null = null;
    for (let seed = options.seedFirst; seed < options.seedFirst + options.seeds; seed++) {
      const runStarted = performance.now();
      const verdict = await simulate(scratch.dir, options, seed);
      runs++;
      options.onRun?.(mutant, seed, verdict, (performance.now() - runStarted) / 1000);
      if (verdict.kind === 'clean') continue;
      if (verdict.kind === 'error') {
        failed ??= { seed, details: verdict.details };
        continue;
      }
      if (options.baseline) {
        for (const [file, { before }] of files) writeFileSync(join(scratch.dir, file), before);
        const unplanted = await simulate(scratch.dir, options, seed);
        for (const [file, { after }] of files) writeFileSync(join(scratch.dir, file), after);
        if (unplanted.kind !== 'clean') {
          const said = unplanted.kind === 'broken' ? `breaks ${unplanted.invariant}` : 'fails';
          failed ??= { seed, details: `seed ${seed} ${said} without the mutant too: ${unplanted.details}` };
          continue;
        }
      }
      return { id: mutant.id, kind: 'caught', seed, invariant: verdict.invariant, details: verdict.details, runs, seconds: seconds() };
    }
    if (failed) return { id: mutant.id, kind: 'error', seed: failed.seed, details: failed.details, runs, seconds: seconds() };
    return { id: mutant.id, kind: 'missed', runs, seconds: seconds() };
  } finally {
    scratch.remove();
  }
}

/** One simulator run in `dir`, killed (its whole process group) at its deadline. */
/** The simulator runs still going, each the leader of its own process group. */
const running = new Set<number>();

/** Kills every simulator run still going (their whole process groups): the runner is being stopped. */
export function killRunning(): void {
  for (const pid of running) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // It ended meanwhile.
    }
  }
  running.clear();
}

export function simulate(dir: string, budget: Budget & { simulator: string }, seed: number): Promise<RunVerdict> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', budget.simulator, '--seed', String(seed), '--ops', String(budget.ops), '--json'],
      { cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: process.env },
    );
    if (child.pid !== undefined) running.add(child.pid);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout = keepTail(stdout + chunk)));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = keepTail(stderr + chunk)));
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // It ended meanwhile.
      }
    }, budget.runTimeoutSeconds * 1000);
    child.on('error', (error) => {
      clearTimeout(deadline);
      if (child.pid !== undefined) running.delete(child.pid);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(deadline);
      if (child.pid !== undefined) running.delete(child.pid);
      resolve(readRun({ code, timedOut, stdout, stderr }));
    });
  });
}

/** Output kept per run: the report is at the end. */
const OUTPUT_KEPT_CHARS = 1024 * 1024;
const keepTail = (text: string) => (text.length <= OUTPUT_KEPT_CHARS ? text : text.slice(-OUTPUT_KEPT_CHARS));
