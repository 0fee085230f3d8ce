// What an OP-stack rollup (Base, Optimism, any chain whose NAME_FEE_MODEL is `op-stack`) charges beyond gas: the L1
// data fee for posting the transaction's bytes to Ethereum and, from the Isthmus upgrade on, the operator fee. Both are
// taken from the sender's balance outside gasUsed x effectiveGasPrice, and the L1 fee is often most of a transfer's
// cost. A receipt reports them (`l1Fee`; `operatorFeeScalar` and `operatorFeeConstant`, which viem's formatter does
// not parse: they arrive as the node's hex); an estimate asks the GasPriceOracle predeploy, as viem/op-stack does.
import { parseAbi, serializeTransaction, type Address, type Hex, type TransactionReceipt } from 'viem';
import { classifyEthereumError, type EthereumErrorKind } from './errors.js';
import type { EthereumRpc } from './rpc.js';

/** The GasPriceOracle predeploy, at the same address on every OP-stack chain. */
export const GAS_PRICE_ORACLE: Address = '0x420000000000000000000000000000000000000F';

export const GAS_PRICE_ORACLE_ABI = parseAbi([
  'function getL1Fee(bytes _data) view returns (uint256)',
  'function getOperatorFee(uint256 _gasUsed) view returns (uint256)',
  'function isJovian() view returns (bool)',
]);

/** Errors that say the node could not be asked, not what the oracle answered: they fail the read, to be asked again. */
const OUTAGES: ReadonlySet<EthereumErrorKind> = new Set(['timeout', 'unreachable', 'http_error', 'rate_limited']);

/** The fees beyond gas a receipt reports: its L1 data fee and its operator fee; 0 on a chain that reports neither. */
export async function feesBeyondGas(rpc: EthereumRpc, receipt: TransactionReceipt): Promise<bigint> {
  const fields = receipt as unknown as Record<string, unknown>;
  const l1Fee = quantity(fields.l1Fee);
  const scalar = quantity(fields.operatorFeeScalar);
  const constant = quantity(fields.operatorFeeConstant);
  if (scalar === 0n && constant === 0n) return l1Fee;
  // Jovian changed the formula (its scalar counts 100 wei a gas, Isthmus's a millionth); the receipt does not say
  // which one its block used, the oracle of that block does.
  const jovian = await isJovian(rpc, receipt.blockNumber);
  const operatorFee = jovian ? receipt.gasUsed * scalar * 100n + constant : (receipt.gasUsed * scalar) / 1_000_000n + constant;
  return l1Fee + operatorFee;
}

/** A receipt's hex quantity; absent (a chain that does not charge it) is 0. */
function quantity(value: unknown): bigint {
  if (value === undefined || value === null) return 0n;
  if (typeof value === 'bigint') return value;
  if (typeof value === 'string' && /^0x[0-9a-fA-F]+$/.test(value)) return BigInt(value);
  throw new TypeError(`the receipt's fee field is not a quantity: ${String(value)}`);
}

async function isJovian(rpc: EthereumRpc, blockNumber: bigint): Promise<boolean> {
  const ask = (at?: bigint) => rpc.readContract({ address: GAS_PRICE_ORACLE, abi: GAS_PRICE_ORACLE_ABI, functionName: 'isJovian', ...(at === undefined ? {} : { blockNumber: at }) });
  try {
    return await ask(blockNumber);
  } catch (error) {
    const kind = classifyEthereumError(error);
    if (OUTAGES.has(kind)) throw error;
    // An oracle from before Jovian has no isJovian.
    if (kind === 'execution_reverted') return false;
  }
  // The node no longer keeps that block's state: once active, Jovian stays, so the latest block answers for any block
  // final after the upgrade settled.
  try {
    return await ask();
  } catch (error) {
    if (classifyEthereumError(error) === 'execution_reverted') return false;
    throw error;
  }
}

export interface OpStackTransaction {
  chainId: number;
  to: Address;
  data: Hex;
  gas: bigint;
}

/**
 * What a transaction like `tx` would pay beyond gas now: the oracle's L1 fee of its bytes plus its operator fee for
 * `gas`. The fees and nonce in the bytes are stand-ins (a few bytes of the size the L1 fee is charged on), as viem's
 * estimateL1Fee does; an oracle from before Isthmus has no operator fee.
 */
export async function estimateFeesBeyondGas(rpc: EthereumRpc, tx: OpStackTransaction): Promise<bigint> {
  const unsigned = serializeTransaction({ type: 'eip1559', chainId: tx.chainId, to: tx.to, data: tx.data, gas: tx.gas, nonce: 1, value: 0n, maxFeePerGas: 5_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n });
  const [l1Fee, operatorFee] = await Promise.all([
    rpc.readContract({ address: GAS_PRICE_ORACLE, abi: GAS_PRICE_ORACLE_ABI, functionName: 'getL1Fee', args: [unsigned] }),
    rpc.readContract({ address: GAS_PRICE_ORACLE, abi: GAS_PRICE_ORACLE_ABI, functionName: 'getOperatorFee', args: [tx.gas] }).catch((error: unknown) => {
      if (classifyEthereumError(error) === 'execution_reverted') return 0n;
      throw error;
    }),
  ]);
  return l1Fee + operatorFee;
}

/** Whether the node has the GasPriceOracle predeploy: a node marked OP-stack that is not one (a devnet) has none. */
export async function hasGasPriceOracle(rpc: EthereumRpc): Promise<boolean> {
  const code = await rpc.getCode({ address: GAS_PRICE_ORACLE });
  return code !== undefined && code !== '0x';
}
