// When a block is final on an EVM chain, by the chain's rule (decision 159): `confirmations` deep below the latest
// block (Ethereum as stableroute always counted it), or at or below the block the node tags `finalized` or `safe` (a
// rollup's own rule: an OP-stack or Arbitrum block is finalized once the L1 block holding its batch is).
import type { FinalityRule } from '../../domain/chain-presets.js';
import type { EthereumRpc } from './rpc.js';

export interface Finality {
  rule: FinalityRule;
  /** Blocks until final under the `confirmations` rule, the block holding the transaction included. */
  confirmations: number;
}

/** The highest final block, given the latest one. A chain with no final block yet answers -1. */
export async function finalHeight(rpc: EthereumRpc, finality: Finality, latest: bigint): Promise<bigint> {
  if (finality.rule === 'confirmations') return latest - BigInt(finality.confirmations - 1);
  const tagged = await rpc.getBlock({ blockTag: finality.rule });
  return tagged.number ?? -1n;
}
