// The local real chains (`stableroute devnet`: anvil, and the LiteSVM-backed Solana endpoint) as the bench uses them:
// started as operators start them, and watched from outside. The watcher asks each chain for its head every
// WATCH_MS and keeps the instant it first saw each block or finalized slot, so when a transfer became final is known
// to within that interval, from the chain's own answers and not from the service's.
import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { BIN } from '../../test/helpers/process.js';

const READY_MS = 60_000;
const WATCH_MS = 25;

export interface BenchDevnet {
  /** The variables `stableroute devnet --json` printed, for the service's environment. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startDevnet(): Promise<BenchDevnet> {
  let stdout = '';
  let stderr = '';
  const child: ChildProcess = spawn(process.execPath, [BIN, 'devnet', '--json'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
  const orphaned = () => void child.kill('SIGKILL');
  process.on('exit', orphaned);
  const stop = async () => {
    process.removeListener('exit', orphaned);
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  const deadline = performance.now() + READY_MS;
  while (!stdout.includes('\n')) {
    if (child.exitCode !== null || performance.now() > deadline) {
      await stop();
      throw new Error(`stableroute devnet did not start: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { env: JSON.parse(stdout.slice(0, stdout.indexOf('\n'))) as Record<string, string>, stop };
}

async function rpc<T>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(5_000),
  });
  const body = (await res.json()) as { result?: T; error?: unknown };
  if (body.error !== undefined) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result as T;
}

export interface HeadWatcher {
  /** When the Ethereum block holding `txHash` had `confirmations` blocks (the adapter's finality), in Date.now() time. */
  ethereumFinalAt(txHash: string, confirmations: number): Promise<number | null>;
  /** When the Solana slot holding `signature` was first reported finalized. */
  solanaFinalAt(signature: string): Promise<number | null>;
  stop(): Promise<void>;
}

/** Polls both heads every WATCH_MS: Ethereum's latest block number, Solana's finalized slot. */
export function watchHeads(ethereumUrl: string, solanaUrl: string): HeadWatcher {
  // Heads in the order first seen: a transfer is final at the first head at or past the one that makes it final.
  const ethereumHeads: { head: number; at: number }[] = [];
  const finalizedSlots: { head: number; at: number }[] = [];
  const seen = (heads: { head: number; at: number }[], head: number) => {
    if (head > (heads.at(-1)?.head ?? -1)) heads.push({ head, at: Date.now() });
  };
  const firstAtOrPast = (heads: readonly { head: number; at: number }[], head: number) => heads.find((h) => h.head >= head)?.at ?? null;
  let running = true;
  const poll = async (read: () => Promise<void>) => {
    while (running) {
      await read().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, WATCH_MS));
    }
  };
  const loops = [
    poll(async () => {
      seen(ethereumHeads, Number(BigInt(await rpc<string>(ethereumUrl, 'eth_blockNumber'))));
    }),
    poll(async () => {
      seen(finalizedSlots, await rpc<number>(solanaUrl, 'getSlot', [{ commitment: 'finalized' }]));
    }),
  ];
  return {
    async ethereumFinalAt(txHash, confirmations) {
      const receipt = await rpc<{ blockNumber: string } | null>(ethereumUrl, 'eth_getTransactionReceipt', [txHash]);
      if (!receipt) return null;
      return firstAtOrPast(ethereumHeads, Number(BigInt(receipt.blockNumber)) + confirmations - 1);
    },
    async solanaFinalAt(signature) {
      const { value } = await rpc<{ value: ({ slot: number } | null)[] }>(solanaUrl, 'getSignatureStatuses', [[signature], { searchTransactionHistory: true }]);
      const slot = value[0]?.slot;
      if (slot === undefined) return null;
      return firstAtOrPast(finalizedSlots, slot);
    },
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}
