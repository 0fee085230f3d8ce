// Builds the adapter of each chain from configuration.
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Pool } from '../db/pool.js';
import type { Metrics } from '../metrics/registry.js';
import { instrumentAdapter } from './instrumented.js';
import type { Chain, ChainAdapter, ChainAdapters } from './port.js';
import { createEthereumSigner, createSolanaSigner } from './signers/factory.js';
import { createSimulatedAdapter } from './simulated/adapter.js';

/** With `metrics`, every chain call is timed and its failures counted (src/chains/instrumented.ts). */
export async function createAdapters(config: Config, pool: Pool, clock: Clock, log: Logger, metrics?: Metrics): Promise<ChainAdapters> {
  const simulated = async (chain: Chain): Promise<ChainAdapter> => {
    const adapter = createSimulatedAdapter({
      chain,
      db: pool,
      clock,
      seed: config.simSeed,
      failureRate: config.simFailureRate,
      stuckRate: config.simStuckRate,
      confirmSeconds: config.simConfirmSeconds,
      nativeUsdPrice: chain === 'ethereum' ? config.ethUsdPrice : config.solUsdPrice,
      openingUsdcMicros: config.simTreasuryUsdcMicros,
    });
    // The simulated network lives in this database: its treasury wallet exists from the first start on.
    await adapter.genesis(clock.now());
    return adapter;
  };
  const ethereum = config.ethereumAdapter === 'rpc' ? await rpcEthereum(config, log) : await simulated('ethereum');
  const solana = config.solanaAdapter === 'rpc' ? await rpcSolana(config, log) : await simulated('solana');
  if (!metrics) return { ethereum, solana };
  return { ethereum: instrumentAdapter(ethereum, metrics), solana: instrumentAdapter(solana, metrics) };
}

async function rpcEthereum(config: Config, log: Logger): Promise<ChainAdapter> {
  const { createEthereumAdapter } = await import('./ethereum/adapter.js');
  const signer = await createEthereumSigner(config, log);
  return closingOnFailure(signer, () =>
    createEthereumAdapter({
      rpcUrl: config.ethereum.rpcUrl!,
      usdcAddress: config.ethereum.usdcAddress!,
      signer,
      confirmations: config.ethereum.confirmations,
      ethUsdPrice: config.ethUsdPrice,
      rpcTimeoutSeconds: config.rpcTimeoutSeconds,
      logger: log,
    }),
  );
}

async function rpcSolana(config: Config, log: Logger): Promise<ChainAdapter> {
  const { createSolanaAdapter } = await import('./solana/adapter.js');
  const signer = await createSolanaSigner(config, log);
  return closingOnFailure(signer, async () =>
    createSolanaAdapter({
      rpcUrl: config.solana.rpcUrl!,
      usdcMint: config.solana.usdcMint!,
      signer,
      solUsdPrice: config.solUsdPrice,
      rpcTimeoutSeconds: config.rpcTimeoutSeconds,
      logger: log,
    }),
  );
}

/** An adapter closes its signer; one that was never built leaves that to us. */
async function closingOnFailure(signer: { close(): Promise<void> }, build: () => Promise<ChainAdapter>): Promise<ChainAdapter> {
  try {
    return await build();
  } catch (error) {
    await signer.close();
    throw error;
  }
}
