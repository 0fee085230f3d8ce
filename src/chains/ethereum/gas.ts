// Gas limit for one transfer: the node's estimate plus a margin, because the recipient's storage slot may change
// between estimate and inclusion. An estimate that reverts is refused before any nonce is taken; one that fails for
// any other reason falls back to a fixed limit that fits every USDC transfer.
import type { Address, Hex } from 'viem';
import { ChainError } from '../port.js';
import { readBalance } from './erc20.js';
import { chainErrorOf, classifyEthereumError } from './errors.js';
import type { EthereumRpc } from './rpc.js';

const GAS_MARGIN_PERCENT = 20n;
export const FALLBACK_TRANSFER_GAS = 100_000n;

export interface GasEstimateInput {
  rpc: EthereumRpc;
  from: Address;
  token: Address;
  data: Hex;
  amountMicros: bigint;
  onFallback?: (error: unknown) => void;
}

export async function estimateTransferGas(input: GasEstimateInput): Promise<bigint> {
  const { rpc, from, token, data } = input;
  try {
    // 'latest', not 'pending': estimate against state that exists. Over-spending across in-flight transfers is
    // the ledger's job (reservations), and a pending-state estimate is not supported alike by every provider.
    const estimate = await rpc.estimateGas({ account: from, to: token, data, blockTag: 'latest' });
    return estimate + (estimate * GAS_MARGIN_PERCENT) / 100n;
  } catch (error) {
    if (classifyEthereumError(error) !== 'execution_reverted') {
      input.onFallback?.(error);
      return FALLBACK_TRANSFER_GAS;
    }
    throw await revertError(input, error);
  }
}

/** Tells "the treasury does not hold the USDC" (the common revert) apart from any other refusal of the token. */
async function revertError(input: GasEstimateInput, cause: unknown): Promise<ChainError> {
  const operation = { operation: 'eth_estimateGas', outcome: 'rejected' } as const;
  let balance: bigint;
  try {
    balance = await readBalance(input.rpc, input.token, input.from);
  } catch {
    return chainErrorOf('execution_reverted', operation, cause);
  }
  if (balance < input.amountMicros) {
    return new ChainError('insufficient_funds', 'rejected', 'the treasury holds less USDC than the transfer', {
      details: `balance ${balance} < amount ${input.amountMicros} (micro-USDC)`,
      cause,
    });
  }
  return chainErrorOf('execution_reverted', operation, cause);
}
