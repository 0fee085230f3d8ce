// A Solana "cluster" around one LiteSVM instance: LiteSVM executes transactions with the real programs; this class
// adds what a validator adds around execution: slots that advance, blockhashes that expire after 150 blocks,
// commitment levels (processed -> confirmed after 1 slot -> finalized after N), a status cache that answers
// "already processed", and a transaction history with balances before and after.
//
// Account reads always see the latest (processed) state, whatever the commitment asked: LiteSVM keeps no history.
import { createHash, createPublicKey, randomBytes, verify } from 'node:crypto';
import {
  getBase58Decoder,
  getBase58Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Address,
  type Signature,
  type SignatureBytes,
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
/** Transactions the history keeps by default (the oldest are forgotten, as a node without long-term storage does). */
export const HISTORY_MAX = 20_000;
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
  /** Execution order across the chain: orders the history of every address. */
  seq: number;
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
  /** Transactions kept for getTransaction and getSignaturesForAddress; default HISTORY_MAX. */
  historyMax?: number;
}

export class SolanaDevnetChain {
  readonly svm = new LiteSVM().withBlockhashCheck(false);
  private slot = FIRST_SLOT;
  private transactionCount = 0n;
  private readonly genesisUnixSeconds: number;
  private readonly blockhashSlots = new Map<string, bigint>();
  private readonly records = new Map<string, TransactionRecord>();
  /** Per account, the records naming it, oldest first: getSignaturesForAddress reads one address's list. */
  private readonly history = new Map<string, TransactionRecord[]>();
  private nextSeq = 0;
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
   * transfer sent as an address whose key nobody here holds), as `copies` transactions that differ only in their
   * "signature": 64 random bytes each, so each has its own id. The message is decoded once and each copy's balances
   * before are the previous copy's after (nothing runs in between), which makes a long history quick to build.
   * Returns their records; throws when one was dropped.
   */
  executeUnverified(wire: Uint8Array, copies = 1): TransactionRecord[] {
    const decoded = this.decode(wire);
    const records: TransactionRecord[] = [];
    this.svm.withSigverify(false);
    try {
      for (let i = 0; i < copies; i++) {
        const copy = i === 0 ? decoded : withRandomSignature(decoded);
        const record = this.execute(copy, records.at(-1)?.post);
        if (!record) throw invalidParams('the devnet dropped the transaction (expired blockhash, duplicate, or a fee payer that cannot pay)');
        records.push(record);
      }
    } finally {
      this.svm.withSigverify(true);
    }
    return records;
  }

  /**
   * getSignaturesForAddress: newest first, strictly older than `before` and newer than `until`, at `commitment`. As a
   * real node: a `before` it does not know lists nothing; an `until` it does not know does not bound the list; either
   * may be a transaction of another address (its place in the chain's order is what counts).
   */
  signaturesFor(address: string, options: { before?: string; until?: string; limit: number; commitment: Commitment }): TransactionRecord[] {
    const rank = (c: Commitment) => COMMITMENTS.indexOf(c);
    const list = this.history.get(address) ?? [];
    let end = list.length;
    if (options.before !== undefined) {
      const before = this.records.get(options.before);
      if (!before) return [];
      end = firstAtOrAfter(list, before.seq);
    }
    const untilSeq = options.until === undefined ? undefined : this.records.get(options.until)?.seq;
    const found: TransactionRecord[] = [];
    for (let i = end - 1; i >= 0 && found.length < options.limit; i--) {
      const record = list[i]!;
      if (untilSeq !== undefined && record.seq <= untilSeq) break;
      if (rank(this.commitmentOf(record)) < rank(options.commitment)) continue;
      found.push(record);
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

  /** Records and returns the transaction, or undefined when it is dropped. `before`: its accounts' balances now, when known. */
  private execute(decoded: DecodedTransaction, before?: BalanceSnapshot): TransactionRecord | undefined {
    // A validator silently drops what it cannot process: an expired blockhash, a duplicate, a fee payer that cannot
    // pay. The sender learns of it only through getSignatureStatuses staying empty.
    if (!this.isBlockhashValid(decoded.message.lifetimeToken, this.slot)) return undefined;
    if (this.records.has(decoded.signature)) return undefined;
    const keys = decoded.message.staticAccounts;
    const accounts = { programs: new Set(decoded.message.instructions.map((ix) => ix.programAddressIndex)), writable: writableIn(decoded.message) };
    const pre = before ?? snapshotBalances(this.svm, keys, accounts);
    const result = this.svm.sendTransaction(decoded.transaction);
    const failed = result instanceof FailedTransactionMetadata;
    if (failed && this.svm.getTransaction(decoded.signature as Signature) === null) return undefined;
    const meta: TransactionMetadata = failed ? result.meta() : result;
    const post = snapshotBalances(this.svm, keys, { ...accounts, before: pre });
    const sum = (values: bigint[]) => values.reduce((a, b) => a + b, 0n);
    this.transactionCount += 1n;
    const record: TransactionRecord = {
      seq: this.nextSeq++,
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
    };
    this.records.set(decoded.signature, record);
    for (const key of new Set(keys)) {
      const list = this.history.get(key);
      if (list) list.push(record);
      else this.history.set(key, [record]);
    }
    if (this.records.size > (this.options.historyMax ?? HISTORY_MAX)) this.forgetOldest();
    return record;
  }

  private forgetOldest(): void {
    const oldest = this.records.values().next();
    if (oldest.done) return;
    this.records.delete(oldest.value.decoded.signature);
    for (const key of new Set(oldest.value.decoded.message.staticAccounts)) {
      const list = this.history.get(key);
      // The oldest record is the first of each of its lists.
      if (list?.[0] === oldest.value) list.shift();
      if (list?.length === 0) this.history.delete(key);
    }
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

/** Whether the message lets its account at `index` be written: signers first, then the others, read-only ones last. */
function writableIn(message: CompiledMessage): (index: number) => boolean {
  const { numSignerAccounts, numReadonlySignerAccounts, numReadonlyNonSignerAccounts } = message.header;
  const total = message.staticAccounts.length;
  return (index) =>
    index < numSignerAccounts ? index < numSignerAccounts - numReadonlySignerAccounts : index < total - numReadonlyNonSignerAccounts;
}

/** The same transaction with 64 random bytes as its only signature (a transaction the devnet processes unverified). */
function withRandomSignature(decoded: DecodedTransaction): DecodedTransaction {
  const signers = Object.keys(decoded.transaction.signatures);
  if (signers.length !== 1) throw invalidParams('only a transaction with one signer can be copied');
  const bytes = new Uint8Array(randomBytes(64)) as SignatureBytes;
  // The wire format: a one-byte count (1), the signature, the message.
  const wire = new Uint8Array(decoded.wire);
  wire.set(bytes, 1);
  const signature = getBase58Decoder().decode(bytes);
  return {
    wire,
    transaction: { messageBytes: decoded.transaction.messageBytes, signatures: { [signers[0]!]: bytes } } as Transaction,
    signature,
    signatures: [signature],
    message: decoded.message,
  };
}

/** The index of the first record of `list` (in seq order) whose seq is at least `seq`. */
function firstAtOrAfter(list: readonly TransactionRecord[], seq: number): number {
  let low = 0;
  let high = list.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (list[middle]!.seq < seq) low = middle + 1;
    else high = middle;
  }
  return low;
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
