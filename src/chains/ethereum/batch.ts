// Several USDC payouts in one EVM transaction (issue 28): a call of the batch-transfer contract (NAME_BATCH_CONTRACT,
// src/devnet/BatchTransfer.sol) that pulls the total from the treasury once and pays each recipient, all or nothing.
// The treasury approves the contract once, without limit (decision 188): the contract pulls only from its caller, so
// the approval lets nobody else spend, and a batch never has to count what the batches still in flight will pull.
import { decodeFunctionData, encodeFunctionData, getAddress, type Address, type Hex } from 'viem';
import { BATCH_CONTRACT_ABI } from './batch-contract.js';
import { classifyEthereumError } from './errors.js';
import type { EthereumRpc } from './rpc.js';

export interface Payout {
  to: Address;
  amountMicros: bigint;
}

/** The contract call paying `payouts` in `token`. */
export function encodeBatch(token: Address, payouts: readonly Payout[]): Hex {
  return encodeFunctionData({
    abi: BATCH_CONTRACT_ABI,
    functionName: 'batchTransfer',
    args: [token, payouts.map((p) => p.to), payouts.map((p) => p.amountMicros)],
  });
}

/** The token and payouts of a batch call, or null when the data is something else. */
export function decodeBatch(data: Hex): { token: Address; payouts: Payout[] } | null {
  try {
    const call = decodeFunctionData({ abi: BATCH_CONTRACT_ABI, data });
    if (call.functionName !== 'batchTransfer') return null;
    const [token, recipients, amounts] = call.args;
    if (recipients.length !== amounts.length) return null;
    return { token: getAddress(token), payouts: recipients.map((to, i) => ({ to: getAddress(to), amountMicros: amounts[i]! })) };
  } catch {
    return null;
  }
}

/**
 * An approval at least this large is unlimited: `type(uint256).max`, less whatever a token that spends even a maximal
 * allowance (USDC does) has pulled from it, which no treasury could ever bring below 2^255.
 */
export const UNLIMITED_APPROVAL = 2n ** 255n;

/** Margin over the node's estimate: each recipient's balance slot may change between the estimate and inclusion. */
const GAS_MARGIN_PERCENT = 20n;

/**
 * The gas limit of a batch call from the treasury, or 'reverted' when the call would revert (a payout the token
 * refuses, the approval short, the treasury's balance short): the caller then finds which payouts are at fault.
 * Other failures of the estimate (the node) throw.
 */
export async function estimateBatchGas(rpc: EthereumRpc, from: Address, contract: Address, data: Hex): Promise<bigint | 'reverted'> {
  try {
    const estimate = await rpc.estimateGas({ account: from, to: contract, data, blockTag: 'latest' });
    return estimate + (estimate * GAS_MARGIN_PERCENT) / 100n;
  } catch (error) {
    if (classifyEthereumError(error) === 'execution_reverted') return 'reverted';
    throw error;
  }
}
