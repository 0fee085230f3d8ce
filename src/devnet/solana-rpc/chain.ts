// A Solana "cluster" around one LiteSVM instance: LiteSVM executes transactions with the real programs; this class
// adds what a validator adds around execution: slots that advance, blockhashes that expire after 150 blocks,
// commitment levels (processed -> confirmed after 1 slot -> finalized after N), a status cache that answers
// "already processed", and a transaction history with balances before and after.
//
// Account reads always see the latest (processed) state, whatever the commitment asked: LiteSVM keeps no history.
import { createHash, createPublicKey, verify } from 'node:crypto';
import {
  getBase58Decoder,
  getBase58Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Address,
  type Signature,
  type Transaction,
} from '@solana/kit';
import { Clock, FailedTransactionMetadata, LiteSVM, type TransactionMetadata } from 'litesvm';
import { snapshotBalances, type BalanceSnapshot } from './balances.js';
import {
  invalidParams,
  RPC_PREFLIGHT_FAILURE,
  RPC_SIGNATURE_VERIFICATION_FAILURE,
  RPC_UNSUPPORTED_TRANSACTION_VERSION,
  RpcError,
} from './json.js';
import { describeTransactionError, rpcTransactionError, type RpcTransactionError } from './tx-errors.js';

export type Commitment = 'processed' | 'confirmed' | 'finalized';
export const COMMITMENTS: readonly Commitment[] = ['processed', 'confirmed', 'finalized'];

/** A blockhash is usable while the block height is at most its own height plus this (agave MAX_PROCESSING_AGE). */
export const MAX_PROCESSING_AGE = 150n;
export const SLOTS_PER_EPOCH = 432_000n;
export const FIRST_SLOT = 1_000n;
// Block height = slot - SKIPPED_SLOTS, as on a real cluster where some leaders skip their slot: code that compares
// a slot with lastValidBlockHeight is wrong, and this makes it visibly wrong.
const SKIPPED_SLOTS = 100n;
const BLOCKHASHES_KEPT = 2n * MAX_PROCESSING_AGE;
const RECORDS_MAX = 20_000;
const PERFORMANCE_WINDOW_MS = 60_000;
const PERFORMANCE_MARKS_MAX = 2_000;

type AnyCompiledMessage = ReturnType<ReturnType<typeof getCompiledTransactionMessageDecoder>['decode']>;
/** A decoded legacy or v0 message (the devnet does not take v1 transactions). */
export type CompiledMessage = Extract<AnyCompiledMessage, { version: 'legacy' | 0 }>;

export interface DecodedTransaction {
  wire: Uint8Array;
  transaction: Transaction;
  signature: string;
  signatures: string[];
  message: CompiledMessage;
}

export interface TransactionRecord {
  decoded: DecodedTransaction;
  slot: bigint;
  blockTime: number;
  err: RpcTransactionError | null;
  fee: bigint;
  pre: BalanceSnapshot;
  post: BalanceSnapshot;
  logs: string[];
  computeUnitsConsumed: bigint;
  innerInstructions: { index: number; instructions: Record<string, unknown>[] }[];
}

export interface SimulationResult {
  err: RpcTransactionError | null;
  logs: string[];
  unitsConsumed: bigint;
}

export interface ChainOptions {
  finalizeAfterSlots: number;
  slotMs: number;
  /** Makes this devnet's blockhashes its own. */
  seed: string;
  now: () => number;
}

export class SolanaDevnetChain {
  readonly svm = new LiteSVM().withBlockhashCheck(false);
  private slot = FIRST_SLOT;
  private transactionCount = 0n;
  private readonly genesisUnixSeconds: number;
  private readonly blockhashSlots = new Map<string, bigint>();
  private readonly records = new Map<string, TransactionRecord>();
  private readonly marks: { atMs: number; slot: bigint; transactions: bigint }[] = [];

  constructor(private readonly options: ChainOptions) {
    this.genesisUnixSeconds = Math.floor(options.now() / 1000);
    this.blockhashSlots.set(this.blockhashOf(this.slot), this.slot);
    this.syncClock();
    this.marks.push({ atMs: options.now(), slot: this.slot, transactions: 0n });
  }

