// A simulated EVM chain in memory: one treasury account whose transactions wait in a mempool keyed by nonce, are mined
// in blocks as the clock moves (consecutive nonces only, so a gap holds everything above it), become final N blocks
// deep, and can be reorganised away before that. A same-nonce transaction replaces a pending one only with a fee at
// least 10% higher (geth's rule). Batches pay several payouts in one transaction and revert whole when the token
// refuses one recipient. The faults of issue 37 are injected when the fault plan says so; the adapter (evm-adapter.ts)
// answers as src/chains/ethereum does over a node behaving like this.
import type { Clock } from '../../src/clock.js';
import { ChainError, type SignedTransfer, type TxStatus } from '../../src/chains/port.js';
import type { Rng } from '../rng.js';
import type { FaultPlan } from '../faults/plan.js';
import { apply, Balances, batchFee, Frozen, SignedLog, landedOf, type ChainProfile, type Effects } from './common.js';
import { InboundLog } from './inbound.js';
import type { ExternalTransferInput, LandedTransfer, MinedTransaction } from './types.js';
import { decodeTx, totalOf, type WireTx } from './wire.js';

/** geth replaces a pending transaction only when the new one pays at least this much more, in percent. */
const REPLACEMENT_BUMP_PERCENT = 10n;

interface Known {
  signed: SignedTransfer;
  body: WireTx & { nonce: number };
}

interface Inclusion {
  block: number;
  effects: Effects;
}


export interface WorldDeps {
  clock: Clock;
  rng: Rng;
  faults: FaultPlan;
  signedLog: SignedLog;
}

export class EvmWorld {
  readonly balances: Balances;
  private readonly inbound: InboundLog;
  readonly frozen: Frozen;
  private readonly genesisMs: number;
  height = 0;
  /** Transactions the chain has ever taken (pool or block), by tx id. */
  private readonly known = new Map<string, Known>();
  /** The mempool: nonce -> tx id. */
  private readonly pool = new Map<number, string>();
  /** Canonical inclusions, by tx id; blocks -> tx ids in order. */
  private readonly included = new Map<string, Inclusion>();
  private readonly blocks = new Map<number, string[]>();
  /** The treasury's mined transaction count. */
  private minedNonce = 0;
  /** What a transaction of one payout must pay to be mined now: the profile's fee, more while the chain is congested. */
  marketFee: bigint;

  constructor(
    readonly profile: ChainProfile,
    readonly treasury: string,
    private readonly deps: WorldDeps,
    openingUsdc: bigint,
  ) {
    this.genesisMs = deps.clock.now().getTime();
    this.balances = new Balances(profile.chain);
    this.inbound = new InboundLog('evm', profile.chain, this.balances, -1);
    this.frozen = new Frozen(profile.chain);
    this.balances.addUsdc(treasury, openingUsdc);
    this.balances.addNative(treasury, profile.openingNative);
    this.marketFee = profile.feeNative;
  }

  /**
   * A fee spike (null: it ends): transactions paying less than `feeNative` per payout wait in the pool, and every later
   * nonce behind them, until a replacement outbids it or the spike ends. What strands a transfer for an operator.
   */
  congest(feeNative: bigint | null): void {
    this.tick();
    this.marketFee = feeNative ?? this.profile.feeNative;
  }

  private get chain(): string {
    return this.profile.chain;
  }

  /** Mines, finalises and reorganises up to the clock. Idempotent; every adapter call runs it first. */
  tick(): void {
    const target = Math.floor((this.deps.clock.now().getTime() - this.genesisMs) / this.profile.blockMs);
    if (target <= this.height) return;
    for (const nonce of [...this.pool.keys()]) {
      if (this.deps.faults.roll('chain.dropped_from_pool')) this.pool.delete(nonce);
    }
    // Block by block while the pool has the next nonce; then straight to the head (empty blocks change nothing).
    while (this.height < target && this.pool.has(this.minedNonce) && this.mine(this.height + 1) > 0);
    this.height = target;
    const unfinal = this.unfinalBlocks();
    if (unfinal.length > 0 && this.deps.faults.roll('chain.reorg_below_finality')) {
      // The newest blocks down to one of the unfinal ones holding a transaction are replaced by empty ones: their
      // transactions go back to the pool, to be mined again in a later block.
      this.reorgFrom(this.deps.rng.pick(unfinal));
    }
  }

  /** Blocks above final depth that hold a transaction, oldest first. */
  private unfinalBlocks(): number[] {
    const lowest = this.height - this.profile.finalityBlocks + 2;
    return [...this.blocks.keys()].filter((b) => b >= lowest).sort((a, b) => a - b);
  }

