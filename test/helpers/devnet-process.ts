// `stableroute devnet` as a process, and plain JSON-RPC to its chains: what the devnet CLI tests and the bench
// (bench/lib/devnet.ts) share. No test framework here, so the bench can import it.
import { spawn, type ChildProcess } from 'node:child_process';
import { BIN, waitFor } from './process.js';

export const DEVNET_READY_MS = 30_000;
export const RPC_TIMEOUT_MS = 5_000;

export interface Devnet {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/** `stableroute devnet --json` with `extraArgs` (e.g. `--signer pkcs11`), its output collected. */
export function startDevnet(extraArgs: string[] = []): Devnet {
  let stdout = '';
  let stderr = '';
  const child = spawn(process.execPath, [BIN, 'devnet', ...extraArgs, '--json'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** The first line a devnet prints on stdout, once it is there; throws if the process exits first. */
export async function jsonLine(stdout: () => string, child: ChildProcess, output: () => string): Promise<Record<string, string>> {
  const { line } = await waitFor(
    'devnet --json line',
    async () => {
      const out = stdout();
      if (out.includes('\n')) return { line: out.slice(0, out.indexOf('\n')) };
      return child.exitCode !== null && { line: undefined };
    },
    DEVNET_READY_MS,
  );
  if (line === undefined) throw new Error(`devnet exited early: ${output().slice(-2000)}`);
  return JSON.parse(line) as Record<string, string>;
}

/** One JSON-RPC call over HTTP (either chain of the devnet); its error, if any, thrown. */
export async function jsonRpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
  });
  const body = (await res.json()) as { result?: T; error?: unknown };
  if (body.error !== undefined) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result as T;
}
