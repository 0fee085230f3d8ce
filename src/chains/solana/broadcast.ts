// Sends signed bytes. With preflight on, the node simulates first and refuses a transaction that would fail, so a
// payout without funds costs no fee and fails fast with a precise reason. Resending is always safe: the signature
// is the id, and a node that already has it answers "already processed", which is success.
import {
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
  isSolanaError,
  type Base64EncodedWireTransaction,
} from '@solana/kit';
import { ChainError, type FailureReason, type SignedTransfer } from '../port.js';
import { isPreflightFailure, preflightDetails, reasonOf, rpcFailure, transactionErrorVerdict } from './errors.js';
import { decodeMeta, type SolanaTransferMeta } from './meta.js';
import type { RpcClient } from './rpc.js';
import { finalizedBlockHeight, signatureStatus } from './status.js';
import { BUILD_COMMITMENT } from './transfer.js';

export async function broadcastTransfer(client: RpcClient, signed: SignedTransfer): Promise<void> {
  const meta = decodeMeta(signed);
  try {
    await client.rpc
      .sendTransaction(signed.rawTx as Base64EncodedWireTransaction, {
        encoding: 'base64',
        skipPreflight: false,
        preflightCommitment: BUILD_COMMITMENT,
      })
      .send({ abortSignal: AbortSignal.timeout(client.timeoutMs) });
  } catch (error) {
    if (!isPreflightFailure(error)) throw rpcFailure(error, 'sendTransaction', true);
    if (isSolanaError(error.cause, SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED)) return;
    const verdict = isSolanaError(error.cause) ? transactionErrorVerdict(error.cause, meta) : 'unclassified';
    await refuse(client, signed, meta, reasonOf(verdict, 'rpc_error'), preflightDetails(error), error);
  }
}

/**
 * The node refused these bytes. A refusal proves only that this send did not go through, so before reporting
 * 'rejected' (which lets a caller sign anew) we make sure that no earlier send of the same bytes has landed.
 */
async function refuse(
  client: RpcClient,
  signed: SignedTransfer,
  meta: SolanaTransferMeta,
  reason: FailureReason,
  details: string,
  cause: unknown,
): Promise<void> {
  let outcome: 'rejected' | 'unknown' = 'rejected';
  try {
    // "Blockhash not found" also comes from a node that lags behind the one that gave us the blockhash; only a
    // finalized height past lastValidBlockHeight proves the bytes can never land. It is read before the status,
    // so that a status read afterwards covers every block the transaction could have landed in.
    if (reason === 'blockhash_expired' && (await finalizedBlockHeight(client)) <= meta.lastValidBlockHeight) {
      outcome = 'unknown';
    }
    if (await signatureStatus(client, signed.txId)) return; // an earlier send landed: that is our transfer
  } catch (error) {
    throw new ChainError(reason, 'unknown', 'Solana node refused the transfer; could not check an earlier send', {
      details,
      cause: error,
    });
  }
  throw new ChainError(reason, outcome, `Solana node refused the transfer (${reason})`, { details, cause });
}
