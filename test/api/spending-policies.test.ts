// Spending policies at the HTTP edge: each policy refuses exactly what it should with its 4xx code, a refusal
// reserves nothing (no intent, posting, event or job; balances unchanged), overrides replace or lift the service
// defaults, and an idempotent replay still returns its intent after the policy changed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant } from '../../src/core/merchants/merchants.js';
import { cancelPayment } from '../../src/core/operators/transitions/cancel.js';
import { updateMerchantPolicy, type PolicyChange } from '../../src/core/merchants/policies.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createTestContext, ETH_ADDRESS, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { testAudit } from '../helpers/audit.js';

const COOLING_OFF_SECONDS = 3600;
let t: TestContext;

beforeAll(async () => {
  // Service defaults: at most 1000 USD a payment, recipients usable an hour after they are added.
  t = await createTestContext({
    SIM_TREASURY_USDC: '100000',
    POLICY_MAX_PAYMENT_USD: '1000',
    POLICY_ADDRESS_COOLING_OFF_SECONDS: String(COOLING_OFF_SECONDS),
  });
});
afterAll(async () => t.close());

const usd = (n: number) => BigInt(Math.round(n * 1_000_000));
let merchants = 0;
let keys = 0;

/** A fresh merchant (its own policy and volume) with the overrides given. */
async function merchant(change: PolicyChange = {}): Promise<{ id: string; headers: Record<string, string> }> {
  const { merchant: m, apiKey } = await createMerchant(t.db.pool, t.ctx.config, { name: `m${++merchants}`, webhookUrl: null }, t.clock.now(), testAudit());
  if (Object.keys(change).length) await updateMerchantPolicy(t.db.pool, t.ctx.config, m.id, change, t.clock.now(), testAudit());
  return { id: m.id, headers: { 'x-api-key': apiKey } };
}

const quote = (headers: Record<string, string>, amount: number, destination: object = { solana_address: SOL_ADDRESS }) =>
  t.app.inject({ method: 'POST', url: '/quotes', headers, payload: { amount_usd: amount, destination, priority: 'fast' } });

const intent = (headers: Record<string, string>, quoteId: string, key = `k-${++keys}`) =>
  t.app.inject({ method: 'POST', url: '/payment_intents', headers, payload: { quote_id: quoteId, idempotency_key: key } });

/** Quote then intent; returns the intent response. */
async function pay(headers: Record<string, string>, amount: number, destination?: object, key?: string) {
  const q = await quote(headers, amount, destination);
  expect(q.statusCode, q.body).toBe(201);
  return intent(headers, q.json().quote_id, key);
}

/** Everything a reservation writes, for "a refusal reserves nothing". */
async function books() {
  const one = async (sql: string) => (await t.db.pool.query(sql)).rows[0];
  return {
    intents: await one('SELECT COUNT(*)::int AS n FROM payment_intents'),
    transactions: await one('SELECT COUNT(*)::int AS n FROM ledger_transactions'),
    events: await one('SELECT COUNT(*)::int AS n FROM webhook_events'),
    jobs: await one("SELECT COUNT(*)::int AS n FROM pgboss.job WHERE name = 'payment-execute'"),
    accounts: (await t.db.pool.query('SELECT chain, currency, kind, stripe, balance::text FROM ledger_accounts ORDER BY 1, 2, 3, 4')).rows,
  };
}

async function expectRefusal(res: { statusCode: number; json(): { code: string } }, status: number, code: string, before: unknown) {
  expect(res.statusCode).toBe(status);
  expect(res.json()).toEqual({ statusCode: status, error: 'Unprocessable Entity', message: expect.any(String), code });
  expect(await books()).toEqual(before);
}