  // ---- time -------------------------------------------------------------------------------------------------

  advance(slots: number): void {
    for (let i = 0; i < slots; i++) {
      this.slot += 1n;
      this.blockhashSlots.set(this.blockhashOf(this.slot), this.slot);
      this.blockhashSlots.delete(this.blockhashOf(this.slot - BLOCKHASHES_KEPT));
    }
    this.syncClock();
    const atMs = this.options.now();
    this.marks.push({ atMs, slot: this.slot, transactions: this.transactionCount });
    const stale = (mark?: { atMs: number }) => mark !== undefined && mark.atMs < atMs - PERFORMANCE_WINDOW_MS;
    while (this.marks.length > PERFORMANCE_MARKS_MAX || stale(this.marks[0])) this.marks.shift();
  }

  slotAt(commitment: Commitment): bigint {
    const finalized = BigInt(this.options.finalizeAfterSlots);
    const behind = commitment === 'processed' ? 0n : commitment === 'confirmed' ? 1n : finalized;
    const slot = this.slot - behind;
    return slot < FIRST_SLOT ? FIRST_SLOT : slot;
  }

  blockHeightOf(slot: bigint): bigint {
    return slot - SKIPPED_SLOTS;
  }

  unixTimestampOf(slot: bigint): number {
    return this.genesisUnixSeconds + Math.floor((Number(slot - FIRST_SLOT) * this.options.slotMs) / 1000);
  }

  get totalTransactions(): bigint {
    return this.transactionCount;
  }

  /** Slots and transactions over the last minute of wall-clock time, as getRecentPerformanceSamples reports. */
  performanceSample(): { slots: bigint; transactions: bigint; seconds: number } | null {
    const first = this.marks[0];
    const last = this.marks[this.marks.length - 1];
    if (!first || !last || last.slot === first.slot) return null;
    return {
      slots: last.slot - first.slot,
      transactions: last.transactions - first.transactions,
      seconds: Math.max(1, Math.round((last.atMs - first.atMs) / 1000)),
    };
  }

  // ---- blockhashes ------------------------------------------------------------------------------------------

  latestBlockhash(commitment: Commitment): { blockhash: string; lastValidBlockHeight: bigint } {
    const slot = this.slotAt(commitment);
    return { blockhash: this.blockhashOf(slot), lastValidBlockHeight: this.blockHeightOf(slot) + MAX_PROCESSING_AGE };
  }

  /** Whether the bank at `bankSlot` accepts this blockhash: it knows it, and it is at most 150 blocks old. */
  isBlockhashValid(blockhash: string, bankSlot: bigint): boolean {
    const slot = this.blockhashSlots.get(blockhash);
    return slot !== undefined && slot <= bankSlot && bankSlot - slot <= MAX_PROCESSING_AGE;
  }

  // ---- transactions -----------------------------------------------------------------------------------------

  decode(wire: Uint8Array): DecodedTransaction {
    let transaction: Transaction;
    let message: AnyCompiledMessage;
    try {
      transaction = getTransactionDecoder().decode(wire);
      message = getCompiledTransactionMessageDecoder().decode(transaction.messageBytes);
    } catch {
      throw invalidParams('failed to deserialize the transaction');
    }
    if (message.version !== 'legacy' && message.version !== 0) {
      const text = `Transaction version (${message.version}) is not supported`;
      throw new RpcError(RPC_UNSUPPORTED_TRANSACTION_VERSION, text);
    }
    if ('addressTableLookups' in message && (message.addressTableLookups?.length ?? 0) > 0) {
      throw invalidParams('address lookup tables are not supported by this devnet');
    }
    const base58 = getBase58Decoder();
    const signatures = Object.values(transaction.signatures).map((s) => base58.decode(s ?? new Uint8Array(64)));
    const signature = signatures[0];
    if (signature === undefined) throw invalidParams('the transaction has no signature');
    return { wire, transaction, signature, signatures, message };
  }

