// The words every room shares about chains: which chains exist, why a transfer failed, what the chain says about a
// transfer, and what a signed transfer is. Chain adapters implement them (src/chains/port.ts); the domain, the
// database and the ledger speak them without knowing any adapter.
import { SOLANA_CHAIN, type ChainFamily } from './chain-presets.js';

export type { ChainFamily } from './chain-presets.js';

/** A configured chain's name (CHAINS, src/config.ts): `ethereum`, `solana`, `base`, or any EVM chain an operator names. */
export type Chain = string;

/** A chain name as CHAINS accepts it: lower-case letters, digits and underscores, so NAME_RPC_URL can be derived. */
const CHAIN_NAME_PATTERN = /^[a-z][a-z0-9_]{0,31}$/;

/**
 * A comma-separated list of chain names (CHAINS, `devnet --chains`): the names, or the problem with them (not a
 * name, named twice, none at all).
 */
export function parseChainList(raw: string): Chain[] | { problem: string } {
  const names = raw.split(',').map((name) => name.trim()).filter((name) => name !== '');
  if (names.length === 0) return { problem: 'names no chain' };
  const bad = names.find((name) => !CHAIN_NAME_PATTERN.test(name));
  if (bad !== undefined) return { problem: `"${bad}" is not a chain name (lower-case letters, digits and underscores, starting with a letter)` };
  const repeated = names.find((name, i) => names.indexOf(name) !== i);
  if (repeated !== undefined) return { problem: `names ${repeated} twice` };
  return names;
}

/** Solana stays one chain, named `solana`; every other chain speaks EVM. */
export function familyOf(chain: Chain): ChainFamily {
  return chain === SOLANA_CHAIN ? 'solana' : 'evm';
}

/** The currency a chain charges its fees in: ETH, SOL, POL, or what NAME_NATIVE_CURRENCY names. */
export type NativeCurrency = string;

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
  'approval_rejected', // an operator rejected a payment that waited for approval; nothing was sent
  'screening_hit', // the recipient was refused by sanctions screening right before signing; nothing was sent
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/** What a node says about one signed transfer. */
export type TxStatus =
  | { state: 'unknown' } // never seen by the node (not yet propagated, or dropped)
  | { state: 'pending' } // accepted, not included
  | { state: 'included'; confirmations: number } // included, not final yet
  | { state: 'final'; feeNative: bigint; finalAt?: Date } // final; fee in native smallest units; when, if the chain tells
  | { state: 'failed'; reason: FailureReason; feeNative: bigint; details?: string } // included and failed, or can never land
  | { state: 'expired' }; // can provably never land (Solana blockhash expired and signature unknown)

/** A signed transfer, persisted before it is sent. Re-sending rawTx is always safe. */
export interface SignedTransfer {
  txId: string;
  rawTx: string;
  /** Adapter-specific data needed to track or replace the transaction (nonce, fees, blockhash expiry...). JSON-safe. */
  meta: Record<string, string | number | boolean | null>;
}

/** The signed transfer a stored attempt holds (its columns), to send again or ask its chain about. */
export function signedOf(attempt: { tx_id: string; signed_tx: string; chain_meta: SignedTransfer['meta'] }): SignedTransfer {
  return { txId: attempt.tx_id, rawTx: attempt.signed_tx, meta: attempt.chain_meta };
}

/** What a room needs to know of the configured chains to book or show a fee (config.chains has it). */
export type NativeCurrencies = Readonly<Record<Chain, { readonly nativeCurrency: NativeCurrency }>>;

/** The currency `chain` charges its fees in; a chain CHAINS does not list has none. */
export function nativeCurrencyOf(chains: NativeCurrencies, chain: Chain): NativeCurrency {
  const settings = chains[chain];
  if (settings === undefined) throw new RangeError(`${chain} is not in CHAINS`);
  return settings.nativeCurrency;
}

/** `value` names one of `chains` (CHAINS): what a request's or a flag's chain must be. */
export function isChainIn(chains: readonly Chain[], value: unknown): value is Chain {
  return typeof value === 'string' && chains.includes(value);
}
