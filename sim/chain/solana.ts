// A simulated Solana chain in memory: a blockhash read at a block height is valid for BLOCKHASH_VALID_BLOCKS more
// blocks; a transaction the node took lands in the next block while its blockhash is valid, and is forgotten after;
// a landed one is finalized `finalityBlocks` later and can be rolled back (a fork) before that. No nonces: the
// signature is the id, and the same bytes land at most once. A batch of payouts in one transaction fails whole (its
// fee paid) when the token refuses one recipient. The adapter (solana-adapter.ts) answers as src/chains/solana does
// over a node behaving like this.
import { ChainError, type SignedTransfer, type TxStatus } from '../../src/chains/port.js';
import { apply, Balances, Frozen, landedOf, type ChainProfile, type Effects } from './common.js';
import type { WorldDeps } from './evm.js';
import { InboundLog } from './inbound.js';
import type { ExternalTransferInput, LandedTransfer, MinedTransaction } from './types.js';
import { decodeTx, idOf, totalOf, type WireTx } from './wire.js';

/** One window of simulated time in SLOW_LEADER_EVERY has a slow leader (its sends time out, land late). */
const SLOW_LEADER_WINDOW_MS = 60_000;
const SLOW_LEADER_EVERY = 4;
/** How long after the send a slow leader's transaction lands: 50 slots, 20 s, well inside its blockhash's life. */
const SLOW_LEADER_LANDING_BLOCKS = 50;

/** Blocks a blockhash stays valid after the one it was read at, as on mainnet (~60 s). */
export const BLOCKHASH_VALID_BLOCKS = 150;

type Body = WireTx & { blockhash: string; lastValidHeight: number };

interface Pooled {
  /** The first block it may land in. */
  notBefore: number;
  /** Taken in this order: blocks land pooled transactions in it. */
  order: number;
}

interface Landing {
  block: number;
  effects: Effects;
}


export class SolanaWorld {
  readonly balances: Balances;
  private readonly inbound: InboundLog;
  readonly frozen: Frozen;
  private readonly genesisMs: number;
  height = 0;
  private readonly known = new Map<string, Body>();
  private readonly pool = new Map<string, Pooled>();
  private readonly landed = new Map<string, Landing>();
  private taken = 0;

  constructor(
    readonly profile: ChainProfile,
    readonly treasury: string,
    private readonly deps: WorldDeps,
    openingUsdc: bigint,
  ) {
    this.genesisMs = deps.clock.now().getTime();
    this.balances = new Balances(profile.chain);
    this.inbound = new InboundLog('solana', profile.chain, this.balances, 1);
    this.frozen = new Frozen(profile.chain);
    this.balances.addUsdc(treasury, openingUsdc);
    this.balances.addNative(treasury, profile.openingNative);
  }

  private get chain(): string {
    return this.profile.chain;
  }

  /** The blockhash of block `height`: what getLatestBlockhash answers there. */
  blockhashAt(height: number): string {
    return idOf('solana', 'blockhash', this.chain, String(height)).slice(0, 44);
  }

  latestBlockhash(): { blockhash: string; lastValidHeight: number } {
    this.tick();
    return { blockhash: this.blockhashAt(this.height), lastValidHeight: this.height + BLOCKHASH_VALID_BLOCKS };
  }

  private finalizedHeight(height = this.height): number {
    return height - this.profile.finalityBlocks;
  }

  tick(): void {
    const target = Math.floor((this.deps.clock.now().getTime() - this.genesisMs) / this.profile.blockMs);
    if (target <= this.height) return;
    for (const txId of [...this.pool.keys()]) {
      if (this.deps.faults.roll('chain.dropped_from_pool')) this.pool.delete(txId);
    }
    // Each pooled transaction lands in the first block it may, if its blockhash is still valid there.
    const due = [...this.pool]
      .map(([txId, pooled]) => ({ txId, block: Math.max(this.height + 1, pooled.notBefore), order: pooled.order }))
      .filter((d) => d.block <= target)
      .sort((a, b) => a.block - b.block || a.order - b.order);
    for (const { txId, block } of due) {
      this.pool.delete(txId);
      const body = this.known.get(txId)!;
      if (block > body.lastValidHeight) continue;
      const effects = this.execute(body);
      apply(this.balances, this.treasury, effects, 1n);
      this.landed.set(txId, { block, effects });
      if (effects.reverted) this.deps.signedLog.revert(txId, block + this.profile.finalityBlocks);
    }
    this.height = target;
    const unfinal = [...new Set([...this.landed.values()].map((l) => l.block))].filter((b) => b > this.finalizedHeight()).sort((a, b) => a - b);
    if (unfinal.length > 0 && this.deps.faults.roll('chain.reorg_below_finality')) this.rollBackFrom(this.deps.rng.pick(unfinal));
  }

  private execute(body: Body): Effects {
    const fee = BigInt(body.fee);
    const payouts = body.payouts.map((p) => ({ to: p.to, amount: BigInt(p.amount) }));
    if (payouts.length > 1 && this.deps.faults.roll('chain.batch_reverted_by_recipient')) this.frozen.add(this.deps.rng.pick(payouts).to);
    const refused = payouts.some((p) => this.frozen.has(p.to));
    if (refused || this.balances.usdcOf(this.treasury) < totalOf(body)) return { fee, payouts: [], reverted: true };
    return { fee, payouts, reverted: false };
  }

  /** A fork: what landed from block `from` up did not; each goes back to the pool, to land again while it is valid. */
  private rollBackFrom(from: number): void {
    const undone = [...this.landed].filter(([, l]) => l.block >= from).sort(([, a], [, b]) => b.block - a.block);
    for (const [txId, landing] of undone) {
      apply(this.balances, this.treasury, landing.effects, -1n);
      this.landed.delete(txId);
      this.deps.signedLog.revert(txId, null);
      this.pool.set(txId, { notBefore: this.height + 1, order: ++this.taken });
    }
  }