  verifySignatures(decoded: DecodedTransaction): void {
    const messageBytes = new Uint8Array(decoded.transaction.messageBytes);
    for (const [signer, signature] of Object.entries(decoded.transaction.signatures)) {
      if (!signature || !verify(null, messageBytes, ed25519PublicKey(signer as Address), signature as Uint8Array)) {
        throw new RpcError(RPC_SIGNATURE_VERIFICATION_FAILURE, 'Transaction signature verification failure');
      }
    }
  }

  /** sendTransaction: preflight (unless skipped) refuses with -32002; a failed execution lands with its error. */
  submit(wire: Uint8Array, skipPreflight: boolean, preflightCommitment: Commitment): string {
    const decoded = this.decode(wire);
    this.verifySignatures(decoded);
    if (!skipPreflight && !this.preflight(decoded, preflightCommitment)) return decoded.signature;
    this.execute(decoded);
    return decoded.signature;
  }

  /** Runs the transaction against the latest state without committing it, with the checks of the bank at bankSlot. */
  simulate(
    decoded: DecodedTransaction,
    bankSlot: bigint,
    replaceRecentBlockhash: boolean,
    verifySignatures: boolean,
  ): SimulationResult {
    if (!replaceRecentBlockhash && !this.isBlockhashValid(decoded.message.lifetimeToken, bankSlot)) {
      return { err: 'BlockhashNotFound', logs: [], unitsConsumed: 0n };
    }
    const landed = this.records.get(decoded.signature);
    if (landed && landed.slot <= bankSlot) return { err: 'AlreadyProcessed', logs: [], unitsConsumed: 0n };
    // Clients simulate unsigned transactions (zeroed signatures) to estimate compute units.
    this.svm.withSigverify(verifySignatures);
    let result: ReturnType<LiteSVM['simulateTransaction']>;
    try {
      result = this.svm.simulateTransaction(decoded.transaction);
    } finally {
      this.svm.withSigverify(true);
    }
    if (result instanceof FailedTransactionMetadata) {
      const meta = result.meta();
      return { err: rpcTransactionError(result), logs: meta.logs(), unitsConsumed: meta.computeUnitsConsumed() };
    }
    const meta = result.meta();
    return { err: null, logs: meta.logs(), unitsConsumed: meta.computeUnitsConsumed() };
  }

  /**
   * Processes a transaction WITHOUT verifying its signatures (devnet only: `stableroute devnet fund --from`, a
   * transfer sent as an address whose key nobody here holds). Returns its record; throws when it was dropped.
   */
  executeUnverified(wire: Uint8Array): TransactionRecord {
    const decoded = this.decode(wire);
    this.svm.withSigverify(false);
    try {
      this.execute(decoded);
    } finally {
      this.svm.withSigverify(true);
    }
    const record = this.records.get(decoded.signature);
    if (!record) throw invalidParams('the devnet dropped the transaction (expired blockhash, duplicate, or a fee payer that cannot pay)');
    return record;
  }

  /** getSignaturesForAddress: newest first, after `before` and down to (not including) `until`, at `commitment`. */
  signaturesFor(address: string, options: { before?: string; until?: string; limit: number; commitment: Commitment }): TransactionRecord[] {
    const rank = (c: Commitment) => COMMITMENTS.indexOf(c);
    const found: TransactionRecord[] = [];
    let started = options.before === undefined;
    for (const record of [...this.records.values()].reverse()) {
      if (!started) {
        started = record.decoded.signature === options.before;
        continue;
      }
      if (record.decoded.signature === options.until) break;
      if (rank(this.commitmentOf(record)) < rank(options.commitment)) continue;
      if (!record.decoded.message.staticAccounts.includes(address as Address)) continue;
      found.push(record);
      if (found.length >= options.limit) break;
    }
    return found;
  }

  record(signature: string): TransactionRecord | undefined {
    return this.records.get(signature);
  }

  commitmentOf(record: TransactionRecord): Commitment {
    const age = this.slot - record.slot;
    if (age >= BigInt(this.options.finalizeAfterSlots)) return 'finalized';
    return age >= 1n ? 'confirmed' : 'processed';
  }