describe('per-payment maximum', () => {
  it('is refused at quote time (422, nothing stored) and at reservation; at the maximum it passes', async () => {
    const m = await merchant({ maxPaymentMicros: usd(100) });
    const before = await books();
    const refusedQuote = await quote(m.headers, 100.000001);
    await expectRefusal(refusedQuote, 422, 'POLICY_MAX_PAYMENT_EXCEEDED', before);
    expect((await t.db.pool.query('SELECT COUNT(*)::int AS n FROM quotes WHERE merchant_id = $1', [m.id])).rows[0].n).toBe(0);

    // A quote taken under a higher maximum is refused at reservation once the maximum is lowered.
    const q = await quote(m.headers, 100);
    expect(q.statusCode).toBe(201);
    await updateMerchantPolicy(t.db.pool, t.ctx.config, m.id, { maxPaymentMicros: usd(99.99) }, t.clock.now(), testAudit());
    const beforeIntent = await books();
    await expectRefusal(await intent(m.headers, q.json().quote_id, 'max-1'), 422, 'POLICY_MAX_PAYMENT_EXCEEDED', beforeIntent);

    await updateMerchantPolicy(t.db.pool, t.ctx.config, m.id, { maxPaymentMicros: usd(100) }, t.clock.now(), testAudit());
    const ok = await intent(m.headers, q.json().quote_id, 'max-1');
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it('follows the service default (POLICY_MAX_PAYMENT_USD) unless the merchant lifts or replaces it', async () => {
    const inherits = await merchant();
    const lifted = await merchant({ maxPaymentMicros: null });
    const before = await books();
    await expectRefusal(await quote(inherits.headers, 1000.01), 422, 'POLICY_MAX_PAYMENT_EXCEEDED', before);
    expect((await pay(inherits.headers, 1000)).statusCode).toBe(201);
    expect((await pay(lifted.headers, 5000)).statusCode).toBe(201);
    // Back to the default.
    await updateMerchantPolicy(t.db.pool, t.ctx.config, lifted.id, { maxPaymentMicros: 'default' }, t.clock.now(), testAudit());
    expect((await quote(lifted.headers, 5000)).json().code).toBe('POLICY_MAX_PAYMENT_EXCEEDED');
  });
});

describe('rolling 24-hour limit', () => {
  it('counts reserved payments, refuses the one that would cross the limit, and frees what failed or was cancelled', async () => {
    const m = await merchant({ dailyLimitMicros: usd(100) });
    const first = await pay(m.headers, 60);
    expect(first.statusCode).toBe(201);
    expect((await pay(m.headers, 40)).statusCode).toBe(201);

    let q = await quote(m.headers, 0.01);
    const before = await books();
    await expectRefusal(await intent(m.headers, q.json().quote_id), 422, 'POLICY_DAILY_LIMIT_EXCEEDED', before);

    // A cancelled payment's funds went back: its amount no longer counts.
    await cancelPayment(t.ctx, first.json().payment_intent_id, testAudit());
    q = await quote(m.headers, 60);
    expect((await intent(m.headers, q.json().quote_id)).statusCode).toBe(201);
    q = await quote(m.headers, 0.01);
    expect((await intent(m.headers, q.json().quote_id)).json().code).toBe('POLICY_DAILY_LIMIT_EXCEEDED');
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
  });

  it('is rolling: a payment stops counting 24 hours after it was created', async () => {
    const m = await merchant({ dailyLimitMicros: usd(50) });
    expect((await pay(m.headers, 50)).statusCode).toBe(201);
    t.clock.advance(24 * 3600_000 - 1);
    expect((await pay(m.headers, 1)).json().code).toBe('POLICY_DAILY_LIMIT_EXCEEDED');
    t.clock.advance(1);
    expect((await pay(m.headers, 50)).statusCode).toBe(201);
  });

  it('belongs to each merchant: another merchant is not held back', async () => {
    const a = await merchant({ dailyLimitMicros: usd(10) });
    const b = await merchant({ dailyLimitMicros: usd(10) });
    expect((await pay(a.headers, 10)).statusCode).toBe(201);
    expect((await pay(b.headers, 10)).statusCode).toBe(201);
    expect((await pay(a.headers, 1)).json().code).toBe('POLICY_DAILY_LIMIT_EXCEEDED');
  });
});

describe('recipient allowlist (address book)', () => {
  const addresses = (id: string) => `/admin/merchants/${id}/addresses`;

  it('refuses unlisted recipients, then listed ones until their cooling-off is over, then pays them', async () => {
    const m = await merchant({ allowlist: true });
    let before = await books();
    await expectRefusal(await pay(m.headers, 5), 422, 'RECIPIENT_NOT_ALLOWED', before);

    const added = await t.app.inject({ method: 'POST', url: addresses(m.id), payload: { chain: 'solana', address: SOL_ADDRESS, label: 'payroll' } });
    expect(added.statusCode, added.body).toBe(201);
    const usableFrom = new Date(t.clock.now().getTime() + COOLING_OFF_SECONDS * 1000).toISOString();
    expect(added.json()).toEqual({ chain: 'solana', address: SOL_ADDRESS, label: 'payroll', created_at: t.clock.now().toISOString(), usable_from: usableFrom });

    before = await books();
    const cooling = await pay(m.headers, 5);
    await expectRefusal(cooling, 422, 'RECIPIENT_COOLING_OFF', before);
    expect(cooling.json().message).toContain(usableFrom);

    // Adding it again neither restarts nor skips the wait.
    t.clock.advance(COOLING_OFF_SECONDS * 1000 - 1);
    const again = await t.app.inject({ method: 'POST', url: addresses(m.id), payload: { chain: 'solana', address: SOL_ADDRESS } });
    expect(again.statusCode).toBe(200);
    expect(again.json().usable_from).toBe(usableFrom);
    expect((await pay(m.headers, 5)).json().code).toBe('RECIPIENT_COOLING_OFF');
    t.clock.advance(1);
    expect((await pay(m.headers, 5)).statusCode).toBe(201);

    // Removed: refused again.
    const removed = await t.app.inject({ method: 'DELETE', url: `${addresses(m.id)}/solana/${SOL_ADDRESS}` });
    expect(removed.statusCode).toBe(200);
    expect((await pay(m.headers, 5)).json().code).toBe('RECIPIENT_NOT_ALLOWED');
  });

  it('compares Ethereum addresses without case; a Solana address of another case is another address', async () => {
    const m = await merchant({ allowlist: true });
    expect((await t.app.inject({ method: 'POST', url: addresses(m.id), payload: { chain: 'ethereum', address: ETH_ADDRESS } })).statusCode).toBe(201);
    t.clock.advance(COOLING_OFF_SECONDS * 1000);
    const res = await pay(m.headers, 5, { ethereum_address: ETH_ADDRESS.toLowerCase() });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().selected_chain).toBe('ethereum');
    // Listed on ethereum only: the same merchant cannot pay it on Solana.
    expect((await pay(m.headers, 5)).json().code).toBe('RECIPIENT_NOT_ALLOWED');
    const upper = await t.app.inject({ method: 'DELETE', url: `${addresses(m.id)}/ethereum/${ETH_ADDRESS.toLowerCase()}` });
    expect(upper.statusCode).toBe(200);
    expect(upper.json().address).toBe(ETH_ADDRESS);
  });

  it('the allowlist off again pays anyone', async () => {
    const m = await merchant({ allowlist: true });
    expect((await pay(m.headers, 5)).json().code).toBe('RECIPIENT_NOT_ALLOWED');
    await updateMerchantPolicy(t.db.pool, t.ctx.config, m.id, { allowlist: false }, t.clock.now(), testAudit());
    expect((await pay(m.headers, 5)).statusCode).toBe(201);
  });
});

describe('idempotency under a changed policy', () => {
  it('a replayed key returns its intent even after the policy would refuse it now', async () => {
    const m = await merchant();
    const q = await quote(m.headers, 20);
    const created = await intent(m.headers, q.json().quote_id, 'order-replay');
    expect(created.statusCode).toBe(201);
    await updateMerchantPolicy(t.db.pool, t.ctx.config, m.id, { maxPaymentMicros: usd(1), allowlist: true, dailyLimitMicros: 0n }, t.clock.now(), testAudit());
    const replay = await intent(m.headers, q.json().quote_id, 'order-replay');
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(created.json());
  });
});

describe('admin: policy and address book', () => {
  it('GET /admin/merchants/:id/policy shows the policy in force and where each setting comes from', async () => {
    const m = await merchant({ dailyLimitMicros: usd(250.5), allowlist: true, rateLimitPerMinute: 30 });
    const res = await t.app.inject({ method: 'GET', url: `/admin/merchants/${m.id}/policy` });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      merchant_id: m.id,
      max_payment_usd: 1000,
      daily_limit_usd: 250.5,
      approval_above_usd: null,
      approval_above_usd_per_day: null,
      allowlist: true,
      address_cooling_off_seconds: COOLING_OFF_SECONDS,
      rate_limit_per_minute: 30,
      sources: {
        max_payment_usd: 'default',
        daily_limit_usd: 'merchant',
        approval_above_usd: 'default',
        approval_above_usd_per_day: 'default',
        allowlist: 'merchant',
        rate_limit_per_minute: 'merchant',
      },
    });
    const missing = await t.app.inject({ method: 'GET', url: '/admin/merchants/mer_nobody/policy' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('MERCHANT_NOT_FOUND');
  });

  it('validates address-book changes with the chain adapter and answers 4xx without changing anything', async () => {
    const m = await merchant();
    const url = `/admin/merchants/${m.id}/addresses`;
    const cases: Array<[object, number, string]> = [
      [{ chain: 'bitcoin', address: SOL_ADDRESS }, 400, 'INVALID_CHAIN'],
      [{ chain: 'solana', address: ETH_ADDRESS }, 400, 'INVALID_DESTINATION'],
      [{ chain: 'ethereum', address: '0x52908400098527886E0F7030069857D2E4169Ee7' }, 400, 'INVALID_DESTINATION'], // bad checksum
      [{ chain: 'ethereum', address: t.ctx.adapters.ethereum!.treasuryAddress() }, 400, 'INVALID_DESTINATION'],
      [{ chain: 'solana' }, 400, 'INVALID_DESTINATION'],
    ];
    for (const [payload, status, code] of cases) {
      const res = await t.app.inject({ method: 'POST', url, payload });
      expect({ payload, status: res.statusCode, code: res.json().code }).toEqual({ payload, status, code });
    }
    const unknown = await t.app.inject({ method: 'POST', url: '/admin/merchants/mer_nobody/addresses', payload: { chain: 'solana', address: SOL_ADDRESS } });
    expect([unknown.statusCode, unknown.json().code]).toEqual([404, 'MERCHANT_NOT_FOUND']);
    const notListed = await t.app.inject({ method: 'DELETE', url: `${url}/solana/${SOL_ADDRESS}` });
    expect([notListed.statusCode, notListed.json().code]).toEqual([404, 'ADDRESS_NOT_FOUND']);
    expect((await t.app.inject({ method: 'GET', url })).json()).toEqual([]);
  });

  it('lists the address book, optionally for one chain', async () => {
    const m = await merchant();
    const url = `/admin/merchants/${m.id}/addresses`;
    await t.app.inject({ method: 'POST', url, payload: { chain: 'solana', address: SOL_ADDRESS } });
    await t.app.inject({ method: 'POST', url, payload: { chain: 'ethereum', address: ETH_ADDRESS } });
    expect((await t.app.inject({ method: 'GET', url })).json().map((a: { chain: string }) => a.chain)).toEqual(['ethereum', 'solana']);
    expect((await t.app.inject({ method: 'GET', url: `${url}?chain=solana` })).json()).toEqual([
      expect.objectContaining({ chain: 'solana', address: SOL_ADDRESS, label: null }),
    ]);
  });
});
