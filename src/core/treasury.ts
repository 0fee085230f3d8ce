// Treasury wallets: one per chain, created and funded through the ledger on first start, and checked on every start:
// a ledger belongs to one wallet (decision 21), so a process whose adapter pays from another wallet refuses to run.
import type { ChainAdapter, ChainAdapters } from '../chains/port.js';
import { withTransaction, type Pool } from '../db/pool.js';
import { insertTreasury, storedTreasuryAddress } from '../db/queries/treasuries.js';
import { CHAINS, type Chain } from '../domain/chain.js';
import { movements } from '../ledger/movements.js';
import { post } from '../ledger/store.js';

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
 * Creates each chain's treasury row once. Only the process whose INSERT wins posts the opening balance: what the
 * wallet holds on chain (a simulated wallet opens with SIM_TREASURY_USDC), USDC and native currency alike, so the books
 * say how much gas is left on every adapter (decision 142). Throws TreasuryMismatchError when a chain's row names another wallet than its adapter's.
 */
export async function ensureTreasuries(pool: Pool, adapters: ChainAdapters, at: Date): Promise<void> {
  for (const chain of CHAINS) {
    const adapter = adapters[chain];
    const existing = await storedTreasuryAddress(pool, chain);
    if (existing !== null) {
      checkTreasury(chain, existing, adapter);
      continue;
    }
    // Asked before the transaction: no lock is held while the node answers.
    const opening = await adapter.treasuryUsdcBalance();
    const openingNative = await adapter.treasuryNativeBalance();
    await withTransaction(pool, async (tx) => {
      const created = await insertTreasury(tx, { chain, address: adapter.treasuryAddress(), nativeCurrency: adapter.nativeCurrency, at });
      if (!created) return;
      if (opening > 0n) await post(tx, movements.fundUsdc(chain, opening), { at });
      if (openingNative > 0n) await post(tx, movements.fundNative(chain, adapter.nativeCurrency, openingNative), { at });
    });
    // Another process may have won the INSERT with another key.
    checkTreasury(chain, (await storedTreasuryAddress(pool, chain))!, adapter);
  }
}

function checkTreasury(chain: Chain, stored: string, adapter: ChainAdapter): void {
  const live = adapter.treasuryAddress();
  if (!sameTreasury(chain, stored, live)) throw new TreasuryMismatchError(chain, stored, live);
}
