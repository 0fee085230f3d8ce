// The service under test as a child process (`stableroute serve` or `api`), exactly as operators start it, on a
// database of its own; and its resident memory, read from /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import pino from 'pino';
import { serverOrEmbedded } from '../../src/db/embedded.js';
// The test helpers' process tools serve the benchmarks too: the command's path and a free port.
import { BIN, freePort } from '../../test/helpers/process.js';


export interface BenchServer {
  /** The server's admin URL: each phase creates its own database on it (createBenchDatabase). */
  url: string;
  stop(): Promise<void>;
}

/** The PostgreSQL server named by DATABASE_URL, or an embedded one in a temporary directory, removed at stop. */
export function benchServer(): Promise<BenchServer> {
  return serverOrEmbedded(process.env.DATABASE_URL, 'stableroute-bench-', pino({ level: 'warn' }));
}

export interface BenchDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh database on the server named by `serverUrl`. */
export async function createBenchDatabase(serverUrl: string): Promise<BenchDatabase> {
  const name = `sr_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

export interface Service {
  url: string;
  pid: number;
  /** Largest resident set seen by sampleRss(), in MiB. */
  maxRssMiB: number;
  sampleRss(): Promise<number>;
  stop(): Promise<void>;
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

/**
 * Signals `child` if the bench exits first (an uncaught error): a bench that dies must not leave its service or its
 * chains running, busy on a dropped database and skewing the next run's figures. SIGKILL for the service (a crash is
 * what it is built to survive); SIGTERM for a process that must stop children of its own (the devnet's anvil).
 */
export function killOnExit(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): void {
  const kill = () => {
    if (child.exitCode === null) child.kill(signal);
  };
  process.on('exit', kill);
  child.once('exit', () => process.removeListener('exit', kill));
}

async function waitReady(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`service exited: ${output()}`);
    const ok = await fetch(`${url}/health`).then((r) => r.ok, () => false);
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`service not ready within 60 s: ${output()}`);
}

/** Runs `stableroute <args>` with `env` to its end: its exit code and what it printed. */
export async function runCli(args: readonly string[], env: Record<string, string>): Promise<{ code: number; output: string }> {
  const child = spawn(process.execPath, [process.env.BENCH_BIN ?? BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c) => (output += c));
  child.stderr!.on('data', (c) => (output += c));
  const code = await new Promise<number>((resolve) => child.once('exit', (c) => resolve(c ?? 1)));
  return { code, output };
}

/**
 * Starts `stableroute worker` (no listener) with `env` and waits until it works: its webhook worker's LISTEN connection
 * shows in pg_stat_activity of its database (the last loop it starts).
 */
export async function startWorker(env: Record<string, string> & { DATABASE_URL: string }): Promise<Service> {
  let output = '';
  const child = spawn(process.execPath, [process.env.BENCH_BIN ?? BIN, 'worker'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c) => (output = (output + c).slice(-20_000)));
  child.stderr!.on('data', (c) => (output = (output + c).slice(-20_000)));
  killOnExit(child);
  const probe = new pg.Client({ connectionString: env.DATABASE_URL });
  await probe.connect();
  try {
    for (const deadline = Date.now() + 60_000; ; ) {
      if (child.exitCode !== null) throw new Error(`worker exited: ${output}`);
      const { rows } = await probe.query(
        "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'stableroute-webhooks-listener'",
      );
      if (rows.length > 0) break;
      if (Date.now() > deadline) throw new Error(`worker not working within 60 s: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await probe.end();
  }
  return serviceOf(child, '');
}

function serviceOf(child: ChildProcess, url: string): Service {
  const service: Service = {
    url,
    pid: child.pid!,
    maxRssMiB: 0,
    sampleRss: async () => {
      const rss = await rssMiB(child.pid!);
      service.maxRssMiB = Math.max(service.maxRssMiB, rss);
      return rss;
    },
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
  return service;
}

/** Starts `stableroute <role>` with `env` on a free port and waits for /health. */
export async function startService(role: 'serve' | 'api', env: Record<string, string>): Promise<Service> {
  const port = await freePort();
  let output = '';
  // BENCH_CPU_PROF=<dir>: the service writes a V8 CPU profile there when it stops (open it in Chrome's DevTools).
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  // BENCH_BIN=<checkout>/bin/stableroute.js: the service of another checkout under the same harness (an A/B of two commits).
  const child = spawn(process.execPath, [...profile, process.env.BENCH_BIN ?? BIN, role], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (c) => (output = (output + c).slice(-20_000)));
  child.stderr!.on('data', (c) => (output = (output + c).slice(-20_000)));
  const url = `http://127.0.0.1:${port}`;
  killOnExit(child);
  await waitReady(url, child, () => output);
  return serviceOf(child, url);
}
