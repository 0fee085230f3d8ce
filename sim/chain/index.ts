// The simulated chain world of issue 37: an in-memory EVM chain and Solana chain behind the real ChainAdapter port, so
// that the core (execution, confirmation, replacement, batches, deposits) runs against them unchanged, with the chain
// faults of the fault plan injected where a real network shows them. Time moves only with the injected clock: every
// adapter call brings the chain up to clock.now() first, and tick() does so for the simulator between steps.
import type { Clock } from '../../src/clock.js';
import { simulatedTreasuryAddress } from '../../src/chains/simulated/adapter.js';
import type { ChainAdapter, ChainAdapters } from '../../src/chains/port.js';
import { DEFAULT_CHAINS } from '../../src/domain/chain-presets.js';
import type { Chain } from '../../src/domain/chain.js';
import type { FaultPlan } from '../faults/plan.js';
import type { Rng } from '../rng.js';
import { profileOf, SignedLog } from './common.js';
import { createEvmAdapter } from './evm-adapter.js';
import { EvmWorld } from './evm.js';
import { createSolanaAdapter } from './solana-adapter.js';
import { SolanaWorld } from './solana.js';
import type { ExternalTransferInput, LandedTransfer, MinedTransaction, SignedRecord } from './types.js';

export type { ExternalTransferInput, LandedTransfer, MinedTransaction, SignedRecord } from './types.js';

export interface SimChainsOptions {
  clock: Clock;
  rng: Rng;
  faults: FaultPlan;
  /** Unused: the world lives in memory (decision 205). Accepted so the world's builder may pass its pool. */
  db?: unknown;
  /** Chains with a preset (src/domain/chain-presets.ts); the spec's two by default. */
  chains?: readonly Chain[];
  /** USDC each treasury holds at genesis, in micro-units; 1,000,000 USDC by default. */
  openingUsdcMicros?: bigint;
}

export interface SimChains {
  adapters: ChainAdapters;
  /** Mines, finalises and reorganises every chain up to clock.now(). */
  tick(): void;
  /** Every payout in a block of a canonical chain that did not revert, included or final. */
  landedTransfers(): LandedTransfer[];
  /** Every transaction of a treasury in a block of a canonical chain, with the fee it cost (reverted ones included). */
  minedTransactions(): MinedTransaction[];
  /** Every distinct signed transaction a broadcast showed the chains, in the order first seen. */
  signedTransactions(): SignedRecord[];
  /** A transfer from outside (a deposit, a return): in the balances at once, final at its chain's depth. */
  externalTransfer(transfer: ExternalTransferInput): string;
  /** What an address holds on a chain now, USDC micro-units and native units. */
  balanceOf(chain: Chain, address: string): { usdcMicros: bigint; nativeUnits: bigint };
  /** The chain's height now (blocks, slots). */
  height(chain: Chain): number;
  /**
   * An EVM chain's fee spike: what a payout must pay per transaction to be mined (null: back to normal). Transfers
   * signed before it wait in the pool until replaced with a higher fee, as on a congested chain.
   */
  congest(chain: Chain, feeNative: bigint | null): void;
}

export function createSimChains(options: SimChainsOptions): SimChains {
  const signedLog = new SignedLog();
  const seed = String(options.rng.int(0, 2 ** 31));
  const worlds = new Map<Chain, EvmWorld | SolanaWorld>();
  const adapters: Record<Chain, ChainAdapter> = {};
  for (const chain of options.chains ?? DEFAULT_CHAINS) {
    const profile = profileOf(chain);
    const deps = { clock: options.clock, rng: options.rng.fork(`chain:${chain}`), faults: options.faults, signedLog };
    const treasury = simulatedTreasuryAddress(chain, `sim:${seed}`);
    const opening = options.openingUsdcMicros ?? 1_000_000_000_000n;
    if (profile.family === 'evm') {
      const world = new EvmWorld(profile, treasury, deps, opening);
      worlds.set(chain, world);
      adapters[chain] = createEvmAdapter(world);
    } else {
      const world = new SolanaWorld(profile, treasury, deps, opening);
      worlds.set(chain, world);
      adapters[chain] = createSolanaAdapter(world);
    }
  }
  const worldOf = (chain: Chain) => {
    const world = worlds.get(chain);
    if (world === undefined) throw new RangeError(`no simulated ${chain} chain`);
    return world;
  };
  return {
    adapters,
    tick: () => worlds.forEach((world) => world.tick()),
    landedTransfers: () => [...worlds.values()].flatMap((world) => world.landedTransfers()),
    minedTransactions: () => [...worlds.values()].flatMap((world) => world.minedTransactions()),
    signedTransactions: () => signedLog.all(),
    externalTransfer: (transfer) => worldOf(transfer.chain).externalTransfer(transfer),
    balanceOf(chain, address) {
      const world = worldOf(chain);
      world.tick();
      return { usdcMicros: world.balances.usdcOf(address), nativeUnits: world.balances.nativeOf(address) };
    },
    congest(chain, feeNative) {
      const world = worldOf(chain);
      if (!(world instanceof EvmWorld)) throw new RangeError(`${chain} has no fee market to congest`);
      world.congest(feeNative);
    },
    height(chain) {
      const world = worldOf(chain);
      world.tick();
      return world.height;
    },
  };
}
