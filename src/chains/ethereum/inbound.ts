// Transfers into the treasury, for the deposit scanner (decisions 122, 123): USDC Transfer logs whose `to` is the
// treasury, and the native value of transactions sent to it, in blocks final by the chain's rule (finality.ts). The position is the last block scanned.
import { parseAbiItem, type Address } from 'viem';
import type { InboundScan, InboundTransfer } from '../port.js';
import type { TokenCurrency } from '../../domain/token.js';
import { finalHeight, type Finality } from './finality.js';
import type { EthereumRpc } from './rpc.js';

const TRANSFER_EVENT = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

/** Blocks read per scan call: every block's transactions are fetched for native value, so the page stays small. */
const INBOUND_BLOCKS_PER_SCAN = 25n;

export interface InboundInput {
  rpc: EthereumRpc;
  /** Each configured token's contract and ledger currency (issue 40): one getLogs reads them all. */
  tokens: readonly { address: Address; currency: TokenCurrency }[];
  treasury: Address;
  finality: Finality;
}

export async function readInboundTransfers(input: InboundInput, position: string): Promise<InboundScan> {
  const { rpc, tokens, treasury } = input;
  const currencyAt = new Map(tokens.map((t) => [t.address.toLowerCase(), t.currency]));
  const scanned = BigInt(position);
  const latest = await rpc.getBlockNumber();
  const safe = await finalHeight(rpc, input.finality, latest);
  if (safe <= scanned) return { transfers: [], position, more: false };
  const fromBlock = scanned + 1n;
  const toBlock = safe < scanned + INBOUND_BLOCKS_PER_SCAN ? safe : scanned + INBOUND_BLOCKS_PER_SCAN;
  const numbers: bigint[] = [];
  for (let n = fromBlock; n <= toBlock; n++) numbers.push(n);
  const [logs, blocks] = await Promise.all([
    rpc.getLogs({ address: tokens.map((t) => t.address), event: TRANSFER_EVENT, args: { to: treasury }, fromBlock, toBlock }),
    Promise.all(numbers.map((blockNumber) => rpc.getBlock({ blockNumber, includeTransactions: true }))),
  ]);
  const found: (InboundTransfer & { block: bigint; position: number })[] = [];
  for (const log of logs) {
    const currency = currencyAt.get(log.address.toLowerCase());
    if (log.removed || log.args.value === undefined || log.args.value <= 0n || !log.args.from || currency === undefined) continue;
    found.push({
      txId: log.transactionHash,
      index: log.logIndex,
      from: log.args.from,
      currency,
      amountUnits: log.args.value,
      block: log.blockNumber,
      position: log.transactionIndex,
    });
  }
  const valueTransfers = blocks.flatMap((block) =>
    block.transactions.filter((tx) => tx.to?.toLowerCase() === treasury.toLowerCase() && tx.value > 0n).map((tx) => ({ block, tx })),
  );
  // A reverted transaction moves no value: only successful ones count.
  const receipts = await Promise.all(valueTransfers.map(({ tx }) => rpc.getTransactionReceipt({ hash: tx.hash })));
  valueTransfers.forEach(({ block, tx }, i) => {
    if (receipts[i]!.status !== 'success') return;
    found.push({ txId: tx.hash, index: -1, from: tx.from, currency: 'native', amountUnits: tx.value, block: block.number!, position: tx.transactionIndex ?? 0 });
  });
  found.sort((a, b) => (a.block === b.block ? a.position - b.position || a.index - b.index : a.block < b.block ? -1 : 1));
  return {
    transfers: found.map(({ txId, index, from, currency, amountUnits }) => ({ txId, index, from, currency, amountUnits })),
    position: String(toBlock),
    more: toBlock < safe,
  };
}
