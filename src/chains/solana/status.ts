// Where a signed transfer stands. Solana has no mempool to ask about: a signature is either known to the node or
// not, and an unknown one can provably never land only once the chain is past the blockhash's last valid height.
import type { Address, Signature } from '@solana/kit';
import type { SignedTransfer, TxStatus } from '../port.js';
import { rawFailedPayoutNote, rawTransactionErrorVerdict, reasonOf } from './errors.js';
import { decodeMeta } from './meta.js';
import { call, type RpcClient } from './rpc.js';
import { SOLANA_STATUS_SIGNATURES_PER_CALL_MAX } from '../../bounds.js';

/** Confirmations reported for a finalized transaction whose details the node cannot return yet. */
const FINALIZED_CONFIRMATIONS = 32;

export interface SignatureStatus {
  confirmationStatus: 'processed' | 'confirmed' | 'finalized' | null;
  confirmations: bigint | null;
  err: unknown;
}

export async function signatureStatuses(client: RpcClient, txIds: readonly string[]): Promise<(SignatureStatus | null)[]> {
  const statuses: (SignatureStatus | null)[] = [];
  for (let i = 0; i < txIds.length; i += SOLANA_STATUS_SIGNATURES_PER_CALL_MAX) {
    const chunk = txIds.slice(i, i + SOLANA_STATUS_SIGNATURES_PER_CALL_MAX) as Signature[];
    const answer = await call(client, 'getSignatureStatuses', client.rpc.getSignatureStatuses(chunk, { searchTransactionHistory: true }));
    for (let j = 0; j < chunk.length; j++) statuses.push(answer.value[j] ?? null);
  }
  return statuses;
}

export async function signatureStatus(client: RpcClient, txId: string): Promise<SignatureStatus | null> {
  return (await signatureStatuses(client, [txId]))[0] ?? null;
}

export async function finalizedBlockHeight(client: RpcClient): Promise<bigint> {
  return call(client, 'getBlockHeight', client.rpc.getBlockHeight({ commitment: 'finalized' }));
}

/**
 * Statuses of many transfers: one getSignatureStatuses per 256, the finalized height once if any is unseen, and a
 * getTransaction for each that is final (its fee), which happens once in a transfer's life.
 */
export async function transferStatuses(client: RpcClient, treasury: Address, signed: readonly SignedTransfer[]): Promise<TxStatus[]> {
  if (signed.length === 0) return [];
  const statuses: (SignatureStatus | 'expired' | null)[] = await signatureStatuses(client, signed.map((s) => s.txId));
  const unseen = statuses.flatMap((status, i) => (status ? [] : [i]));
  if (unseen.length > 0) {
    // Not seen: maybe still propagating (the caller re-sends the same bytes), or never to land. The finalized height
    // is read first; for a transfer past its lastValidBlockHeight, a status read after it is the final word.
    const height = await finalizedBlockHeight(client);
    const past = unseen.filter((i) => height > decodeMeta(signed[i]!).lastValidBlockHeight);
    const again = await signatureStatuses(client, past.map((i) => signed[i]!.txId));
    past.forEach((i, k) => {
      statuses[i] = again[k] ?? 'expired';
    });
  }
  return Promise.all(signed.map((transfer, i) => statusOfSignature(client, treasury, transfer, statuses[i] ?? null)));
}

/** `status`: what getSignatureStatuses said; 'expired' when it knows nothing past the blockhash's last valid height. */
async function statusOfSignature(
  client: RpcClient,
  treasury: Address,
  signed: SignedTransfer,
  status: SignatureStatus | 'expired' | null,
): Promise<TxStatus> {
  if (status === null) return { state: 'unknown' };
  if (status === 'expired') return { state: 'expired' };
  const meta = decodeMeta(signed);
  // A failure is reported only once final too: a failed transaction on an abandoned fork does not stop the same
  // bytes from landing on the chosen one while the blockhash is valid. 'processed' is one leader's block that the
  // cluster has not voted on yet: pending. 'confirmed' (a supermajority voted) is included, not final.
  // A node too old to report confirmationStatus says "rooted" with confirmations: null.
  const commitment = status.confirmationStatus ?? (status.confirmations === null ? 'finalized' : 'processed');
  switch (commitment) {
    case 'finalized':
      break;
    case 'confirmed':
      return { state: 'included', confirmations: Number(status.confirmations ?? 0n) };
    case 'processed':
      return { state: 'pending' };
    default: {
      const exhaustive: never = commitment;
      return exhaustive;
    }
  }
  const transaction = await call(
    client,
    'getTransaction',
    client.rpc.getTransaction(signed.txId as Signature, {
      commitment: 'finalized',
      encoding: 'json',
      maxSupportedTransactionVersion: 0,
    }),
  );
  if (!transaction?.meta) return { state: 'included', confirmations: FINALIZED_CONFIRMATIONS };
  const feeNative = treasuryLamportsSpent(transaction, treasury);
  if (status.err !== null && status.err !== undefined) {
    return {
      state: 'failed',
      reason: reasonOf(rawTransactionErrorVerdict(status.err, meta), 'reverted'),
      feeNative,
      details: [
        JSON.stringify(status.err, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value)),
        rawFailedPayoutNote(status.err, meta),
      ]
        .filter((part) => part !== undefined)
        .join('\n'),
    };
  }
  return { state: 'final', feeNative };
}

interface LandedTransaction {
  meta: { fee: bigint; preBalances: readonly bigint[]; postBalances: readonly bigint[] } | null;
  transaction: { message: { accountKeys: readonly Address[] } };
}

/**
 * The native cost of the transaction: what the treasury (the fee payer, account 0) lost, which is the fee plus the
 * rent of the token accounts it created (an on-chain batch may create several; the core shares the whole). Measured
 * rather than predicted, so a token account that someone else created first (the idempotent create then does nothing)
 * costs no rent here.
 */
function treasuryLamportsSpent(transaction: LandedTransaction, treasury: Address): bigint {
  const meta = transaction.meta;
  if (!meta) return 0n;
  const pre = meta.preBalances[0];
  const post = meta.postBalances[0];
  if (transaction.transaction.message.accountKeys[0] !== treasury || pre === undefined || post === undefined) {
    return meta.fee;
  }
  const spent = pre - post;
  return spent > meta.fee ? spent : meta.fee;
}
