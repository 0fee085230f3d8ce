// Where a transfer stands, from the receipt, the block height and the account's nonce. Anything that ends an
// attempt (final, failed) is reported only at the configured depth, so that a reorganisation cannot undo it: a
// worker that re-signs after a "failed" must be sure the first transaction can no longer land.
import type { Address, TransactionReceipt } from 'viem';
import type { SignedTransfer, TxStatus } from '../port.js';
import { classifyEthereumError } from './errors.js';
import { nodeKnowsTransaction, receiptOrNull } from './lookups.js';
import { finalHeight, type Finality } from './finality.js';
import { feesBeyondGas } from './op-stack.js';
import type { EthereumRpc } from './rpc.js';
import { parseSignedTransfer } from './transaction.js';

export interface StatusInput {
  rpc: EthereumRpc;
  from: Address;
  finality: Finality;
  /** Finality instants already asked for by the reads sharing this input (a round's page), by block. */
  finalities?: Map<bigint, Promise<{ finalAt?: Date }>>;
}

export async function readTransferStatus(input: StatusInput, signed: SignedTransfer): Promise<TxStatus> {
  const { rpc } = input;
  const { hash, nonce } = parseSignedTransfer(signed);
  const receipt = await receiptOrNull(rpc, hash);
  if (receipt) return statusFromReceipt(input, receipt);

  if (await nonceUsedAtFinalDepth(input, nonce)) {
    // Our own transaction may have been mined between the receipt read and the nonce read.
    const late = await receiptOrNull(rpc, hash);
    if (late) return statusFromReceipt(input, late);
    return {
      state: 'failed',
      reason: 'nonce_conflict',
      feeNative: 0n,
      details: `nonce ${nonce} of ${input.from} was used by another transaction`,
    };
  }
  return (await nodeKnowsTransaction(rpc, hash)) ? { state: 'pending' } : { state: 'unknown' };
}

async function statusFromReceipt(input: StatusInput, receipt: TransactionReceipt): Promise<TxStatus> {
  const latest = await input.rpc.getBlockNumber();
  const depth = latest - receipt.blockNumber + 1n;
  const confirmations = depth < 1n ? 1 : Number(depth);
  const final = await finalHeight(input.rpc, input.finality, latest);
  if (receipt.blockNumber > final) return { state: 'included', confirmations };
  // What the chain took: the gas, and on an OP-stack rollup its L1 data and operator fees, which gas leaves out.
  const feeNative = receipt.gasUsed * receipt.effectiveGasPrice + (await feesBeyondGas(input.rpc, receipt));
  if (receipt.status === 'reverted') {
    return { state: 'failed', reason: 'reverted', feeNative, details: `reverted in block ${receipt.blockNumber}` };
  }
  // The block that made it final: its last confirmation, or (a tag rule) the tagged block, which is no earlier.
  const finalBlock = input.finality.rule === 'confirmations' ? receipt.blockNumber + BigInt(input.finality.confirmations - 1) : final;
  return { state: 'final', feeNative, ...(await finality(input, finalBlock)) };
}

/**
 * When the transfer became final by our rule: the timestamp of the block that gave it its last confirmation (whole
 * seconds, as Ethereum keeps them), for the finality -> settlement metric. Omitted when the node refuses that read:
 * the verdict stands without it (a node that does not answer at all times the whole status read out, as for any of
 * its reads).
 */
function finality(input: StatusInput, blockNumber: bigint): Promise<{ finalAt?: Date }> {
  const asked = input.finalities?.get(blockNumber);
  if (asked) return asked;
  const finalAt = input.rpc.getBlock({ blockNumber }).then(
    (block) => ({ finalAt: new Date(Number(block.timestamp) * 1000) }),
    () => ({}),
  );
  input.finalities?.set(blockNumber, finalAt);
  return finalAt;
}

/**
 * Whether the account's nonce count at the deepest block we call final is above `nonce`, i.e. some transaction
 * with our nonce is final. Nodes that do not keep state that deep (non-archive, confirmations > ~128) cannot tell;
 * then the transfer stays pending/unknown and the stuck timer hands it to an operator.
 */
async function nonceUsedAtFinalDepth(input: StatusInput, nonce: number): Promise<boolean> {
  try {
    const finalBlock = await finalHeight(input.rpc, input.finality, await input.rpc.getBlockNumber());
    if (finalBlock < 0n) return false;
    const count = await input.rpc.getTransactionCount({ address: input.from, blockNumber: finalBlock });
    return count > nonce;
  } catch (error) {
    const kind = classifyEthereumError(error);
    if (kind === 'timeout' || kind === 'unreachable' || kind === 'rate_limited' || kind === 'http_error') throw error;
    return false;
  }
}
