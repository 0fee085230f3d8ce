// Reads that answer "not found" with an error in viem; here a not-found is a null, every other error propagates.
import { TransactionNotFoundError, TransactionReceiptNotFoundError, type Hex, type TransactionReceipt } from 'viem';
import type { EthereumRpc } from './rpc.js';

export async function receiptOrNull(rpc: EthereumRpc, hash: Hex): Promise<TransactionReceipt | null> {
  try {
    return await rpc.getTransactionReceipt({ hash });
  } catch (error) {
    if (error instanceof TransactionReceiptNotFoundError) return null;
    throw error;
  }
}

/** Whether the node has the transaction, in its pool or in a block. */
export async function nodeKnowsTransaction(rpc: EthereumRpc, hash: Hex): Promise<boolean> {
  try {
    await rpc.getTransaction({ hash });
    return true;
  } catch (error) {
    if (!(error instanceof TransactionNotFoundError)) throw error;
  }
  // Nodes with a limited transaction index still keep receipts of recent blocks.
  return (await receiptOrNull(rpc, hash)) !== null;
}
