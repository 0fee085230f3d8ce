// Builds the adapter of each chain from configuration.
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Pool } from '../db/pool.js';
import type { Chain, ChainAdapter, ChainAdapters } from './port.js';
import { createSimulatedAdapter } from './simulated/adapter.js';

export async function createAdapters(config: Config, pool: Pool, clock: Clock, log: Logger): Promise<ChainAdapters> {
  const simulated = (chain: Chain): ChainAdapter =>
    createSimulatedAdapter({
      chain,
      db: pool,
      clock,
      seed: config.simSeed,
      failureRate: config.simFailureRate,
      stuckRate: config.simStuckRate,
      confirmSeconds: config.simConfirmSeconds,
      nativeUsdPrice: chain === 'ethereum' ? config.ethUsdPrice : config.solUsdPrice,
    });
  const ethereum = config.ethereumAdapter === 'rpc' ? await rpcEthereum(config, log) : simulated('ethereum');
  const solana = config.solanaAdapter === 'rpc' ? await rpcSolana(config, log) : simulated('solana');
  return { ethereum, solana };
}

async function rpcEthereum(config: Config, log: Logger): Promise<ChainAdapter> {
  const { createEthereumAdapter } = await import('./ethereum/adapter.js');
  return createEthereumAdapter({
    rpcUrl: config.ethereum.rpcUrl!,
    usdcAddress: config.ethereum.usdcAddress!,
    treasuryKey: config.ethereum.treasuryKey!,
    confirmations: config.ethereum.confirmations,
    ethUsdPrice: config.ethUsdPrice,
    rpcTimeoutSeconds: config.rpcTimeoutSeconds,
    logger: log,
  });
}

async function rpcSolana(config: Config, log: Logger): Promise<ChainAdapter> {
  const { createSolanaAdapter } = await import('./solana/adapter.js');
  return createSolanaAdapter({
    rpcUrl: config.solana.rpcUrl!,
    usdcMint: config.solana.usdcMint!,
    treasuryKey: config.solana.treasuryKey!,
    solUsdPrice: config.solUsdPrice,
    rpcTimeoutSeconds: config.rpcTimeoutSeconds,
    logger: log,
  });
}
