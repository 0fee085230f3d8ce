// Builds the USDC payouts of one batch of requests into as few transactions as fit, in order. Each transaction is
// paid by the treasury with a bounded compute budget: per payout [create the recipient's token account if missing] +
// transferChecked, then one memo. Preparing reads the chain (one blockhash and one fee price for the whole call);
// signing is local. Nothing is sent here; the signature is the transaction id from now on.
import { createHash } from 'node:crypto';
import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getTransactionMessageSize,
  pipe,
  setTransactionMessageComputeUnitLimit,
  setTransactionMessageComputeUnitPrice,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
} from '@solana/kit';
import {
  getCreateAssociatedTokenIdempotentInstruction,
  getTransferCheckedInstruction,
} from '@solana-program/token';
import { SOLANA_BATCH_TRANSFERS_MAX, SOLANA_TRANSACTION_BYTES_MAX, SOLANA_TRANSACTION_COMPUTE_UNITS_MAX } from '../../bounds.js';
import { USDC_DECIMALS } from '../../money.js';
import { ChainError, type SignedTransfer, type TransferRequest } from '../port.js';
import { computeUnitLimitOf } from './fees.js';
import type { SolanaKey } from './keys.js';
import { encodeMeta } from './meta.js';
import { payoutsOf, refusalsOf, type Payout } from './recipients.js';
import { BUILD_COMMITMENT, call, type RpcClient } from './rpc.js';

/** The SPL Memo program, on every cluster and in LiteSVM's programs (decision 39). */
export const MEMO_PROGRAM_ADDRESS = 'MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr' as Address;
/** Base64url characters of the batch memo's hash: 96 bits, a few bytes of the packet instead of one id per payout. */
const BATCH_MEMO_HASH_CHARS = 16;

export interface TransferContext {
  client: RpcClient;
  key: SolanaKey;
  usdcMint: Address;
  treasuryAta: Address;
  computeUnitPrice(): Promise<bigint>;
}

export interface PreparedUsdcTransaction {
  /** The requests it pays, in the order it pays them. */
  requests: readonly TransferRequest[];
  computeUnitLimit: number;
  /** The compute-unit price the transaction pays, in micro-lamports. */
  computeUnitPrice: bigint;
  /** Signs with the treasury key. Local: no RPC. */
  sign(): Promise<SignedTransfer>;
}

interface Lifetime {
  blockhash: Parameters<typeof setTransactionMessageLifetimeUsingBlockhash>[0];
  computeUnitPrice: bigint;
}

/** A memo with no signer accounts: the program only checks the text is UTF-8 and logs it. */
function memoInstruction(text: string): Instruction {
  return { programAddress: MEMO_PROGRAM_ADDRESS, data: new TextEncoder().encode(text) };
}

// Two transactions alike in recipients, amounts, blockhash and fee would otherwise be the same bytes, one signature:
// the second could never be recorded (nor land). The memo makes each payment's transaction its own, while a re-sign of
// the same payments on the same blockhash stays the same bytes, which the chain lands at most once. A transaction of
// one payout names its payment, as it always did. A batch names them by a hash: its payments' ids would take ~20 bytes
// each of the 1232 the packet holds (a transfer's bytes per two or three payouts), and our attempts record them anyway.
function memoText(requests: readonly TransferRequest[]): string {
  if (requests.length === 1) return requests[0]!.paymentIntentId;
  const hash = createHash('sha256').update(requests.map((r) => r.paymentIntentId).join('\n')).digest('base64url');
  return `batch:${hash.slice(0, BATCH_MEMO_HASH_CHARS)}`;
}

/** The transaction that pays `payouts`, unsigned, and where each payout's instructions sit in it. */
function buildMessage(ctx: TransferContext, lifetime: Lifetime, payouts: readonly Payout[]) {
  const instructions: Instruction[] = [];
  // The idempotent create makes a race with another payout to the same new recipient harmless, in this batch too.
  const own = payouts.map((p) => {
    const create = p.createAta
      ? getCreateAssociatedTokenIdempotentInstruction({ payer: ctx.key.signer, ata: p.recipientAta, owner: p.recipient, mint: ctx.usdcMint })
      : null;
    const transfer = getTransferCheckedInstruction({
      source: ctx.treasuryAta,
      mint: ctx.usdcMint,
      destination: p.recipientAta,
      authority: ctx.key.signer,
      amount: p.request.amountMicros,
      decimals: USDC_DECIMALS,
    });
    if (create) instructions.push(create);
    instructions.push(transfer);
    return { create, transfer };
  });
  instructions.push(memoInstruction(memoText(payouts.map((p) => p.request))));
  const computeUnitLimit = computeUnitLimitOf(payouts);
  const base = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(ctx.key.signer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(lifetime.blockhash, m),
    (m) => appendTransactionMessageInstructions(instructions, m),
    (m) => setTransactionMessageComputeUnitLimit(computeUnitLimit, m),
  );
  const message = lifetime.computeUnitPrice > 0n ? setTransactionMessageComputeUnitPrice(lifetime.computeUnitPrice, base) : base;
  // Positions in the message as compiled (kit places the compute-budget instructions), found by identity.
  const at = (ix: Instruction) => message.instructions.indexOf(ix);
  const layout = payouts.map((p, k) => ({
    paymentIntentId: p.request.paymentIntentId,
    recipientAta: p.recipientAta,
    createdAta: p.createAta,
    transferIndex: at(own[k]!.transfer),
    createAtaIndex: own[k]!.create ? at(own[k]!.create) : null,
  }));
  return { message, layout, computeUnitLimit };
}