  /** Mines the next block; the number of transactions it holds. */
  private mine(block: number): number {
    this.height = block;
    const txs: string[] = [];
    for (let txId = this.pool.get(this.minedNonce); txId !== undefined; txId = this.pool.get(this.minedNonce)) {
      const { body } = this.known.get(txId)!;
      const fee = BigInt(body.fee);
      // Not enough for gas, or a fee below the market's: it waits in the pool, and every later nonce behind it.
      if (this.balances.nativeOf(this.treasury) < fee || fee < batchFee(this.marketFee, body.payouts.length || 1)) break;
      const effects = this.execute(body, fee);
      apply(this.balances, this.treasury, effects, 1n);
      this.pool.delete(this.minedNonce);
      this.included.set(txId, { block, effects });
      if (effects.reverted) this.deps.signedLog.revert(txId, block + this.profile.finalityBlocks - 1);
      txs.push(txId);
      this.minedNonce += 1;
    }
    if (txs.length > 0) this.blocks.set(block, txs);
    return txs.length;
  }

  private execute(body: WireTx, fee: bigint): Effects {
    const payouts = body.payouts.map((p) => ({ to: p.to, amount: BigInt(p.amount) }));
    if (body.purpose === 'cancel') return { fee, payouts: [], reverted: false };
    if (payouts.length > 1 && this.deps.faults.roll('chain.batch_reverted_by_recipient')) {
      this.frozen.add(this.deps.rng.pick(payouts).to);
    }
    const refused = payouts.some((p) => this.frozen.has(p.to));
    if (refused || this.balances.usdcOf(this.treasury) < totalOf(body)) return { fee, payouts: [], reverted: true };
    return { fee, payouts, reverted: false };
  }

  /** Takes back every block from `from` up: its transactions return to the pool, on their nonces. */
  private reorgFrom(from: number): void {
    const undone = [...this.blocks.keys()].filter((b) => b >= from).sort((a, b) => b - a);
    for (const block of undone) {
      for (const txId of [...this.blocks.get(block)!].reverse()) {
        const inclusion = this.included.get(txId)!;
        apply(this.balances, this.treasury, inclusion.effects, -1n);
        this.included.delete(txId);
        this.deps.signedLog.revert(txId, null);
        this.minedNonce -= 1;
        this.pool.set(this.known.get(txId)!.body.nonce, txId);
      }
      this.blocks.delete(block);
    }
  }

  /** The node's view, `lag` blocks behind the chain's head. */
  private viewHeight(): number {
    if (!this.deps.faults.roll('chain.node_lags')) return this.height;
    return Math.max(0, this.height - this.deps.rng.int(1, this.profile.finalityBlocks));
  }

  head(): string {
    this.tick();
    return String(this.viewHeight());
  }

  /** The treasury's transaction count with the pool's consecutive pending ones: eth_getTransactionCount 'pending'. */
  pendingNonce(): number {
    this.tick();
    let n = this.minedNonce;
    while (this.pool.has(n)) n += 1;
    return n;
  }

  /** The last transaction the treasury sent on `nonce` the pool or a block has, for a replacement's fee. */
  feeOnNonce(nonce: number): bigint | null {
    const txId = this.pool.get(nonce) ?? [...this.included].find(([id]) => this.known.get(id)!.body.nonce === nonce)?.[0];
    return txId === undefined ? null : BigInt(this.known.get(txId)!.body.fee);
  }

