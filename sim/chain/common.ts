// What both simulated chain families share: how a chain is timed and priced (its preset, as the real chain), the
// balances of the addresses it knows, the record of what the treasury signed and what landed, and the checks every
// request passes before anything is built.
import { SIMULATED_BATCH_TRANSFER_FEE_PERCENT } from '../../src/bounds.js';
import { ChainError, type TransferRequest } from '../../src/chains/port.js';
import { isWellFormedAddress, sameAddress } from '../../src/domain/addresses.js';
import { CHAIN_PRESETS, DEFAULT_NATIVE_USD_PRICES, NATIVE_DECIMALS, type ChainFamily } from '../../src/domain/chain-presets.js';
import { familyOf, type Chain } from '../../src/domain/chain.js';
import type { LandedTransfer, SignedRecord } from './types.js';
import type { WireTx } from './wire.js';

export interface ChainProfile {
  chain: Chain;
  family: ChainFamily;
  nativeCurrency: string;
  nativeDecimals: number;
  nativeUsdPrice: number;
  blockMs: number;
  /** Blocks from the one holding a transaction to the one that makes it final, that one included. */
  finalityBlocks: number;
  /** What a transaction of one payout pays. */
  feeNative: bigint;
  openingNative: bigint;
}

export function profileOf(chain: Chain): ChainProfile {
  const preset = CHAIN_PRESETS[chain];
  if (preset === undefined) throw new RangeError(`the simulated chains know the chains with a preset, not ${chain}`);
  const decimals = NATIVE_DECIMALS[preset.family];
  const blockMs = Math.round(preset.blockSeconds * 1000);
  const finalityBlocks = preset.finality === 'confirmations' ? preset.confirmations : Math.max(1, Math.round(preset.finalSeconds / preset.blockSeconds));
  return {
    chain,
    family: preset.family,
    nativeCurrency: preset.nativeCurrency,
    nativeDecimals: decimals,
    nativeUsdPrice: DEFAULT_NATIVE_USD_PRICES[preset.nativeCurrency] ?? 1,
    blockMs,
    finalityBlocks,
    feeNative: preset.transferFeeNative,
    openingNative: (preset.family === 'solana' ? 1000n : 100n) * 10n ** BigInt(decimals),
  };
}

/** What a transaction of `payouts` payouts costs when one of its own costs `single` (as src/chains/simulated). */
export function batchFee(single: bigint, payouts: number): bigint {
  return single + (single * SIMULATED_BATCH_TRANSFER_FEE_PERCENT * BigInt(Math.max(0, payouts - 1))) / 100n;
}

/** Balances by address, USDC and native, normalised as the chain compares addresses. */
export class Balances {
  private readonly usdc = new Map<string, bigint>();
  private readonly native = new Map<string, bigint>();
  constructor(private readonly chain: Chain) {}
  private key(address: string): string {
    return familyOf(this.chain) === 'evm' ? address.toLowerCase() : address;
  }
  usdcOf(address: string): bigint {
    return this.usdc.get(this.key(address)) ?? 0n;
  }
  nativeOf(address: string): bigint {
    return this.native.get(this.key(address)) ?? 0n;
  }
  addUsdc(address: string, amount: bigint): void {
    this.usdc.set(this.key(address), this.usdcOf(address) + amount);
  }
  addNative(address: string, amount: bigint): void {
    this.native.set(this.key(address), this.nativeOf(address) + amount);
  }
}

/** What a transaction moved when it landed, so that a reorganisation can take it back exactly. */
export interface Effects {
  fee: bigint;
  /** Empty when it reverted (or is a cancel). */
  payouts: { to: string; amount: bigint }[];
  reverted: boolean;
}

export function apply(balances: Balances, treasury: string, effects: Effects, sign: 1n | -1n): void {
  balances.addNative(treasury, -sign * effects.fee);
  for (const p of effects.payouts) {
    balances.addUsdc(treasury, -sign * p.amount);
    balances.addUsdc(p.to, sign * p.amount);
  }
}

/** The recipients the token refuses (a frozen, blacklisted address): a transfer to one reverts. */
export class Frozen {
  private readonly set = new Set<string>();
  constructor(private readonly chain: Chain) {}
  has(address: string): boolean {
    return [...this.set].some((a) => sameAddress(this.chain, a, address));
  }
  add(address: string): void {
    this.set.add(address);
  }
}

/** The treasury cannot pay itself: nothing would move, yet the books would show a payout. */
export function isRecipient(chain: Chain, treasury: string, address: string): boolean {
  return isWellFormedAddress(chain, address) && !sameAddress(chain, address, treasury);
}

/**
 * The request refused before anything is built: a recipient that is not valid or is frozen (the node's estimate would
 * revert), a non-positive amount. Null when it may go.
 */
export function refusalOf(chain: Chain, treasury: string, frozen: Frozen, request: TransferRequest): ChainError | null {
  if (!isRecipient(chain, treasury, request.to)) {
    return new ChainError('invalid_destination', 'rejected', 'not a valid recipient on this chain', { details: request.to });
  }
  if (request.amountMicros <= 0n) {
    return new ChainError('internal_error', 'rejected', 'transfer amount must be positive', { details: String(request.amountMicros) });
  }
  if (frozen.has(request.to)) {
    return new ChainError('reverted', 'rejected', 'the transfer would revert', { details: `the token refuses ${request.to}` });
  }
  return null;
}

/** The world's record for the invariants: every signed transaction seen by a broadcast, once, in the order seen. */
export class SignedLog {
  private readonly records = new Map<string, SignedRecord>();
  /** (chain, nonce) -> the first tx seen on it. */
  private readonly firstOnNonce = new Map<string, string>();
  private readonly reverted = new Map<string, number>();

  /** A transaction landed and reverted, final from `finalAt` (null: a reorganisation took its landing back). */
  revert(txId: string, finalAt: number | null): void {
    if (finalAt === null) this.reverted.delete(txId);
    else this.reverted.set(txId, finalAt);
  }

  see(body: WireTx, txId: string, at: Date, height: number): void {
    if (this.records.has(txId)) return;
    let replacementOf: string | null = null;
    if (body.nonce !== undefined) {
      const key = `${body.chain}\u0000${body.from.toLowerCase()}\u0000${body.nonce}`;
      const first = this.firstOnNonce.get(key);
      if (first === undefined) this.firstOnNonce.set(key, txId);
      else replacementOf = first;
    }
    this.records.set(txId, {
      chain: body.chain,
      txId,
      treasury: body.from,
      nonce: body.nonce ?? null,
      blockhash: body.blockhash ?? null,
      lastValidHeight: body.lastValidHeight ?? null,
      paymentIds: body.payouts.map((p) => p.ref),
      purpose: body.purpose,
      replacementOf,
      firstSeenAt: at,
      seenAtHeight: height,
      revertedFinalAt: null,
    });
  }

  all(): SignedRecord[] {
    return [...this.records.values()].map((r) => ({ ...r, revertedFinalAt: this.reverted.get(r.txId) ?? null }));
  }
}

/** The landed transfers of a transaction's body, as the invariants read them. */
export function landedOf(chain: Chain, txId: string, body: WireTx, block: number, final: boolean): LandedTransfer[] {
  return body.payouts.map((p) => ({
    chain,
    txId,
    paymentId: p.ref,
    to: p.to,
    amountMicros: BigInt(p.amount),
    state: final ? 'final' : 'included',
    block,
  }));
}
