// Gas on the simulated chains (decision 28): native funding and every fee are booked; below the low-water mark the
// collector reports the chain degraded with the reason and raises one low_gas alert (sent, signed, to the operator's
// receiver); a chain whose booked native balance cannot pay the next fee is disqualified in routing with its reason in
// scoring_details; funding it again resolves the alert and the chain is healthy again.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliverAlertNotifications } from '../../src/core/operators/alerts.js';
import { movements } from '../../src/ledger/movements.js';
import { treasuryNativeBalances } from '../../src/ledger/native-balances.js';
import { postMany } from '../../src/ledger/store.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { ensureTreasuries } from '../../src/core/treasury/treasury.js';
import { recordHealthSnapshots } from '../../src/core/health/health-snapshots.js';
import { createPayment, createTestContext, ETH_ADDRESS, KEY, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { confirm, drainExecution } from '../helpers/workers.js';

const SECRET = 'operator-gas-alert-secret-0123456789abcdef';
const ETH = 10n ** 18n;

let t: TestContext;
let receiver: Receiver;
const quiet = pino({ level: 'silent' });

beforeAll(async () => {
  receiver = await startReceiver(SECRET);
  // The simulated treasury opens with 100 ETH; one transfer's fee (about 0.00065 ETH) takes it below 99.9999.
  t = await createTestContext({ ETHEREUM_GAS_LOW_WATER: '99.9999', OPERATOR_WEBHOOK_URL: receiver.url, OPERATOR_WEBHOOK_SECRET: SECRET });
});

afterAll(async () => {
  await t.close();
  await receiver.close();
});

const collect = async () => {
  t.clock.advance(15_000);
  await recordHealthSnapshots({ ...t.ctx, log: quiet });
};
const ethereumHealth = async () =>
  ((await t.app.inject({ method: 'GET', url: '/admin/overview' })).json().chain_health as { chain: string; health_status: string; status_reason: string | null }[]).find(
    (s) => s.chain === 'ethereum',
  )!;
const treasury = async (chain: string) =>
  ((await t.app.inject({ method: 'GET', url: '/admin/treasury' })).json() as { chain: string; native_balance: string; gas_low: boolean; gas_low_water: string }[]).find(
    (c) => c.chain === chain,
  )!;
const openAlerts = async () => (await t.app.inject({ method: 'GET', url: '/admin/alerts?status=open' })).json().data as { kind: string; chain: string; message: string }[];
const quote = (destination: Record<string, string>) =>
  t.app.inject({ method: 'POST', url: '/quotes', headers: KEY, payload: { amount_usd: 5, destination, priority: 'low_fee' } });

describe('gas', () => {
  it('books the opening native balance and every fee', async () => {
    expect(await treasury('ethereum')).toMatchObject({ native_balance: '100', gas_low: false, gas_low_water: '99.9999' });
    await collect();
    expect(await ethereumHealth()).toMatchObject({ health_status: 'healthy', status_reason: null });

    const id = await createPayment(t.app, 10, { ethereum_address: ETH_ADDRESS });
    await drainExecution(t);
    t.clock.advance(200_000);
    await confirm(t);
    const intent = (await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json();
    expect(intent.status).toBe('settled');
    const fee = (await t.db.pool.query<{ fee: string }>(
      `SELECT p.amount::text AS fee FROM ledger_transactions t JOIN ledger_postings p ON p.transaction_id = t.id
        JOIN ledger_accounts a ON a.id = p.account_id WHERE t.payment_intent_id = $1 AND t.type = 'fee' AND a.kind = 'network_fees'`,
      [id],
    )).rows;
    expect(fee).toHaveLength(1);
    const feeWei = BigInt(fee[0]!.fee);
    expect(feeWei).toBeGreaterThan(0n);
    // The books and the chain agree on what is left.
    expect(await t.ctx.adapters.ethereum!.treasuryNativeBalance()).toBe(100n * ETH - feeWei);
    expect((await treasury('ethereum')).gas_low).toBe(true);
  });

  it('degrades the chain below the low-water mark and raises one alert, sent signed', async () => {
    await collect();
    const health = await ethereumHealth();
    expect(health.health_status).toBe('degraded');
    expect(health.status_reason).toMatch(/^low_gas: the ethereum treasury has 99\.99\d+ ETH for fees, below the low-water mark of 99\.9999 ETH$/);
    await collect();
    expect(await openAlerts()).toEqual([expect.objectContaining({ kind: 'low_gas', chain: 'ethereum' })]);
    expect((await ethereumHealth()).health_status).toBe('degraded');
    // Solana is untouched, and degraded is not disqualified: routing still offers ethereum.
    expect((await t.app.inject({ method: 'GET', url: '/admin/overview' })).json().chain_health.find((s: { chain: string }) => s.chain === 'solana').health_status).toBe('healthy');
    const offered = await quote({ ethereum_address: ETH_ADDRESS });
    expect(offered.statusCode).toBe(201);

    expect(await deliverAlertNotifications({ ...t.ctx, log: quiet })).toBe(1);
    expect(receiver.badSignatures).toBe(0);
    expect(receiver.events).toHaveLength(1);
    expect(receiver.events[0]).toMatchObject({ event_type: 'alert.raised', alert: { kind: 'low_gas', chain: 'ethereum', status: 'open' } });
  });

  it('disqualifies a chain whose booked gas cannot pay the next fee, with the reason in scoring_details', async () => {
    // Drain the booked ETH down to 1 wei (as a run of fees would).
    const left = (await treasuryNativeBalances(t.db.pool)).find((b) => b.chain === 'ethereum')!.units;
    await postMany(t.db.pool, [{ movement: movements.fee('ethereum', 'ETH', left - 1n), context: { at: t.clock.now() } }]);
    await collect();

    const both = await quote({ ethereum_address: ETH_ADDRESS, solana_address: SOL_ADDRESS });
    expect(both.statusCode).toBe(201);
    expect(both.json().recommended_route).toBe('solana');
    expect(both.json().candidate_routes.map((r: { chain: string }) => r.chain)).toEqual(['solana']);
    const created = await t.app.inject({
      method: 'POST',
      url: '/payment_intents',
      headers: KEY,
      payload: { quote_id: both.json().quote_id, idempotency_key: 'gas-debug' },
    });
    const debug = (await t.app.inject({ method: 'GET', url: `/routes/debug/${created.json().payment_intent_id}`, headers: KEY })).json();
    expect(debug.scoring_details.find((d: { chain: string }) => d.chain === 'ethereum')).toMatchObject({
      disqualified: true,
      disqualification_reason: 'insufficient_gas',
    });

    const only = await quote({ ethereum_address: ETH_ADDRESS });
    expect(only.statusCode).toBe(422);
    expect(only.json().code).toBe('NO_ROUTE_AVAILABLE');
    expect(only.json().message).toContain('ethereum: insufficient_gas');
  });

  it('resolves the alert once the treasury is funded again', async () => {
    await postMany(t.db.pool, [{ movement: movements.fundNative('ethereum', 'ETH', 100n * ETH), context: { at: t.clock.now() } }]);
    await collect();
    expect(await ethereumHealth()).toMatchObject({ health_status: 'healthy', status_reason: null });
    expect(await openAlerts()).toEqual([]);
    expect((await quote({ ethereum_address: ETH_ADDRESS })).statusCode).toBe(201);
    expect(await deliverAlertNotifications({ ...t.ctx, log: quiet })).toBe(1);
    expect(receiver.events[1]).toMatchObject({ event_type: 'alert.resolved', alert: { kind: 'low_gas', status: 'resolved' } });
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });
});

describe('a treasury created before native currency was booked', () => {
  it('gets its opening native balance booked once, at the next start', async () => {
    // Play the older version: no native funding on Solana (which routing now refuses, so the payment comes first), and
    // a fee booked against it.
    const id = await createPayment(t.app, 3, { solana_address: SOL_ADDRESS });
    const { rows } = await t.db.pool.query<{ id: string; amount: string }>(
      `SELECT t.id::text, p.amount::text FROM ledger_transactions t JOIN ledger_postings p ON p.transaction_id = t.id
         JOIN ledger_accounts a ON a.id = p.account_id WHERE t.type = 'funding' AND t.chain = 'solana' AND a.kind = 'treasury_native'`,
    );
    expect(rows).toHaveLength(1);
    await t.db.pool.query('DELETE FROM ledger_postings WHERE transaction_id = $1', [rows[0]!.id]);
    await t.db.pool.query('DELETE FROM ledger_transactions WHERE id = $1', [rows[0]!.id]);
    await t.db.pool.query("UPDATE ledger_accounts SET balance = 0 WHERE chain = 'solana' AND kind IN ('treasury_native', 'funding') AND currency = 'SOL'");
    await drainExecution(t);
    t.clock.advance(60_000);
    await confirm(t);
    const bookedSol = async () => (await treasuryNativeBalances(t.db.pool)).find((b) => b.chain === 'solana')!.units;
    expect(await bookedSol()).toBeLessThan(0n);
    expect((await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json().status).toBe('settled');

    // Two processes start.
    await Promise.all([ensureTreasuries(t.db.pool, t.ctx.adapters, t.clock.now()), ensureTreasuries(t.db.pool, t.ctx.adapters, t.clock.now())]);
    expect(await bookedSol()).toBe(await t.ctx.adapters.solana!.treasuryNativeBalance());
    await ensureTreasuries(t.db.pool, t.ctx.adapters, t.clock.now());
    const fundings = await t.db.pool.query(
      `SELECT 1 FROM ledger_transactions t JOIN ledger_postings p ON p.transaction_id = t.id JOIN ledger_accounts a ON a.id = p.account_id
        WHERE t.type = 'funding' AND t.chain = 'solana' AND a.kind = 'treasury_native'`,
    );
    expect(fundings.rowCount).toBe(1);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });
});
