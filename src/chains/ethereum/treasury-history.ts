// The treasury's own transactions since the newest one the books hold as landed (decision 199), for the check after
// the database history changed. Nonces tell what the books cannot know: the treasury's transaction count (mined, and
// with the pool's pending ones) against the nonces the books allocated. The transactions themselves are found through
// the token's Transfer logs from the treasury (a batch through the batch contract logs one per payout, from the
// treasury too) since the block of the books' newest landed transaction: every transaction the books lost was signed
// after that one landed, so its nonce is higher and its block no earlier. A transaction without a Transfer log (a
// cancel on chain, a reverted one) shows only as a nonce.
import type { Token } from '../../domain/token.js';
import { keccak256, parseAbiItem, serializeTransaction, type Address, type Hex, type Transaction } from 'viem';
import { EVM_BOOKS_CHECK_LOOKBACK_BLOCKS, EVM_LOG_RANGE_BLOCKS } from '../../bounds.js';
import type { BooksLanded, SignedTransfer, TreasuryActivity, TreasuryTransaction } from '../port.js';
import { receiptOrNull } from './lookups.js';
import type { EthereumRpc } from './rpc.js';

const TRANSFER_EVENT = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

export interface TreasuryHistoryInput {
  rpc: EthereumRpc;
  /** Each configured token's contract (issue 40): one getLogs reads them all. */
  tokens: readonly { address: Address; token: Token }[];
  treasury: Address;
}

export async function readTreasuryTransactions(input: TreasuryHistoryInput, books: BooksLanded): Promise<TreasuryActivity> {
  const { rpc, tokens, treasury } = input;
  const tokenAt = new Map(tokens.map((t) => [t.address.toLowerCase(), t.token]));
  const [latestBlock, latest, pending] = await Promise.all([
    rpc.getBlockNumber(),
    rpc.getTransactionCount({ address: treasury, blockTag: 'latest' }),
    rpc.getTransactionCount({ address: treasury, blockTag: 'pending' }),
  ]);
  // 1. Where to start: the block of the books' newest landed transaction the node has.
  let fromBlock: bigint | null = null;
  for (const txId of books.landed) {
    const receipt = await receiptOrNull(rpc, txId as Hex);
    if (receipt) {
      fromBlock = receipt.blockNumber;
      break;
    }
  }
  const floor = latestBlock > EVM_BOOKS_CHECK_LOOKBACK_BLOCKS ? latestBlock - EVM_BOOKS_CHECK_LOOKBACK_BLOCKS : 0n;
  const complete = fromBlock !== null || floor === 0n;
  const start = fromBlock ?? floor;

  // 2. Every USDC transfer out of the treasury since, grouped by transaction, in chain order.
  const byTx = new Map<Hex, TreasuryTransaction['transfers']>();
  for (let from = start; from <= latestBlock; from += EVM_LOG_RANGE_BLOCKS) {
    const to = from + EVM_LOG_RANGE_BLOCKS - 1n < latestBlock ? from + EVM_LOG_RANGE_BLOCKS - 1n : latestBlock;
    const logs = await rpc.getLogs({ address: tokens.map((t) => t.address), event: TRANSFER_EVENT, args: { from: treasury }, fromBlock: from, toBlock: to });
    for (const log of logs) {
      const token = tokenAt.get(log.address.toLowerCase());
      if (log.removed || log.args.to === undefined || log.args.value === undefined || token === undefined) continue;
      const transfers = byTx.get(log.transactionHash) ?? [];
      transfers.push({ to: log.args.to, amountMicros: log.args.value, token });
      byTx.set(log.transactionHash, transfers);
    }
  }

  // 3. Each transaction's nonce and bytes, for those the treasury sent.
  const transactions: TreasuryTransaction[] = [];
  for (const [hash, transfers] of byTx) {
    const tx = await rpc.getTransaction({ hash });
    if (tx.from.toLowerCase() !== treasury.toLowerCase()) continue;
    transactions.push({ txId: hash, nonce: tx.nonce, failed: false, transfers, memo: null, signed: signedOf(tx) });
  }
  return { transactions, complete, nonces: { latest, pending }, mark: String(latestBlock), quiet: true };
}

/** The transaction as this adapter signs them (transaction.ts), rebuilt from the node's fields; null if they differ. */
function signedOf(tx: Transaction): SignedTransfer | null {
  if (tx.type !== 'eip1559' || tx.to === null || tx.yParity === undefined) return null;
  const rawTx = serializeTransaction(
    {
      type: 'eip1559',
      chainId: tx.chainId,
      nonce: tx.nonce,
      to: tx.to,
      data: tx.input,
      gas: tx.gas,
      value: tx.value,
      maxFeePerGas: tx.maxFeePerGas,
      maxPriorityFeePerGas: tx.maxPriorityFeePerGas,
      accessList: tx.accessList,
    },
    { r: tx.r, s: tx.s, yParity: tx.yParity },
  );
  if (keccak256(rawTx) !== tx.hash.toLowerCase()) return null;
  return {
    txId: tx.hash,
    rawTx,
    meta: { nonce: tx.nonce, gas: tx.gas.toString(), maxFeePerGas: tx.maxFeePerGas.toString(), maxPriorityFeePerGas: tx.maxPriorityFeePerGas.toString() },
  };
}