  private viewHeight(): number {
    if (!this.deps.faults.roll('chain.node_lags')) return this.height;
    return Math.max(0, this.height - this.deps.rng.int(1, this.profile.finalityBlocks));
  }

  head(): string {
    this.tick();
    return String(this.viewHeight());
  }

  /**
   * sendTransaction as src/chains/solana/broadcast.ts sees it: bytes that landed or wait are a success; a refusal is
   * 'rejected' only once the finalized height is past the blockhash's last valid height, 'unknown' before.
   */
  broadcast(signed: SignedTransfer): void {
    this.tick();
    const body = decodeTx(this.chain, 'solana', signed) as Body;
    if (typeof body.blockhash !== 'string' || typeof body.lastValidHeight !== 'number') {
      throw new ChainError('rpc_error', 'rejected', 'Solana node refused the transfer as invalid (rpc_error)', { details: 'no blockhash' });
    }
    this.deps.signedLog.see(body, signed.txId, this.deps.clock.now(), this.height);
    if (this.landed.has(signed.txId) || this.pool.has(signed.txId)) return;
    if (this.height > body.lastValidHeight) this.refuse('blockhash_expired', body, 'Blockhash not found');
    const fee = BigInt(body.fee);
    if (this.balances.nativeOf(this.treasury) < fee) this.refuse('insufficient_gas', body, 'insufficient lamports for the fee');
    if (this.balances.usdcOf(this.treasury) < totalOf(body)) this.refuse('insufficient_funds', body, 'insufficient funds');
    this.known.set(signed.txId, body);
    // A node behind the cluster says it has never seen the blockhash, while the transaction reached the leader by
    // another path: it lands, at the very end of its blockhash's life.
    if (this.deps.faults.roll('chain.blockhash_expired_but_landed')) {
      this.pool.set(signed.txId, { notBefore: body.lastValidHeight, order: ++this.taken });
      this.refuse('blockhash_expired', body, 'Blockhash not found');
    }
    const timedOut = this.deps.faults.roll('chain.send_timeout_after_accept');
    // A slow leader (issue 37): for a while, every send times out after the node took the bytes, and they land only
    // some seconds later. Meanwhile the cluster does not know them (getSignatureStatuses answers nothing): the unknown
    // verdict an operator's cancel or an abandoned execution must take as "may still land".
    const slow = !this.deps.faults.calm && Math.floor(this.deps.clock.now().getTime() / SLOW_LEADER_WINDOW_MS) % SLOW_LEADER_EVERY === SLOW_LEADER_EVERY - 1;
    const notBefore = slow ? Math.min(this.height + SLOW_LEADER_LANDING_BLOCKS, body.lastValidHeight) : this.height + 1;
    this.pool.set(signed.txId, { notBefore, order: ++this.taken });
    if (slow && !timedOut) this.deps.faults.count('chain.send_timeout_after_accept');
    if (timedOut || slow) {
      throw new ChainError('rpc_timeout', 'unknown', 'sendTransaction timed out', { details: 'the request took too long' });
    }
  }

  private refuse(reason: 'blockhash_expired' | 'insufficient_gas' | 'insufficient_funds', body: Body, nodeSays: string): never {
    if (this.finalizedHeight() > body.lastValidHeight) {
      throw new ChainError(reason, 'rejected', `Solana node refused the transfer (${reason}); its blockhash has expired`, { details: nodeSays });
    }
    throw new ChainError(reason, 'unknown', `Solana node refused the transfer (${reason}); it may still land until its blockhash expires`, { details: nodeSays });
  }

  /** As src/chains/solana/status.ts reads them: one view of the cluster for the whole call. */
  statuses(signed: readonly SignedTransfer[]): TxStatus[] {
    this.tick();
    const view = this.viewHeight();
    return signed.map((s) => {
      const body = decodeTx(this.chain, 'solana', s) as Body;
      const landing = this.landed.get(s.txId);
      if (landing && landing.block <= view) {
        if (landing.block > this.finalizedHeight(view)) return { state: 'included', confirmations: view - landing.block + 1 };
        const feeNative = landing.effects.fee;
        if (landing.effects.reverted) return { state: 'failed', reason: 'reverted', feeNative, details: 'a recipient refused the transfer' };
        return { state: 'final', feeNative };
      }
      return this.finalizedHeight(view) > body.lastValidHeight ? { state: 'expired' } : { state: 'unknown' };
    });
  }

  externalTransfer(transfer: ExternalTransferInput): string {
    this.tick();
    return this.inbound.record(transfer, this.height);
  }

  inboundPosition(): string {
    this.tick();
    return this.inbound.position();
  }

  /** Transfers into the treasury after `position` (a sequence) that are final, oldest first, a page at a time. */
  inboundAfter(position: string, page: number) {
    this.tick();
    return this.inbound.after(position, page, this.finalizedHeight(), (to) => to === this.treasury);
  }

  landedTransfers(): LandedTransfer[] {
    const finalized = this.finalizedHeight();
    return [...this.landed].flatMap(([txId, l]) =>
      l.effects.reverted ? [] : landedOf(this.chain, txId, this.known.get(txId)!, l.block, l.block <= finalized),
    );
  }

  minedTransactions(): MinedTransaction[] {
    const finalized = this.finalizedHeight();
    return [...this.landed].map(([txId, l]) => {
      const body = this.known.get(txId)!;
      return { chain: this.chain, txId, block: l.block, feeNative: l.effects.fee, reverted: l.effects.reverted, purpose: body.purpose, paymentIds: body.payouts.map((p) => p.ref), final: l.block <= finalized };
    });
  }
}
