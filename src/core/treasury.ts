// Treasury wallets: one per chain, created and funded through the ledger on first start, and checked on every start:
// a ledger belongs to one wallet (decision 21), so a process whose adapter pays from another wallet refuses to run.
import type { Chain, ChainAdapter, ChainAdapters } from '../chains/port.js';
import { CHAINS } from '../chains/port.js';
import { ensureSimulatedWallet } from '../chains/simulated/adapter.js';
import type { Config } from '../config.js';
import { withTransaction, type Pool, type Queryable } from '../db/pool.js';
import { movements } from '../ledger/movements.js';
import { post } from '../ledger/store.js';

/** Native balance a simulated treasury starts with, for fees. */
const SIM_NATIVE_FUNDING: Record<string, bigint> = { ETH: 100n * 10n ** 18n, SOL: 1_000n * 10n ** 9n };

/** The configured adapter pays from another wallet than the one this database's ledger books. */
export class TreasuryMismatchError extends Error {
  override readonly name = 'TreasuryMismatchError';
  constructor(
    readonly chain: Chain,
    readonly ledgerAddress: string,
    readonly adapterAddress: string,
  ) {
    super(
      `the ${chain} treasury changed: this database's ledger belongs to ${ledgerAddress}, but the configured ` +
        `${chain} treasury key is ${adapterAddress}. A ledger belongs to one wallet, so stableroute will not start. ` +
        `For a new treasury (for instance after restarting \`stableroute devnet\`, whose chains start empty), use a ` +
        `fresh database: a new DATA_DIR, or an empty database in DATABASE_URL. To keep this ledger, configure the ` +
        `${chain} treasury key of ${ledgerAddress} again.`,
    );
  }
}

/** Same wallet? Ethereum addresses are case-insensitive (the case is only a checksum); Solana's are exact. */
export function sameTreasury(chain: Chain, a: string, b: string): boolean {
  return chain === 'ethereum' ? a.toLowerCase() === b.toLowerCase() : a === b;
}

/**
 * Creates each chain's treasury row once. Only the process whose INSERT wins posts the opening balance: the
 * configured SIM_TREASURY_USDC for a simulated chain, the on-chain USDC balance for a real one. Throws
 * TreasuryMismatchError when a chain's row names another wallet than its adapter's.
 */
export async function ensureTreasuries(pool: Pool, adapters: ChainAdapters, config: Pick<Config, 'simTreasuryUsdcMicros'>, at: Date): Promise<void> {
  for (const chain of CHAINS) {
    const adapter = adapters[chain];
    const existing = await storedTreasuryAddress(pool, chain);
    if (existing !== null) {
      checkTreasury(chain, existing, adapter);
      continue;
    }
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
    // Another process may have won the INSERT with another key.
    checkTreasury(chain, (await storedTreasuryAddress(pool, chain))!, adapter);
  }
}

async function storedTreasuryAddress(db: Queryable, chain: Chain): Promise<string | null> {
  const { rows } = await db.query<{ address: string }>('SELECT address FROM treasuries WHERE chain = $1', [chain]);
  return rows[0]?.address ?? null;
}

function checkTreasury(chain: Chain, stored: string, adapter: ChainAdapter): void {
  const live = adapter.treasuryAddress();
  if (!sameTreasury(chain, stored, live)) throw new TreasuryMismatchError(chain, stored, live);
}

async function onChainBalance(adapter: ChainAdapter): Promise<bigint> {
  return adapter.treasuryUsdcBalance();
}
