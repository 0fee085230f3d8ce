// `stableroute treasury withdraw --token T` (issue 40): the token is one of the chain's NAME_TOKENS; the withdrawal
// reserves that token's funds, and an unconfigured token is refused, reserving nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { runCommand } from '../helpers/process.js';

const SOL = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

let db: TestDatabase;
let env: Record<string, string>;
beforeAll(async () => {
  db = await createTestDatabase();
  env = { DATABASE_URL: db.url, SOLANA_TOKENS: 'usdc,usdt', SIM_TREASURY_USDC: '100' };
});
afterAll(async () => db.drop());

describe('treasury withdraw --token', () => {
  it('reserves the named token only; an unconfigured token is INVALID_TOKEN, nothing reserved', async () => {
    const refused = await runCommand(['treasury', 'withdraw', '--chain', 'solana', '--to', SOL, '--usdc', '1', '--token', 'pyusd'], env);
    expect([refused.code, refused.stderr.split(':')[0]]).toEqual([1, 'INVALID_TOKEN']);
    expect((await db.pool.query("SELECT COUNT(*)::int AS n FROM payment_intents")).rows[0].n).toBe(0);

    const accepted = await runCommand(['treasury', 'withdraw', '--chain', 'solana', '--to', SOL, '--usdc', '7.5', '--token', 'usdt', '--json'], env);
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(JSON.parse(accepted.stdout.trim().split('\n').at(-1)!)).toMatchObject({ chain: 'solana', amount_usdc: '7.5', token: 'usdt', status: 'route_selected' });
    const reserved = await db.pool.query<{ currency: string; balance: string }>(
      "SELECT currency, balance::text FROM ledger_accounts WHERE chain = 'solana' AND kind = 'treasury_reserved' AND balance <> 0",
    );
    expect(reserved.rows).toEqual([{ currency: 'USDT', balance: '7500000' }]);
  });
});