  confirmationsOf(record: TransactionRecord): bigint {
    return this.slot - record.slot;
  }

  // ---- internals --------------------------------------------------------------------------------------------

  /** Returns false when the transaction is a duplicate the leader will drop (already processed, not yet visible). */
  private preflight(decoded: DecodedTransaction, commitment: Commitment): boolean {
    const bankSlot = this.slotAt(commitment);
    const landed = this.records.get(decoded.signature);
    const result = this.simulate(decoded, bankSlot, false, true);
    if (result.err === null && landed) return false;
    if (result.err === null) return true;
    const message = `Transaction simulation failed: ${describeTransactionError(result.err)}`;
    throw new RpcError(RPC_PREFLIGHT_FAILURE, message, {
      accounts: null,
      err: result.err,
      innerInstructions: null,
      loadedAccountsDataSize: null,
      logs: result.logs,
      replacementBlockhash: null,
      returnData: null,
      unitsConsumed: result.unitsConsumed,
    });
  }

  private execute(decoded: DecodedTransaction): void {
    // A validator silently drops what it cannot process: an expired blockhash, a duplicate, a fee payer that cannot
    // pay. The sender learns of it only through getSignatureStatuses staying empty.
    if (!this.isBlockhashValid(decoded.message.lifetimeToken, this.slot)) return;
    if (this.records.has(decoded.signature)) return;
    const keys = decoded.message.staticAccounts;
    const pre = snapshotBalances(this.svm, keys);
    const result = this.svm.sendTransaction(decoded.transaction);
    const failed = result instanceof FailedTransactionMetadata;
    if (failed && this.svm.getTransaction(decoded.signature as Signature) === null) return;
    const meta: TransactionMetadata = failed ? result.meta() : result;
    const post = snapshotBalances(this.svm, keys);
    const sum = (values: bigint[]) => values.reduce((a, b) => a + b, 0n);
    this.transactionCount += 1n;
    this.records.set(decoded.signature, {
      decoded,
      slot: this.slot,
      blockTime: this.unixTimestampOf(this.slot),
      err: failed ? rpcTransactionError(result) : null,
      // Lamports are conserved inside a transaction; what the accounts lost together is the fee.
      fee: sum(pre.lamports) - sum(post.lamports),
      pre,
      post,
      logs: meta.logs(),
      computeUnitsConsumed: meta.computeUnitsConsumed(),
      innerInstructions: innerInstructionsJson(meta),
    });
    const oldest = this.records.keys().next();
    if (this.records.size > RECORDS_MAX && !oldest.done) this.records.delete(oldest.value);
  }

  private blockhashOf(slot: bigint): string {
    const digest = createHash('sha256').update(`${this.options.seed}:${slot}`).digest();
    return getBase58Decoder().decode(digest);
  }

  private syncClock(): void {
    const epoch = this.slot / SLOTS_PER_EPOCH;
    const epochFirstSlot = epoch * SLOTS_PER_EPOCH < FIRST_SLOT ? FIRST_SLOT : epoch * SLOTS_PER_EPOCH;
    const epochStart = BigInt(this.unixTimestampOf(epochFirstSlot));
    const now = BigInt(this.unixTimestampOf(this.slot));
    this.svm.setClock(new Clock(this.slot, epochStart, epoch, epoch + 1n, now));
  }
}

function ed25519PublicKey(address: Address) {
  const x = Buffer.from(getBase58Encoder().encode(address)).toString('base64url');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
}

function innerInstructionsJson(meta: TransactionMetadata): TransactionRecord['innerInstructions'] {
  const base58 = getBase58Decoder();
  return meta
    .innerInstructions()
    .map((list, index) => ({
      index,
      instructions: list.map((inner) => {
        const compiled = inner.instruction();
        return {
          programIdIndex: compiled.programIdIndex(),
          accounts: Array.from(compiled.accounts()),
          data: base58.decode(compiled.data()),
          stackHeight: inner.stackHeight(),
        };
      }),
    }))
    .filter((entry) => entry.instructions.length > 0);
}
