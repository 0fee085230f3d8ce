// EIP-1559 fees from the node's fee market: the next block's base fee from eth_feeHistory, the tip from
// eth_maxPriorityFeePerGas. maxFeePerGas = 2 x base fee + tip survives six consecutive full blocks (+12.5% each)
// before the transaction stops being includable, which is the usual wallet rule.
import type { EthereumRpc } from './rpc.js';

const FEE_HISTORY_BLOCKS = 10;

export interface FeeMarket {
  /** Base fee of the next block, in wei per gas. */
  baseFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  /** Mean gasUsedRatio of the recent blocks: 0 idle .. 1 full. */
  congestion: number;
}

export interface Eip1559Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

export async function readFeeMarket(rpc: EthereumRpc): Promise<FeeMarket> {
  const [history, maxPriorityFeePerGas] = await Promise.all([
    rpc.getFeeHistory({ blockCount: FEE_HISTORY_BLOCKS, blockTag: 'latest', rewardPercentiles: [] }),
    rpc.estimateMaxPriorityFeePerGas(),
  ]);
  // baseFeePerGas has one entry more than the blocks asked for: the last is the base fee of the next block.
  const baseFeePerGas = history.baseFeePerGas.at(-1) ?? 0n;
  const ratios = history.gasUsedRatio.filter((ratio) => Number.isFinite(ratio));
  const mean = ratios.length === 0 ? 0 : ratios.reduce((sum, ratio) => sum + ratio, 0) / ratios.length;
  return { baseFeePerGas, maxPriorityFeePerGas, congestion: Math.min(1, Math.max(0, mean)) };
}

export function marketFees(market: FeeMarket): Eip1559Fees {
  return {
    maxFeePerGas: 2n * market.baseFeePerGas + market.maxPriorityFeePerGas,
    maxPriorityFeePerGas: market.maxPriorityFeePerGas,
  };
}

/** x * 1.125 rounded up, and always at least x + 1 so a zero tip still counts as a bump. */
function bumped(value: bigint): bigint {
  const scaled = (value * 9n + 7n) / 8n;
  return scaled > value ? scaled : value + 1n;
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/**
 * Fees for a same-nonce replacement. Nodes replace a pending transaction only when both fee fields rise by a
 * minimum (geth: 10%); +12.5% clears every common client. Never below what the market asks now, or the
 * replacement would be stuck too.
 */
export function replacementFees(stuck: Eip1559Fees, market: FeeMarket): Eip1559Fees {
  const now = marketFees(market);
  const maxPriorityFeePerGas = max(bumped(stuck.maxPriorityFeePerGas), now.maxPriorityFeePerGas);
  const maxFeePerGas = max(max(bumped(stuck.maxFeePerGas), now.maxFeePerGas), maxPriorityFeePerGas);
  return { maxFeePerGas, maxPriorityFeePerGas };
}
