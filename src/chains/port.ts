// The ChainAdapter port: the one interface every chain (simulated, ethereum, solana) implements. It is shaped after
// the protocol, not after our workers: prepare (read the chain), sign locally (tx id known before anything is sent),
// send bytes (resending the same bytes is harmless), ask for status. The orchestrator owns all state, nonces included
// (src/db/queries/nonces.ts); an adapter never queries our tables. Only the simulated chain keeps its own network in
// the database (decision 29), which is why signing gets the caller's transaction.
import type { Queryable } from '../db/pool.js';
import type { Chain, FailureReason, NativeCurrency, SignedTransfer, TxStatus } from '../domain/chain.js';
import type { Token, TokenCurrency } from '../domain/token.js';

export { FAILURE_REASONS, type Chain, type FailureReason, type SignedTransfer, type TxStatus } from '../domain/chain.js';

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
  /**
   * The token it pays, one of the chain's NAME_TOKENS; absent: usdc, as before tokens were configured. A transaction
   * pays one token (an on-chain batch too).
   */
  token?: Token;
}

export interface FeeEstimate {
  feeNative: bigint;
  feeUsd: number;
}

/**
 * A transfer ready to be signed: everything read from the chain, nothing signed yet. `sign` is local (no RPC), so the
 * caller may run it in the transaction that persists the attempt, under that transaction's locks.
 */
export interface PreparedTransfer {
  /**
   * Account-based chains: the chain's pending transaction count for the treasury. The caller allocates the nonce from
   * it in the transaction that persists the attempt and passes it to `sign`. Absent on chains without nonces, and on
   * a replacement (it keeps the stuck nonce).
   */
  pendingNonce?: number;
  /** The fee estimate read while preparing, stored with the attempt. */
  feeEstimate: FeeEstimate;
  /** Signs locally. `db` is the caller's open transaction; `nonce` is null unless pendingNonce was given. */
  sign(db: Queryable, nonce: number | null): Promise<SignedTransfer>;
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

/** A transfer INTO the treasury, seen on chain at reorg-safe depth. */
export interface InboundTransfer {
  /** With `index`, the transfer's stable identity on its chain. */
  txId: string;
  /** Ethereum: the token Transfer log's index, -1 for the transaction's ETH value. Solana: 0 USDC, 1 SOL. */
  index: number;
  from: string;
  /** A configured token's ledger currency, or the chain's native currency. */
  currency: TokenCurrency | 'native';
  /** Token micro-units, wei or lamports; positive. */
  amountUnits: bigint;
}

export interface InboundScan {
  /** Oldest first. */
  transfers: InboundTransfer[];
  /** Where the next scan starts. */
  position: string;
  /** More reorg-safe history waits beyond `position`: scan again right away. */
  more: boolean;
}

/**
 * What the books hold as landed on this chain, for a check of the treasury's transactions after the database history
 * changed (decision 199): every transaction the books lost was sent after the newest of these landed.
 */
export interface BooksLanded {
  /** Tx ids of attempts the books record as on chain, newest first (a few: the walk back stops at the first found). */
  landed: readonly string[];
  /** The `mark` this hold's first check returned; null on its first check. */
  mark: string | null;
}

/** A transaction the treasury itself signed, as the chain has it. */
export interface TreasuryTransaction {
  txId: string;
  /** EVM: its nonce. Null on chains without nonces. */
  nonce: number | null;
  /** Landed but failed (reverted): it paid nothing, only its fee. */
  failed: boolean;
  /** Tokens it moved out of the treasury, in the order it paid them: recipient address, micro-units and token. */
  transfers: { to: string; amountMicros: bigint; token: Token }[];
  /** Solana: the memo it carries (a payment id, or `batch:` and a hash). */
  memo: string | null;
  /**
   * The transaction as this adapter would have signed it, so that the books can record it as an attempt and follow it
   * like one (an operator attaching it to the payments it paid). Null when the node does not return its bytes.
   */
  signed: SignedTransfer | null;
}

export interface TreasuryActivity {
  /** Oldest first: every transaction the treasury signed after the newest of BooksLanded.landed the chain has. */
  transactions: TreasuryTransaction[];
  /** False when the walk back hit its bound before it reached a landed transaction of the books. */
  complete: boolean;
  /** EVM: the treasury's transaction count at the latest block and with the pool's pending ones. */
  nonces: { latest: number; pending: number } | null;
  /** Where the chain stands now: stored as the hold's mark at its first check. */
  mark: string;
  /**
   * Whether nothing signed before `mark` can still land unseen (Solana: the chain is past the last valid height of any
   * blockhash that was recent at `mark`). Always true where the pool shows what is pending (EVM).
   */
  quiet: boolean;
}

export interface ChainAdapter {
  readonly chain: Chain;
  readonly nativeCurrency: NativeCurrency;
  readonly nativeDecimals: number;
  /** Whether this adapter talks to an outside network ('rpc') or is the built-in simulator. */
  readonly kind: 'simulated' | 'rpc';
  /** Expected seconds from broadcast to finality under normal conditions; routing default. */
  readonly typicalFinalitySeconds: number;

