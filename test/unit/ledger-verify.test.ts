// `ledger verify` must catch a books that no longer add up: a tampered balance, an unbalanced transaction, an
// intent whose entries tell an impossible story. A verifier that always passes would prove nothing.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { recordExternalTransfers } from '../../src/chains/simulated/external-transfer.js';
import { scanDeposits } from '../../src/core/treasury/deposits/scan.js';
import type { Pool } from '../../src/db/pool.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createPayment, createTestContext, type TestContext } from '../helpers/context.js';
import { runCommand } from '../helpers/process.js';

let t: TestContext;
let intentId: string;

beforeEach(async () => {
  t = await createTestContext();
  intentId = await createPayment(t.app, 12.5);
});
afterEach(async () => t.close());

async function checksFailing(): Promise<string[]> {
  return [...new Set((await verifyLedger(t.db.pool)).problems.map((p) => p.check))].sort();
}

describe('ledger verify', () => {
  it('passes on consistent books and exits 0', async () => {
    expect(await checksFailing()).toEqual([]);
    const cli = await runCommand(['ledger', 'verify'], { DATABASE_URL: t.db.url });
    expect(cli.code, cli.stderr).toBe(0);
  });

  it('catches a materialised balance that differs from its postings, and exits 1', async () => {
    await t.db.pool.query("UPDATE ledger_accounts SET balance = balance + 1 WHERE chain = 'solana' AND kind = 'treasury_available' AND currency = 'USDC'");
    expect(await checksFailing()).toEqual(['account_balance_equals_postings']);
    const cli = await runCommand(['ledger', 'verify', '--json'], { DATABASE_URL: t.db.url });
    expect(cli.code).toBe(1);
    expect(cli.stdout).toContain('account_balance_equals_postings');
  });

  it('catches a transaction whose postings do not sum to zero', async () => {
    await t.db.pool.query(
      `UPDATE ledger_postings SET amount = amount * 2
        WHERE id = (SELECT p.id FROM ledger_postings p JOIN ledger_transactions x ON x.id = p.transaction_id
                     WHERE x.payment_intent_id = $1 AND p.amount > 0 LIMIT 1)`,
      [intentId],
    );
    expect(await checksFailing()).toContain('transaction_balances');
  });

  it('catches an intent marked settled without its settlement entries', async () => {
    await t.db.pool.query("UPDATE payment_intents SET status = 'settled' WHERE id = $1", [intentId]);
    expect(await checksFailing()).toEqual(['payment_intent_story']);
  });

  it('catches an inbound transfer not booked exactly once, and exits 1', async () => {
    const treasury = t.ctx.adapters.solana!.treasuryAddress();
    await recordExternalTransfers(t.db.pool, t.ctx.config.simSeed, [
      { chain: 'solana', from: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM', to: treasury, currency: 'USDC', amountUnits: 3_000_000n, at: t.clock.now() },
    ]);
    expect((await scanDeposits(t.ctx)).booked).toBe(1);
    expect(await checksFailing()).toEqual([]);
    // One booking claimed by a second transfer: the database itself refuses it.
    await expect(
      t.db.pool.query(
        `INSERT INTO inbound_transfers (chain, tx_id, transfer_index, from_address, currency, amount, match_status, funding_transaction_id, booked_at)
         SELECT chain, tx_id || 'x', transfer_index, from_address, currency, amount, match_status, funding_transaction_id, booked_at FROM inbound_transfers`,
      ),
    ).rejects.toThrow(/inbound_transfers_funding_tx/);
    // A transfer whose recorded amount is not what was booked.
    await t.db.pool.query('UPDATE inbound_transfers SET amount = amount * 2');
    expect(await checksFailing()).toEqual(['inbound_transfer_booked_once']);
    const cli = await runCommand(['ledger', 'verify', '--json'], { DATABASE_URL: t.db.url });
    expect(cli.code).toBe(1);
    expect(cli.stdout).toContain('inbound_transfer_booked_once');
  });

  it('reads one snapshot: a change committed while it runs is neither half-seen nor reported', async () => {
    // The pool verify uses, with one difference: as soon as its first check has run, another connection commits a
    // tampered balance. Checks on one snapshot (decision 19) all still see the books from before it.
    const tamper = "UPDATE ledger_accounts SET balance = balance + 1 WHERE chain = 'solana' AND kind = 'treasury_available' AND currency = 'USDC'";
    let tampered = false;
    const racing = {
      connect: async () => {
        const client = await t.db.pool.connect();
        const { query, release } = client;
        client.query = (async (...args: unknown[]) => {
          const result = await (query as (...a: unknown[]) => Promise<unknown>).apply(client, args);
          if (!tampered && typeof args[0] === 'string' && args[0].includes('HAVING SUM(amount) <> 0')) {
            tampered = true;
            await t.db.pool.query(tamper);
          }
          return result;
        }) as typeof client.query;
        client.release = (error?: Error | boolean) => {
          client.query = query;
          client.release = release;
          release.call(client, error);
        };
        return client;
      },
    } as unknown as Pool;
    expect((await verifyLedger(racing)).problems).toEqual([]);
    expect(tampered).toBe(true);
    // The change was committed: the next verification reports it.
    expect(await checksFailing()).toEqual(['account_balance_equals_postings']);
  });
});
