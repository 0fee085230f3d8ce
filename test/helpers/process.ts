// Runs the real `stableroute` command as a child process, the way operators and outside checks do.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/stableroute.js', import.meta.url));

export interface ServiceProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

export function startService(args: string[], env: Record<string, string>): ServiceProcess {
  let output = '';
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

export async function runCommand(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Test teardown: kills what is still running of these services (kill -9) and waits until each has exited. */
export async function killAll(services: readonly (ServiceProcess | undefined)[]): Promise<void> {
  const running = services.filter((s): s is ServiceProcess => s !== undefined);
  for (const s of running) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
  await Promise.all(running.map((s) => s.exited));
}

/** Polls `check` until it returns a value, or fails after `timeoutMs` with `what`. No fixed sleeps. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | null | false>, timeoutMs = 30_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export async function waitHealthy(baseUrl: string, service: ServiceProcess, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    `${baseUrl}/health (output so far: ${service.output().slice(-2000)})`,
    async () => {
      if (service.child.exitCode !== null) throw new Error(`service exited: ${service.output().slice(-2000)}`);
      const res = await fetch(`${baseUrl}/health`);
      return res.status === 200;
    },
    timeoutMs,
  );
}
