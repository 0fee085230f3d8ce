// A scratch copy of the repository for one mutant: the files git knows (tracked, and new ones not ignored) as they are in
// the working tree, node_modules symlinked (never installed again), in a temporary directory removed afterwards. The
// repository itself is never written.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Mutant } from './list.js';
import { plant } from './plant.js';

export interface Scratch {
  dir: string;
  remove(): void;
}

/** The files of `root` a copy needs: `git ls-files` of tracked and untracked, not ignored, files that exist. */
export function repositoryFiles(root: string): string[] {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, maxBuffer: 64 * 1024 * 1024 })
    .toString('utf8')
    .split('\0')
    .filter((file) => file.length > 0 && file !== 'node_modules');
  return [...new Set(listed)].filter((file) => existsSync(join(root, file)));
}

export function makeScratch(root: string, label: string): Scratch {
  const dir = mkdtempSync(join(tmpdir(), `stableroute-mutant-${label.replace(/[^a-z0-9-]/gi, '_')}-`));
  try {
    for (const file of repositoryFiles(root)) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      copyFileSync(join(root, file), join(dir, file));
    }
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Plants `mutant` in the scratch copy at `dir` (throws MutantTextError when a text is not there exactly once). */
export function plantIn(dir: string, mutant: Mutant): void {
  const files = plant(mutant, (file) => readFileSync(join(dir, file), 'utf8'));
  for (const [file, { after }] of files) writeFileSync(join(dir, file), after);
}