  treasuryAddress(): string;
  isValidAddress(address: string): boolean;
  /** The fee of one transfer of `token` (default usdc): tokens cost different gas on EVM chains. */
  estimateFee(token?: Token): Promise<FeeEstimate>;
  /**
   * Reads from the chain what the requested transfers need (fees, gas, a recent blockhash, the account's pending nonce)
   * and validates them, in one call for the batch an execution step holds. The answer is one per request, in order:
   * the transaction that pays it, or the ChainError ('rejected') of a request the chain refuses to even build (only
   * that request's). A transaction may pay several requests (an on-chain batch): the same object then stands at each of
   * their places, and it is signed once. Called with no database lock held: it may take up to RPC_TIMEOUT_SECONDS.
   */
  prepareTransfers(requests: readonly TransferRequest[]): Promise<(PreparedTransfer | ChainError)[]>;
  /**
   * Prepares a replacement of a stuck transaction with a higher fee and the same nonce, where the chain allows it:
   * `requests` are every payment the stuck transaction pays, in its order (one, or an on-chain batch's), and the
   * replacement pays exactly those. Its `sign` takes no nonce: the stuck one is reused.
   */
  prepareReplacement?(requests: readonly TransferRequest[], stuck: SignedTransfer): Promise<PreparedTransfer>;
  /**
   * Prepares a cancel on chain of a stuck transfer, where the chain allows it: a transaction on the stuck one's nonce
   * that moves nothing (Ethereum: zero ETH from the treasury to itself), with fees high enough to replace what is
   * pending on that nonce (`stuck`: the transfer, or an earlier cancel). Once it is final the transfer can never land.
   * Its `sign` takes no nonce: the stuck one is reused.
   */
  prepareCancel?(stuck: SignedTransfer): Promise<PreparedTransfer>;
  /**
   * Signs transfers this adapter prepared without a nonce, in the caller's transaction and in order, as their `sign`
   * called one after the other would, in fewer round trips. Optional: without it each is signed on its own.
   */
  signAll?(db: Queryable, prepared: readonly PreparedTransfer[]): Promise<SignedTransfer[]>;
  /** Sends the signed bytes. Throws ChainError. Sending bytes the chain already has is a success. */
  broadcast(signed: SignedTransfer): Promise<void>;
  /**
   * Statuses of one transfer or many, in order, in as few round trips as the node allows (Solana: getSignatureStatuses of
   * up to 256; Ethereum: JSON-RPC batches). Throws when the node cannot be asked.
   */
  getStatuses(signed: readonly SignedTransfer[]): Promise<TxStatus[]>;
  /**
   * Where the chain stands (a block number, a slot): a different answer means new blocks, so transfers may have
   * moved. Cheap; the confirmation worker asks it every second.
   */
  head(): Promise<string>;
  probe(): Promise<HealthProbe>;
  /** On-chain balance of the treasury in `token` (one of the chain's NAME_TOKENS), in micro-units, for reconciliation. */
  treasuryTokenBalance(token: Token): Promise<bigint>;
  /** On-chain native balance of the treasury (wei, lamports), for fees. */
  treasuryNativeBalance(): Promise<bigint>;
  /**
   * Where the chain stands for the deposit scanner, now: a position (block number, signature, sequence) such that
   * every transfer at or before it is in the balances read right after. The scan of a new treasury starts there.
   */
  inboundPosition(): Promise<string>;
  /**
   * Transfers into the treasury (USDC and native) after `position`, only those at reorg-safe depth
   * (ETHEREUM_CONFIRMATIONS, Solana finalized), a bounded range per call, oldest first.
   */
  listInboundTransfers(position: string): Promise<InboundScan>;
  /**
   * The treasury's own transactions since the newest one the books hold as landed (decision 199): what a database that
   * lost its last commits may not know about. Bounded; a simulated chain, whose state lives in the books' database,
   * answers that there is nothing (a lost commit loses its transfers with the books).
   */
  treasuryTransactions(books: BooksLanded): Promise<TreasuryActivity>;
  close?(): Promise<void>;
}

export type ChainAdapters = Record<Chain, ChainAdapter>;

/**
 * prepareTransfers for a chain that pays each request with a transaction of its own: every request prepared at once,
 * a ChainError answered at its request's place, anything else (a bug) thrown.
 */
export function preparedEach(
  requests: readonly TransferRequest[],
  prepare: (request: TransferRequest) => Promise<PreparedTransfer>,
): Promise<(PreparedTransfer | ChainError)[]> {
  return Promise.all(
    requests.map((request) =>
      prepare(request).catch((error: unknown) => {
        if (error instanceof ChainError) return error;
        throw error;
      }),
    ),
  );
}

/** The adapter of a configured chain; a chain CHAINS does not list has none (a row from before it was removed). */
export function adapterOf(adapters: ChainAdapters, chain: Chain): ChainAdapter {
  const adapter = adapters[chain];
  if (adapter === undefined) throw new ChainError('internal_error', 'rejected', `${chain} is not in CHAINS`, { details: chain });
  return adapter;
}

/**
 * The node adapters pay and read USDC only so far (issue 40 item 3): the factory refuses other tokens on them at
 * start-up, and this refuses a call that names one anyway.
 */
export function onlyUsdc(token: Token): void {
  if (token !== 'usdc') throw new ChainError('internal_error', 'rejected', `this adapter does not pay ${token} yet`, { details: token });
}
