// Builds the adapter of each configured chain (CHAINS) from its settings.
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { ConfigError, envName, type ChainSettings, type Config } from '../config.js';
import type { Pool } from '../db/pool.js';
import type { Metrics } from '../metrics/registry.js';
import { instrumentAdapter } from './instrumented.js';
import { createNetworkClaims, type NetworkClaims } from './networks.js';
import type { ChainAdapter, ChainAdapters } from './port.js';
import { createEthereumSigner, createSolanaSigner } from './signers/factory.js';
import { createSimulatedAdapter } from './simulated/adapter.js';

/** With `metrics`, every chain call is timed and its failures counted (src/chains/instrumented.ts). */
export async function createAdapters(config: Config, pool: Pool, clock: Clock, log: Logger, metrics?: Metrics): Promise<ChainAdapters> {
  const adapters: ChainAdapters = {};
  // Two chains reaching one network stop start-up, naming both (src/chains/networks.ts).
  const networks = createNetworkClaims();
  try {
    for (const name of config.chainNames) {
      const settings = config.chains[name]!;
      const adapter = settings.adapter === 'rpc' ? await rpcAdapter(config, settings, log, networks) : await simulated(config, settings, pool, clock);
      adapters[name] = metrics ? instrumentAdapter(adapter, metrics) : adapter;
    }
  } catch (error) {
    // A chain that cannot start stops start-up: the ones already built close their signers.
    await Promise.allSettled(Object.values(adapters).map((adapter) => adapter.close?.()));
    throw error;
  }
  return adapters;
}

async function simulated(config: Config, settings: ChainSettings, pool: Pool, clock: Clock): Promise<ChainAdapter> {
  const adapter = createSimulatedAdapter({
    settings,
    db: pool,
    clock,
    seed: config.simSeed,
    failureRate: config.simFailureRate,
    stuckRate: config.simStuckRate,
    confirmSeconds: config.simConfirmSeconds,
    openingUsdcMicros: config.simTreasuryUsdcMicros,
  });
  // The simulated network lives in this database: its treasury wallet exists from the first start on.
  await adapter.genesis(clock.now());
  return adapter;
}

async function rpcAdapter(config: Config, settings: ChainSettings, log: Logger, networks: NetworkClaims): Promise<ChainAdapter> {
  const others = settings.tokens.filter((t) => t.token !== 'usdc').map((t) => t.token);
  // Ethereum-family nodes pay every token (one transfer a transaction beyond USDC); Solana's Token-2022 is not done yet.
  if (others.length > 0 && settings.family === 'solana') {
    throw new ConfigError(`${envName(settings.name)}_TOKENS`, `${others.join(', ')}: Solana with a node (ADAPTER=rpc) pays only usdc so far; simulated chains and EVM chains with a node pay every token`);
  }
  if (settings.family === 'solana') {
    const { createSolanaAdapter } = await import('./solana/adapter.js');
    const signer = await createSolanaSigner(config, settings, log);
    return closingOnFailure(signer, async () =>
      createSolanaAdapter({
        rpcUrl: settings.rpcUrl!,
        usdcMint: settings.usdcAddress!,
        signer,
        solUsdPrice: settings.nativeUsdPrice,
        rpcTimeoutSeconds: config.rpcTimeoutSeconds,
        logger: log,
      }),
    );
  }
  const { createEthereumAdapter } = await import('./ethereum/adapter.js');
  const signer = await createEthereumSigner(config, settings, log);
  return closingOnFailure(signer, () =>
    createEthereumAdapter({
      chain: settings,
      rpcUrl: settings.rpcUrl!,
      usdcAddress: settings.usdcAddress!,
      tokens: Object.fromEntries(settings.tokens.filter((t) => t.token !== 'usdc').map((t) => [t.token, t.address!])),
      batchContract: settings.batchContract,
      networks,
      signer,
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