  /**
   * eth_sendRawTransaction as src/chains/ethereum/broadcast.ts sees it: bytes the node has (pool or block) are a
   * success whatever the node answers; otherwise its refusal as that adapter maps it (errors.ts).
   */
  broadcast(signed: SignedTransfer): void {
    this.tick();
    const body = decodeTx(this.chain, 'evm', signed) as Known['body'];
    if (typeof body.nonce !== 'number') throw new ChainError('rpc_error', 'rejected', 'eth_sendRawTransaction failed: the node refused the transaction as invalid', { details: 'no nonce' });
    // Gas prices moved between the estimate and the send: the node refuses the bytes outright, before its pool sees
    // them (a definitive refusal, so the payment is signed again: the path double-debit needs, issue 37).
    if (!this.holds(signed.txId) && this.deps.faults.roll('chain.send_refused')) {
      throw new ChainError('rpc_error', 'rejected', 'eth_sendRawTransaction failed: maxFeePerGas is below the current base fee', { details: 'max fee per gas less than block base fee' });
    }
    this.deps.signedLog.see(body, signed.txId, this.deps.clock.now(), this.height);
    if (this.holds(signed.txId)) return;
    // A load-balanced endpoint whose backend lags or disagrees: it refuses bytes it does not have, and the adapter's
    // look-up of our hash finds nothing.
    if (this.deps.faults.roll('chain.nonce_too_low')) throw conflict('the node reports the nonce already used', 'nonce too low');
    if (this.deps.faults.roll('chain.already_known')) {
      throw new ChainError('rpc_error', 'unknown', 'eth_sendRawTransaction failed: the node claims to know a transaction it cannot find', { details: 'already known' });
    }
    if (body.nonce < this.minedNonce) {
      const original = this.includedOnNonce(body.nonce);
      const unfinal = original !== null && this.height - original.block + 1 < this.profile.finalityBlocks;
      // A reorganisation under the original, and the replacement (or cancel) is the one the new chain mines.
      if (!(unfinal && this.deps.faults.roll('chain.replacement_lands'))) throw conflict('the node reports the nonce already used', 'nonce too low');
      this.reorgFrom(original.block);
    }
    const fee = BigInt(body.fee);
    const pending = this.pool.get(body.nonce);
    if (pending !== undefined) {
      const pendingFee = BigInt(this.known.get(pending)!.body.fee);
      if (fee * 100n < pendingFee * (100n + REPLACEMENT_BUMP_PERCENT)) {
        throw conflict('the node holds another transaction on this nonce with a higher fee', 'replacement transaction underpriced');
      }
    }
    if (this.balances.nativeOf(this.treasury) < fee) {
      throw new ChainError('insufficient_gas', 'rejected', 'eth_sendRawTransaction failed: the treasury lacks ETH for gas', { details: 'insufficient funds for gas * price + value' });
    }
    this.known.set(signed.txId, { signed, body });
    this.pool.set(body.nonce, signed.txId);
    if (this.deps.faults.roll('chain.send_timeout_after_accept')) {
      throw new ChainError('rpc_timeout', 'unknown', 'eth_sendRawTransaction failed: the node did not answer in time', { details: 'the request took too long' });
    }
  }

  private holds(txId: string): boolean {
    if (this.included.has(txId)) return true;
    const known = this.known.get(txId);
    return known !== undefined && this.pool.get(known.body.nonce) === txId;
  }

  private includedOnNonce(nonce: number): (Inclusion & { txId: string }) | null {
    for (const [txId, inclusion] of this.included) if (this.known.get(txId)!.body.nonce === nonce) return { txId, ...inclusion };
    return null;
  }

  /** As src/chains/ethereum/status.ts reads them, from one view of the chain for the whole call. */
  statuses(signed: readonly SignedTransfer[]): TxStatus[] {
    this.tick();
    const view = this.viewHeight();
    const finalBlock = view - this.profile.finalityBlocks + 1;
    return signed.map((s) => {
      const body = decodeTx(this.chain, 'evm', s) as Known['body'];
      const inclusion = this.included.get(s.txId);
      if (inclusion && inclusion.block <= view) {
        if (inclusion.block > finalBlock) return { state: 'included', confirmations: view - inclusion.block + 1 };
        const feeNative = inclusion.effects.fee;
        if (inclusion.effects.reverted) return { state: 'failed', reason: 'reverted', feeNative, details: `reverted in block ${inclusion.block}` };
        const finalAt = new Date(this.genesisMs + (inclusion.block + this.profile.finalityBlocks - 1) * this.profile.blockMs);
        return { state: 'final', feeNative, finalAt };
      }
      const other = this.includedOnNonce(body.nonce);
      if (other && other.txId !== s.txId && other.block <= finalBlock) {
        return { state: 'failed', reason: 'nonce_conflict', feeNative: 0n, details: `nonce ${body.nonce} of ${this.treasury} was used by another transaction` };
      }
      return this.holds(s.txId) ? { state: 'pending' } : { state: 'unknown' };
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
    return this.inbound.after(position, page, this.height - this.profile.finalityBlocks + 1, (to) => to.toLowerCase() === this.treasury.toLowerCase());
  }

  landedTransfers(): LandedTransfer[] {
    const finalBlock = this.height - this.profile.finalityBlocks + 1;
    return [...this.included].flatMap(([txId, inclusion]) =>
      inclusion.effects.reverted ? [] : landedOf(this.chain, txId, this.known.get(txId)!.body, inclusion.block, inclusion.block <= finalBlock),
    );
  }

  minedTransactions(): MinedTransaction[] {
    const finalBlock = this.height - this.profile.finalityBlocks + 1;
    return [...this.included].map(([txId, inclusion]) => {
      const { body } = this.known.get(txId)!;
      const { fee, reverted } = inclusion.effects;
      return { chain: this.chain, txId, block: inclusion.block, feeNative: fee, reverted, purpose: body.purpose, paymentIds: body.payouts.map((p) => p.ref), final: inclusion.block <= finalBlock };
    });
  }
}

function conflict(summary: string, nodeSays: string): ChainError {
  return new ChainError('nonce_conflict', 'unknown', `eth_sendRawTransaction failed: ${summary}`, { details: nodeSays });
}
