// A ledger belongs to one treasury wallet. A devnet restarted with a fresh Solana treasury (or any other key) against
// the same database must stop the service at start-up with a message that says what to do, and reconciliation
// never compares the ledger with another wallet's balance.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdapters } from '../../src/chains/factory.js';
import type { ChainAdapters } from '../../src/chains/port.js';
import { ManualClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config.js';
import { reconcile } from '../../src/core/treasury/reconcile.js';
import { ensureTreasuries, TreasuryMismatchError } from '../../src/core/treasury/treasury.js';
import { startSolanaDevnet, type SolanaDevnet } from '../../src/devnet/solana.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { runCommand } from '../helpers/process.js';

let first: SolanaDevnet;
let restarted: SolanaDevnet;
let db: TestDatabase;
const clock = new ManualClock('2026-03-01T12:00:00.000Z');

beforeAll(async () => {
  [first, restarted, db] = await Promise.all([startSolanaDevnet(), startSolanaDevnet(), createTestDatabase()]);
});

afterAll(async () => {
  await Promise.all([first?.stop(), restarted?.stop()]);
  await db?.drop();
});

function solanaEnv(devnet: SolanaDevnet): Record<string, string> {
  return {
    SOLANA_ADAPTER: 'rpc',
    SOLANA_RPC_URL: devnet.rpcUrl,
    SOLANA_USDC_MINT: devnet.usdcMint,
    SOLANA_TREASURY_KEY: devnet.treasuryKey,
  };
}

async function adaptersFor(devnet: SolanaDevnet): Promise<ChainAdapters> {
  const config = loadConfig({ ...solanaEnv(devnet), DATABASE_URL: db.url });
  return createAdapters(config, db.pool, clock, pino({ level: 'silent' }));
}

describe('treasury identity', () => {
  it('refuses to start when the stored treasury is not the adapter wallet, naming the chain, both addresses and the fix', async () => {
    const before = await adaptersFor(first);
    await ensureTreasuries(db.pool, before, clock.now());
    await ensureTreasuries(db.pool, before, clock.now()); // a restart with the same key is fine

    const after = await adaptersFor(restarted);
    const error = await ensureTreasuries(db.pool, after, clock.now()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TreasuryMismatchError);
    const mismatch = error as TreasuryMismatchError;
    expect(mismatch).toMatchObject({
      chain: 'solana',
      ledgerAddress: first.treasuryAddress,
      adapterAddress: restarted.treasuryAddress,
    });
    expect(mismatch.message).toContain(first.treasuryAddress);
    expect(mismatch.message).toContain(restarted.treasuryAddress);
    expect(mismatch.message).toMatch(/DATA_DIR/);
    expect(mismatch.message).toMatch(/DATABASE_URL/);
    expect(mismatch.message).not.toContain(restarted.treasuryKey);

    // Reconciliation shows the live treasury and does not compare two wallets' balances.
    const [, solana] = await reconcile(db.pool, after);
    expect(solana).toMatchObject({ chain: 'solana', address: restarted.treasuryAddress, status: 'mismatch', on_chain_usdc: null });
    expect(solana!.error).toContain(first.treasuryAddress);
    const [, same] = await reconcile(db.pool, before);
    expect(same).toMatchObject({ chain: 'solana', address: first.treasuryAddress, status: 'ok', difference_usdc: '0' });
  });

  it('stableroute serve exits 1 with that message against a ledger of another treasury', async () => {
    const result = await runCommand(['serve'], { ...solanaEnv(restarted), DATABASE_URL: db.url, PORT: '0', HOST: '127.0.0.1' });
    expect(result.code, result.stdout + result.stderr).toBe(1);
    expect(result.stderr).toContain('the solana treasury changed');
    expect(result.stderr).toContain(first.treasuryAddress);
    expect(result.stderr).toContain(restarted.treasuryAddress);
    expect(result.stderr + result.stdout).not.toContain(restarted.treasuryKey);
  }, 60_000);
});
