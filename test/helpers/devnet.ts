// The environment that points the service at the local chains, as `stableroute devnet` prints it (both in rpc mode,
// Ethereum final after 2 blocks); `overrides` changes or adds settings (a proxy in front of a node, other timeouts).
import { envName } from '../../src/config.js';
import type { EthereumDevnet } from '../../src/devnet/ethereum.js';
import type { SolanaDevnet } from '../../src/devnet/solana.js';

export function devnetEnv(eth: EthereumDevnet, sol: SolanaDevnet, overrides: Record<string, string> = {}): Record<string, string> {
  return {
    ETHEREUM_ADAPTER: 'rpc',
    ETHEREUM_RPC_URL: eth.rpcUrl,
    ETHEREUM_USDC_ADDRESS: eth.usdcAddress,
    ETHEREUM_TREASURY_KEY: eth.treasuryKey,
    ETHEREUM_CONFIRMATIONS: '2',
    SOLANA_ADAPTER: 'rpc',
    SOLANA_RPC_URL: sol.rpcUrl,
    SOLANA_USDC_MINT: sol.usdcMint,
    SOLANA_TREASURY_KEY: sol.treasuryKey,
    ...overrides,
  };
}

/**
 * One more EVM chain of CHAINS on its own devnet node, as `stableroute devnet --chains NAME` prints it: rpc mode, the
 * node's chain id, its USDC, the treasury key; finality by the chain's preset.
 */
export function evmChainEnv(name: string, node: EthereumDevnet): Record<string, string> {
  const prefix = envName(name);
  return {
    [`${prefix}_ADAPTER`]: 'rpc',
    [`${prefix}_RPC_URL`]: node.rpcUrl,
    [`${prefix}_USDC_ADDRESS`]: node.usdcAddress,
    [`${prefix}_CHAIN_ID`]: String(node.chainId),
    [`${prefix}_TREASURY_KEY`]: node.treasuryKey,
  };
}
