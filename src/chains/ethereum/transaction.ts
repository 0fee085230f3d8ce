// Signing and reading back our EIP-1559 transactions: USDC transfers, and cancels on chain (zero ETH from the treasury
// to itself, no call data). None moves ETH. The signed bytes are the source of truth: the tx id is their keccak hash,
// and a replacement or a status check reads nonce and fees from them, never from meta alone.
import { keccak256, parseTransaction, type Address, type Hex, type LocalAccount } from 'viem';
import { ChainError, type SignedTransfer } from '../port.js';
import type { Eip1559Fees } from './fees.js';

export interface TransferTransaction extends Eip1559Fees {
  chainId: number;
  nonce: number;
  /** The token contract; for a cancel on chain, the treasury itself. */
  to: Address;
  /** The token call; `0x` for a cancel on chain. */
  data: Hex;
  gas: bigint;
}

/** What a plain transaction without call data costs, whatever the network: a cancel on chain uses exactly this. */
export const PLAIN_TRANSACTION_GAS = 21_000n;

export async function signTransaction(account: LocalAccount, tx: TransferTransaction): Promise<SignedTransfer> {
  const rawTx = await account.signTransaction({ type: 'eip1559', value: 0n, ...tx });
  return {
    txId: keccak256(rawTx),
    rawTx,
    // JSON-safe copies for operators and workers; bigints as decimal strings.
    meta: {
      nonce: tx.nonce,
      gas: tx.gas.toString(),
      maxFeePerGas: tx.maxFeePerGas.toString(),
      maxPriorityFeePerGas: tx.maxPriorityFeePerGas.toString(),
    },
  };
}

const HEX = /^0x[0-9a-fA-F]*$/;

/** Decodes a SignedTransfer this adapter produced. A malformed one is our bug (or a corrupted row): internal_error. */
export function parseSignedTransfer(signed: SignedTransfer): TransferTransaction & { hash: Hex } {
  const corrupt = (details: string, cause?: unknown) =>
    new ChainError('internal_error', 'rejected', 'not a signed Ethereum transfer of this adapter', { details, cause });
  if (!HEX.test(signed.rawTx) || !HEX.test(signed.txId)) throw corrupt('rawTx and txId must be 0x-hex');
  const rawTx = signed.rawTx as Hex;
  const hash = keccak256(rawTx);
  if (hash !== signed.txId.toLowerCase()) throw corrupt(`txId ${signed.txId} is not the hash of rawTx (${hash})`);
  let parsed;
  try {
    parsed = parseTransaction(rawTx);
  } catch (cause) {
    throw corrupt('rawTx does not decode', cause);
  }
  const { type, chainId, nonce, to, data, gas, maxFeePerGas, maxPriorityFeePerGas } = parsed;
  if (type !== 'eip1559' || chainId === undefined || nonce === undefined || !to || gas === undefined) {
    throw corrupt(`unexpected transaction fields (type ${type})`);
  }
  if (maxFeePerGas === undefined || maxPriorityFeePerGas === undefined) throw corrupt('missing EIP-1559 fees');
  // An empty call (a cancel) decodes without data.
  return { hash, chainId, nonce, to, data: data ?? '0x', gas, maxFeePerGas, maxPriorityFeePerGas };
}
