// Amounts typed on the operator CLI reach the same arithmetic as the APIs' (decision 1): a policy limit or a
// withdrawal beyond the largest amount the service accepts (999999999.999999) is refused with a message, changing
// nothing, instead of failing in the database or storing a limit no JSON number can show exactly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { runCommand } from '../helpers/process.js';

const SOL = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

let db: TestDatabase;
let env: Record<string, string>;
let merchantId = '';
beforeAll(async () => {
  db = await createTestDatabase();
  env = { DATABASE_URL: db.url };
  const created = await runCommand(['merchants', 'create', '--name', 'Bounds', '--json'], env);
  expect(created.code, created.stderr).toBe(0);
  merchantId = (JSON.parse(created.stdout.trim().split('\n').at(-1)!) as { merchant_id: string }).merchant_id;
});
afterAll(async () => db.drop());

const policyRows = async () => (await db.pool.query('SELECT * FROM merchant_policies ORDER BY merchant_id')).rows;
// The first command with a full context books the treasuries' opening balances: count what a withdrawal writes.
const reservations = async () =>
  (await db.pool.query<{ n: number }>("SELECT (SELECT COUNT(*) FROM payment_intents) + (SELECT COUNT(*) FROM ledger_transactions WHERE type = 'reserve') AS n")).rows[0]!.n;

describe('amounts on the CLI', () => {
  it('merchants policy: a limit beyond the largest amount is exit 2 naming the flag, nothing stored; the largest is accepted', async () => {
    const before = await policyRows();
    const refused = [
      ['max-payment-usd', '1000000000'],
      ['daily-limit-usd', '99999999999999999999'], // past PostgreSQL's bigint in micro-units
      ['approval-above-usd', '1e308'],
    ] as const;
    const runs = await Promise.all(refused.map(([flag, value]) => runCommand(['merchants', 'policy', merchantId, `--${flag}`, value], env)));
    expect(runs.map((r) => r.code)).toEqual([2, 2, 2]);
    runs.forEach((r, i) => expect(r.stderr).toContain(`--${refused[i]![0]} expects a USD amount`));
    expect(await policyRows()).toEqual(before);

    const largest = '999999999.999999';
    const accepted = await runCommand(
      ['merchants', 'policy', merchantId, '--max-payment-usd', largest, '--daily-limit-usd', largest, '--approval-above-usd', largest, '--json'],
      env,
    );
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(JSON.parse(accepted.stdout.trim().split('\n').at(-1)!)).toMatchObject({ max_payment_usd: 999999999.999999, daily_limit_usd: 999999999.999999 });
  });

  it('treasury withdraw --usdc beyond the largest amount: INVALID_AMOUNT, nothing reserved', async () => {
    const before = await reservations();
    const runs = await Promise.all(
      ['1000000000', '99999999999999999999'].map((value) => runCommand(['treasury', 'withdraw', '--chain', 'solana', '--to', SOL, '--usdc', value], env)),
    );
    expect(runs.map((r) => [r.code, r.stderr.split(':')[0]])).toEqual([
      [1, 'INVALID_AMOUNT'],
      [1, 'INVALID_AMOUNT'],
    ]);
    expect(await reservations()).toBe(before);
  });
});
