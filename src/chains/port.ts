// The ChainAdapter port: the one interface every chain (simulated, ethereum, solana) implements. It is shaped after
// the protocol, not after our workers: sign first (tx id known before anything is sent), send bytes (resending the
// same bytes is harmless), ask for status. Workers own all state; adapters own only what the chain needs (nonces).
import type { Queryable } from '../db/pool.js';

export type Chain = 'ethereum' | 'solana';
export const CHAINS: readonly Chain[] = ['ethereum', 'solana'];

/**
 * Stable failure reasons, grouped by /admin/failures. Never renamed once shipped; documented in docs/errors.md.
 * Rejections (the node refused the bytes, so they can never land) and unknown outcomes are told apart by
 * ChainError.outcome, not by the reason.
 */
export const FAILURE_REASONS = [
  'insufficient_gas', // treasury lacks native currency for the fee
  'insufficient_funds', // treasury lacks USDC on chain
  'rpc_timeout', // the node did not answer in time
  'rpc_error', // the node answered with an error we do not classify further
  'nonce_conflict', // the nonce was used by another transaction
  'reverted', // included on chain but execution failed; fee is still paid
  'blockhash_expired', // Solana: the blockhash expired before the transaction landed
  'dropped', // the node forgot the transaction and it can provably no longer land
  'invalid_destination', // the chain refused the recipient
  'stuck', // unconfirmed past STUCK_AFTER_SECONDS; set aside for manual review
  'operator_failed', // an operator failed the payment from manual review
  'internal_error', // our own bug or an exhausted job; see logs
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

export class ChainError extends Error {
  override readonly name = 'ChainError';
  readonly shortMessage: string;
  readonly details: string | undefined;
  constructor(
    readonly reason: FailureReason,
    /** rejected: the bytes can never land. unknown: they might have reached the chain (a timeout). */
    readonly outcome: 'rejected' | 'unknown',
    shortMessage: string,
    options: { details?: string; cause?: unknown } = {},
  ) {
    super(options.details ? `${shortMessage}\n\nDetails: ${options.details}` : shortMessage, { cause: options.cause });
    this.shortMessage = shortMessage;
    this.details = options.details;
  }
}

export interface TransferRequest {
  paymentIntentId: string;
  /** Recipient address on this chain, already validated. */
  to: string;
  amountMicros: bigint;
}

/** A signed transfer, persisted before it is sent. Re-sending rawTx is always safe. */
export interface SignedTransfer {
  txId: string;
  rawTx: string;
  /** Adapter-specific data needed to track or replace the transaction (nonce, fees, blockhash expiry...). JSON-safe. */
  meta: Record<string, string | number | boolean | null>;
  /**
   * The fee estimate the adapter read while signing, so that storing the attempt needs no RPC call: an adapter that
   * allocates nonces holds their lock until that transaction commits. Optional (an adapter may leave it out); never
   * persisted.
   */
  feeEstimate?: FeeEstimate;
}

export type TxStatus =
  | { state: 'unknown' } // never seen by the node (not yet propagated, or dropped)
  | { state: 'pending' } // accepted, not included
  | { state: 'included'; confirmations: number } // included, not final yet
  | { state: 'final'; feeNative: bigint } // final; fee in native smallest units
  | { state: 'failed'; reason: FailureReason; feeNative: bigint; details?: string } // included and failed, or can never land
  | { state: 'expired' }; // can provably never land (Solana blockhash expired and signature unknown)

export interface FeeEstimate {
  feeNative: bigint;
  feeUsd: number;
}

export interface HealthProbe {
  ok: boolean;
  latencyMs: number;
  error?: string;
  fee?: FeeEstimate;
  /** Expected seconds from broadcast to finality right now. */
  finalitySeconds?: number;
  /** 0 (idle) .. 1 (saturated), when the chain tells. */
  congestion?: number;
}

export interface ChainAdapter {
  readonly chain: Chain;
  readonly nativeCurrency: 'ETH' | 'SOL';
  readonly nativeDecimals: number;
  /** Whether this adapter talks to an outside network ('rpc') or is the built-in simulator. */
  readonly kind: 'simulated' | 'rpc';
  /** Expected seconds from broadcast to finality under normal conditions; routing default. */
  readonly typicalFinalitySeconds: number;

  treasuryAddress(): string;
  isValidAddress(address: string): boolean;
  estimateFee(): Promise<FeeEstimate>;
  /**
   * Builds and signs the transfer. `db` is the caller's open transaction: an adapter that allocates nonces does so
   * there, so the nonce and the persisted attempt commit together.
   */
  signTransfer(db: Queryable, request: TransferRequest): Promise<SignedTransfer>;
  /** Sends the signed bytes. Throws ChainError. Sending bytes the chain already has is a success. */
  broadcast(signed: SignedTransfer): Promise<void>;
  getStatus(signed: SignedTransfer): Promise<TxStatus>;
  probe(): Promise<HealthProbe>;
  /** On-chain USDC balance of the treasury, in micro-units, for reconciliation. */
  treasuryUsdcBalance(): Promise<bigint>;
  /** Signs a replacement of a stuck transfer with a higher fee (same nonce), where the chain allows it. */
  replaceWithHigherFee?(db: Queryable, request: TransferRequest, stuck: SignedTransfer): Promise<SignedTransfer>;
  close?(): Promise<void>;
}

export type ChainAdapters = Record<Chain, ChainAdapter>;
