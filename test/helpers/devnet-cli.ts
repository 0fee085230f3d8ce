// `stableroute devnet` driven from the outside, as the CLI tests and the custody test use it: start it, read the
// environment it prints, pay through the HTTP API it was pointed at, and ask the Solana devnet plain JSON-RPC.
import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'vitest';
import { BIN, waitFor } from './process.js';

export const KEY = { 'content-type': 'application/json', 'x-api-key': 'dev' };
export const DEVNET_READY_MS = 30_000;
export const SETTLE_MS = 60_000;
export const EXIT_MS = 15_000;
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

/** The first line a devnet prints on stdout, once it is there; fails if the process exits first. */
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
  expect(line, `devnet exited early: ${output().slice(-2000)}`).toBeDefined();
  return JSON.parse(line!) as Record<string, string>;
}

/** Waits for `promise`, failing with `what` after `ms` (a process that hangs on SIGTERM fails the test, not the run). */
export async function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function solanaRpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
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

export type IntentView = { status: string; selected_chain: string; attempts: { tx_id: string; status: string }[] };

/** A quote, then a payment intent on it, through the service's HTTP API. */
export async function pay(base: string, amount_usd: number, destination: object, idempotency_key: string): Promise<string> {
  const quote = await fetch(`${base}/quotes`, { method: 'POST', headers: KEY, body: JSON.stringify({ amount_usd, destination, priority: 'fast' }) });
  const quoteBody = (await quote.json()) as { quote_id: string };
  expect(quote.status, JSON.stringify(quoteBody)).toBe(201);
  const intent = await fetch(`${base}/payment_intents`, { method: 'POST', headers: KEY, body: JSON.stringify({ quote_id: quoteBody.quote_id, idempotency_key }) });
  const intentBody = (await intent.json()) as { payment_intent_id: string };
  expect(intent.status, JSON.stringify(intentBody)).toBe(201);
  return intentBody.payment_intent_id;
}

export async function readIntent(base: string, id: string): Promise<IntentView> {
  const res = await fetch(`${base}/payment_intents/${id}`, { headers: KEY });
  expect(res.status).toBe(200);
  return (await res.json()) as IntentView;
}