type Built = ReturnType<typeof buildMessage>;

/**
 * The transaction paying `payouts`, built, when one transaction can pay them: the one place the packet, compute and
 * batch bounds are applied; null otherwise.
 */
function builtIfFits(ctx: TransferContext, lifetime: Lifetime, payouts: readonly Payout[]): Built | null {
  if (payouts.length > SOLANA_BATCH_TRANSFERS_MAX) return null;
  if (computeUnitLimitOf(payouts) > SOLANA_TRANSACTION_COMPUTE_UNITS_MAX) return null;
  const built = buildMessage(ctx, lifetime, payouts);
  // The compiled size, signature included: what the wire carries.
  return getTransactionMessageSize(built.message) <= SOLANA_TRANSACTION_BYTES_MAX ? built : null;
}

/**
 * Payouts in order, cut where the next one would not fit, each group with its transaction built. A transaction takes
 * at least one payout (a payout of its own fits).
 */
function groupsOf(ctx: TransferContext, lifetime: Lifetime, payouts: readonly Payout[]): { group: Payout[]; built: Built }[] {
  const groups: { group: Payout[]; built: Built }[] = [];
  let current: { group: Payout[]; built: Built } | null = null;
  for (const payout of payouts) {
    const candidate: Payout[] | null = current ? [...current.group, payout] : null;
    const grown: Built | null = candidate ? builtIfFits(ctx, lifetime, candidate) : null;
    if (candidate && grown) current = { group: candidate, built: grown };
    else {
      if (current) groups.push(current);
      current = { group: [payout], built: buildMessage(ctx, lifetime, [payout]) };
    }
  }
  if (current) groups.push(current);
  return groups;
}

/**
 * One answer per request, in order: the transaction that pays it (one object at the places of all it pays), or the
 * ChainError of a request refused on its own. Throws ChainError when the chain cannot be read (for all of them).
 */
export async function prepareUsdcTransfers(
  ctx: TransferContext,
  requests: readonly TransferRequest[],
): Promise<(PreparedUsdcTransaction | ChainError)[]> {
  // 1. Validate each request; the chain is read only if one passes.
  const refusals = refusalsOf(requests, ctx.key.address);
  if (refusals.every((r) => r !== null)) return refusals;

  // 2. Read the chain: who each recipient is and whether its token account exists, and one blockhash and one fee price
  // for the whole call (every transaction of it lives and pays alike).
  const [checked, latest, computeUnitPrice] = await Promise.all([
    payoutsOf(ctx.client, ctx.usdcMint, requests, refusals),
    call(ctx.client, 'getLatestBlockhash', ctx.client.rpc.getLatestBlockhash({ commitment: BUILD_COMMITMENT })),
    ctx.computeUnitPrice(),
  ]);
  const payouts = checked.filter((c): c is Payout => !(c instanceof ChainError));
  const lifetime: Lifetime = { blockhash: latest.value, computeUnitPrice };

  // 3. Build: as many payouts per transaction as fit, in order.
  const answers = new Map<Payout, PreparedUsdcTransaction>();
  for (const { group, built } of groupsOf(ctx, lifetime, payouts)) {
    const { message, layout, computeUnitLimit } = built;
    const meta = encodeMeta({
      blockhash: latest.value.blockhash,
      lastValidBlockHeight: latest.value.lastValidBlockHeight,
      payouts: layout,
      computeUnitLimit,
      computeUnitPriceMicroLamports: computeUnitPrice,
    });
    const prepared: PreparedUsdcTransaction = {
      requests: group.map((p) => p.request),
      computeUnitLimit,
      computeUnitPrice,
      // 4. Sign, when the caller is ready to persist the result.
      async sign() {
        const transaction = await signTransactionMessageWithSigners(message);
        return { txId: getSignatureFromTransaction(transaction), rawTx: getBase64EncodedWireTransaction(transaction), meta };
      },
    };
    for (const payout of group) answers.set(payout, prepared);
  }
  return checked.map((c) => (c instanceof ChainError ? c : answers.get(c)!));
}
