// Sends signed bytes. With preflight on, the node simulates first and refuses a transaction that would fail, so a
// payout without funds costs no fee and is refused with a precise reason. Resending is always safe: the signature
// is the id, and a node that already has it answers "already processed", which is success.
import {
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
  isSolanaError,
  type Base64EncodedWireTransaction,
} from '@solana/kit';
import { ChainError, type FailureReason, type SignedTransfer } from '../port.js';
import { BYTES_NEVER_VALID_ERRORS } from './error-table.js';
import { isPreflightFailure, preflightDetails, reasonOf, rpcFailure, transactionErrorVerdict } from './errors.js';
import { decodeMeta, type SolanaTransferMeta } from './meta.js';
import { BUILD_COMMITMENT, type RpcClient } from './rpc.js';
import { finalizedBlockHeight, signatureStatus } from './status.js';

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
    const reason = reasonOf(verdict, 'rpc_error');
    const details = preflightDetails(error, meta);
    if (isSolanaError(error.cause) && BYTES_NEVER_VALID_ERRORS.has(error.cause.context.__code)) {
      throw new ChainError(reason, 'rejected', `Solana node refused the transfer as invalid (${reason})`, {
        details,
        cause: error,
      });
    }
    await refuse(client, signed, meta, reason, details, error);
  }
}

/**
 * The node refused these bytes for a reason that depends on the chain's state (a busy account, a full block, missing
 * funds, a blockhash this node has not seen). That proves only that this send did not go through: an earlier send of
 * the same bytes may be on its way to a leader, and the state may change while the blockhash is valid. Reporting
 * 'rejected' lets a caller sign a second transfer, so it is reported only once no copy of these bytes can land: the
 * finalized block height is past lastValidBlockHeight and the signature is still unknown. Until then 'unknown'.
 */
async function refuse(
  client: RpcClient,
  signed: SignedTransfer,
  meta: SolanaTransferMeta,
  reason: FailureReason,
  details: string,
  cause: unknown,
): Promise<void> {
  let expired: boolean;
  try {
    // The finalized height is read before the status, so that a status read afterwards covers every block the
    // transaction could have landed in.
    expired = (await finalizedBlockHeight(client)) > meta.lastValidBlockHeight;
    if (await signatureStatus(client, signed.txId)) return; // an earlier send landed: that is our transfer
  } catch (error) {
    throw new ChainError(reason, 'unknown', 'Solana node refused the transfer; could not check an earlier send', {
      details,
      cause: error,
    });
  }
  if (expired) {
    throw new ChainError(reason, 'rejected', `Solana node refused the transfer (${reason}); its blockhash has expired`, {
      details,
      cause,
    });
  }
  throw new ChainError(reason, 'unknown', `Solana node refused the transfer (${reason}); it may still land until its blockhash expires`, {
    details,
    cause,
  });
}
