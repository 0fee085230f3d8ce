// Treasury wallets: one per chain, created and funded through the ledger on first start.
import type { ChainAdapter, ChainAdapters } from '../chains/port.js';
import { CHAINS } from '../chains/port.js';
import { ensureSimulatedWallet } from '../chains/simulated/adapter.js';
import type { Config } from '../config.js';
import { withTransaction, type Pool } from '../db/pool.js';
import { movements } from '../ledger/movements.js';
import { post } from '../ledger/store.js';

/** Native balance a simulated treasury starts with, for fees. */
const SIM_NATIVE_FUNDING: Record<string, bigint> = { ETH: 100n * 10n ** 18n, SOL: 1_000n * 10n ** 9n };

/**
 * Creates each chain's treasury row once. Only the process whose INSERT wins posts the opening balance: the
 * configured SIM_TREASURY_USDC for a simulated chain, the on-chain USDC balance for a real one.
 */
export async function ensureTreasuries(pool: Pool, adapters: ChainAdapters, config: Pick<Config, 'simTreasuryUsdcMicros'>, at: Date): Promise<void> {
  for (const chain of CHAINS) {
    const adapter = adapters[chain];
    const exists = await pool.query('SELECT 1 FROM treasuries WHERE chain = $1', [chain]);
    if (exists.rowCount) continue;
    const opening = adapter.kind === 'simulated' ? config.simTreasuryUsdcMicros : await onChainBalance(adapter);
    await withTransaction(pool, async (tx) => {
      const inserted = await tx.query(
        `INSERT INTO treasuries (chain, address, native_currency, created_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (chain) DO NOTHING`,
        [chain, adapter.treasuryAddress(), adapter.nativeCurrency, at],
      );
      if (inserted.rowCount !== 1) return;
      if (opening > 0n) await post(tx, movements.fundUsdc(chain, opening), { at });
      if (adapter.kind === 'simulated') {
        await ensureSimulatedWallet(tx, chain, adapter.treasuryAddress(), opening, at);
        const native = SIM_NATIVE_FUNDING[adapter.nativeCurrency]!;
        await post(tx, movements.fundNative(chain, adapter.nativeCurrency, native), { at });
      }
    });
  }
}

async function onChainBalance(adapter: ChainAdapter): Promise<bigint> {
  return adapter.treasuryUsdcBalance();
}
