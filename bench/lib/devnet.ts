// The local real chains (`stableroute devnet`: anvil, and the LiteSVM-backed Solana endpoint) as the bench uses them:
// started as operators start them, and watched from outside. The watcher asks each chain for its head every
// WATCH_MS and keeps the instant it first saw each block or finalized slot, so when a transfer became final is known
// to within that interval, from the chain's own answers and not from the service's.
import { jsonLine, jsonRpc, startDevnet } from '../../test/helpers/devnet-process.js';
import { killOnExit } from './service.js';

const WATCH_MS = 25;

export interface BenchDevnet {
  /** The variables `stableroute devnet --json` printed, for the service's environment. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

/** `stableroute devnet --json`, as operators start it, once it has printed its variables. */
export async function startBenchDevnet(): Promise<BenchDevnet> {
  const devnet = startDevnet();
  killOnExit(devnet.child, 'SIGTERM');
  const stop = async () => {
    if (devnet.child.exitCode !== null) return;
    devnet.child.kill('SIGTERM');
    await devnet.exited;
  };
  try {
    return { env: await jsonLine(devnet.stdout, devnet.child, devnet.stderr), stop };
  } catch (error) {
    await stop();
    throw error;
  }
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
      seen(ethereumHeads, Number(BigInt(await jsonRpc<string>(ethereumUrl, 'eth_blockNumber'))));
    }),
    poll(async () => {
      seen(finalizedSlots, await jsonRpc<number>(solanaUrl, 'getSlot', [{ commitment: 'finalized' }]));
    }),
  ];
  return {
    async ethereumFinalAt(txHash, confirmations) {
      const receipt = await jsonRpc<{ blockNumber: string } | null>(ethereumUrl, 'eth_getTransactionReceipt', [txHash]);
      if (!receipt) return null;
      return firstAtOrPast(ethereumHeads, Number(BigInt(receipt.blockNumber)) + confirmations - 1);
    },
    async solanaFinalAt(signature) {
      const { value } = await jsonRpc<{ value: ({ slot: number } | null)[] }>(solanaUrl, 'getSignatureStatuses', [[signature], { searchTransactionHistory: true }]);
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
