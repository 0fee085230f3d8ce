// The ERC-20 functions a payout needs. USDC on every EVM chain implements exactly these signatures.
import { decodeFunctionData, encodeFunctionData, parseAbi, type Address, type Hex } from 'viem';
import type { EthereumRpc } from './rpc.js';

export const ERC20_ABI = parseAbi([
  'function transfer(address to, uint256 value) returns (bool)',
  'function balanceOf(address owner) view returns (uint256)',
  'function decimals() view returns (uint8)',
  'function allowance(address owner, address spender) view returns (uint256)',
]);

/** USDC's decimals on every chain; our micro-units are exactly its base units. */
export const USDC_DECIMALS = 6;

/** A USDC transfer costs ~45k gas to a holder and ~62k to a first-time recipient; routing assumes the worse. */
export const TYPICAL_TRANSFER_GAS = 65_000n;

export function encodeTransfer(to: Address, amountMicros: bigint): Hex {
  return encodeFunctionData({ abi: ERC20_ABI, functionName: 'transfer', args: [to, amountMicros] });
}

/** The recipient and amount of a `transfer` call, or null when the data is something else. */
export function decodeTransfer(data: Hex): { to: Address; amountMicros: bigint } | null {
  try {
    const call = decodeFunctionData({ abi: ERC20_ABI, data });
    if (call.functionName !== 'transfer') return null;
    const [to, amountMicros] = call.args;
    return { to, amountMicros };
  } catch {
    return null;
  }
}

export async function readBalance(rpc: EthereumRpc, token: Address, owner: Address): Promise<bigint> {
  return rpc.readContract({ address: token, abi: ERC20_ABI, functionName: 'balanceOf', args: [owner] });
}

export async function readDecimals(rpc: EthereumRpc, token: Address): Promise<number> {
  return rpc.readContract({ address: token, abi: ERC20_ABI, functionName: 'decimals' });
}

/** What `owner` lets `spender` move of its tokens (the treasury's standing approval to the batch contract). */
export async function readAllowance(rpc: EthereumRpc, token: Address, owner: Address, spender: Address): Promise<bigint> {
  return rpc.readContract({ address: token, abi: ERC20_ABI, functionName: 'allowance', args: [owner, spender] });
}
