import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant } from '../../src/core/merchants/merchants.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createTestContext, ETH_ADDRESS, KEY, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { testAudit } from '../helpers/audit.js';

let t: TestContext;
let otherKey: string;
beforeAll(async () => {
  t = await createTestContext({ SIM_TREASURY_USDC: '1000' });
  otherKey = (await createMerchant(t.db.pool, t.ctx.config, { name: 'Other', webhookUrl: null }, t.clock.now(), testAudit())).apiKey;
});
afterAll(async () => t.close());

async function newQuote(amount: number, headers: Record<string, string> = KEY, destination: object = { solana_address: SOL_ADDRESS }) {
  const res = await t.app.inject({ method: 'POST', url: '/quotes', headers, payload: { amount_usd: amount, destination, priority: 'low_fee' } });
  expect(res.statusCode).toBe(201);
  return res.json().quote_id as string;
}

const create = (payload: object, headers: Record<string, string> = KEY) =>
  t.app.inject({ method: 'POST', url: '/payment_intents', headers, payload });

async function balances() {
  const res = await t.app.inject({ method: 'GET', url: '/admin/overview' });
  return Object.fromEntries(
    (res.json().treasury_balances as { chain: string; available_balance: number; reserved_balance: number }[]).map((b) => [b.chain, b]),
  );
}

describe('POST /payment_intents', () => {
  it('201: reserves funds, writes the reserve entry, the event and the execution job in one go', async () => {
    const quoteId = await newQuote(25.25);
    const before = await balances();
    const res = await create({ quote_id: quoteId, idempotency_key: 'order-1' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      payment_intent_id: expect.stringMatching(/^pi_/),
      status: 'route_selected',
      amount_usd: 25.25,
      selected_chain: 'solana',
      destination_address: SOL_ADDRESS,
      created_at: '2026-03-01T12:00:00.000Z',
    });
    const after = await balances();
    expect(after.solana!.available_balance).toBeCloseTo(before.solana!.available_balance - 25.25, 6);
    expect(after.solana!.reserved_balance).toBeCloseTo(before.solana!.reserved_balance + 25.25, 6);
    const events = await t.db.pool.query('SELECT event_type FROM webhook_events WHERE payment_intent_id = $1', [body.payment_intent_id]);
    expect(events.rows.map((r) => r.event_type)).toEqual(['payment.created']);
    const jobs = await t.db.pool.query("SELECT data FROM pgboss.job WHERE name = 'payment-execute' AND data->>'payment_intent_id' = $1", [
      body.payment_intent_id,
    ]);
    expect(jobs.rows).toHaveLength(1);

    const read = await t.app.inject({ method: 'GET', url: `/payment_intents/${body.payment_intent_id}`, headers: KEY });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toMatchObject({
      id: body.payment_intent_id,
      merchant_id: 'mer_test',
      amount_usd: 25.25,
      status: 'route_selected',
      selected_chain: 'solana',
      destination_address: SOL_ADDRESS,
      attempts: [],
      ledger_entries: [{ type: 'reserve', amount: 25.25, currency: 'USDC', chain: 'solana' }],
      created_at: '2026-03-01T12:00:00.000Z',
      updated_at: '2026-03-01T12:00:00.000Z',
    });
  });

  it('a repeated idempotency key replays the original intent and reserves nothing more', async () => {
    const quoteId = await newQuote(3);
    const first = await create({ quote_id: quoteId, idempotency_key: 'order-2' });
    const before = await balances();
    const again = await create({ quote_id: quoteId, idempotency_key: 'order-2' });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(await balances()).toEqual(before);
  });

  it('409 IDEMPOTENCY_KEY_REUSED for the same key with another quote', async () => {
    const q1 = await newQuote(1);
    const q2 = await newQuote(2);
    expect((await create({ quote_id: q1, idempotency_key: 'order-3' })).statusCode).toBe(201);
    const res = await create({ quote_id: q2, idempotency_key: 'order-3' });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('10 simultaneous requests with one key make one intent', async () => {
    const quoteId = await newQuote(1.5);
    const responses = await Promise.all(Array.from({ length: 10 }, () => create({ quote_id: quoteId, idempotency_key: 'burst' })));
    expect(responses.map((r) => r.statusCode)).toEqual(Array(10).fill(201));
    expect(new Set(responses.map((r) => r.json().payment_intent_id)).size).toBe(1);
    const rows = await t.db.pool.query("SELECT id FROM payment_intents WHERE idempotency_key = 'burst'");
    expect(rows.rows).toHaveLength(1);
    const reserves = await t.db.pool.query("SELECT 1 FROM ledger_transactions WHERE type = 'reserve' AND payment_intent_id = $1", [rows.rows[0].id]);
    expect(reserves.rows).toHaveLength(1);
  });

  it('400 QUOTE_EXPIRED after the quote lifetime', async () => {
    const quoteId = await newQuote(1);
    t.clock.advance(300_000);
    const res = await create({ quote_id: quoteId, idempotency_key: 'late' });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('QUOTE_EXPIRED');
  });

  it('404 QUOTE_NOT_FOUND for an unknown quote or another merchant\'s quote', async () => {
    expect((await create({ quote_id: 'quo_doesnotexist', idempotency_key: 'x1' })).json().code).toBe('QUOTE_NOT_FOUND');
    const foreign = await newQuote(1, { 'x-api-key': otherKey });
    const res = await create({ quote_id: foreign, idempotency_key: 'x2' });
    expect(res.statusCode).toBe(404);
    expect(res.json().code).toBe('QUOTE_NOT_FOUND');
  });

  it.each([
    [{ idempotency_key: 'k' }, 'MISSING_QUOTE_ID'],
    [{ quote_id: '', idempotency_key: 'k' }, 'MISSING_QUOTE_ID'],
    [{ quote_id: 'quo_x' }, 'MISSING_IDEMPOTENCY_KEY'],
    [{ quote_id: 'quo_x', idempotency_key: '' }, 'MISSING_IDEMPOTENCY_KEY'],
    [{ quote_id: 'quo_x', idempotency_key: '   ' }, 'MISSING_IDEMPOTENCY_KEY'],
  ])('400 for %j -> %s', async (payload, code) => {
    const res = await create(payload);
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe(code);
  });

  it('400 INVALID_IDEMPOTENCY_KEY for keys that are not well-formed Unicode or too long; nothing is created', async () => {
    const quoteId = await newQuote(1);
    const before = await t.db.pool.query('SELECT COUNT(*)::int AS n FROM payment_intents');
    // Two different keys that PostgreSQL would both store as "lone\uFFFD" (one payment for two orders).
    for (const key of ['lone\ud800', 'lone\udc00', 'x\udfff\ud800y', 'k'.repeat(256)]) {
      const res = await create({ quote_id: quoteId, idempotency_key: key });
      expect(res.statusCode, JSON.stringify(key)).toBe(400);
      expect(res.json()).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.any(String), code: 'INVALID_IDEMPOTENCY_KEY' });
    }
    expect((await t.db.pool.query('SELECT COUNT(*)::int AS n FROM payment_intents')).rows[0].n).toBe(before.rows[0].n);
    // Surrogate pairs (an emoji) are well-formed text; 255 characters is the cap.
    expect((await create({ quote_id: quoteId, idempotency_key: 'order-\u{1F600}' })).statusCode).toBe(201);
    expect((await create({ quote_id: quoteId, idempotency_key: 'k'.repeat(255) })).statusCode).toBe(201);
  });

  it('401 without a key', async () => {
    const res = await create({ quote_id: 'quo_x', idempotency_key: 'k' }, {});
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe('UNAUTHORIZED');
  });
});

describe('GET /payment_intents/:id and /routes/debug/:id', () => {
  it('404 for an unknown id and for another merchant\'s intent', async () => {
    const quoteId = await newQuote(1);
    const intent = (await create({ quote_id: quoteId, idempotency_key: 'mine' })).json().payment_intent_id;
    for (const url of ['/payment_intents/pi_unknown', `/payment_intents/${intent}`, `/routes/debug/${intent}`]) {
      const res = await t.app.inject({ method: 'GET', url, headers: url.includes('unknown') ? KEY : { 'x-api-key': otherKey } });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ statusCode: 404, error: 'Not Found', message: expect.any(String), code: 'PAYMENT_INTENT_NOT_FOUND' });
    }
  });

  it('route debug shows the quote, the health and balances it saw, and the scores', async () => {
    const quoteId = await newQuote(2, KEY, { solana_address: SOL_ADDRESS, ethereum_address: ETH_ADDRESS });
    const intent = (await create({ quote_id: quoteId, idempotency_key: 'debug' })).json().payment_intent_id;
    const res = await t.app.inject({ method: 'GET', url: `/routes/debug/${intent}`, headers: KEY });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.payment_intent_id).toBe(intent);
    expect(body.quote.quote_id).toBe(quoteId);
    expect(body.selected_chain).toBe('solana');
    expect(body.chain_health.map((h: { chain: string }) => h.chain).sort()).toEqual(['ethereum', 'solana']);
    expect(body.treasury_balances).toHaveLength(2);
    expect(body.scoring_details).toHaveLength(2);
    for (const d of body.scoring_details) {
      expect(Object.keys(d)).toEqual(expect.arrayContaining(['chain', 'fee_score', 'latency_score', 'reliability_score', 'final_score', 'disqualified']));
    }
  });
});

describe('concurrency and the ledger', () => {
  it('20 parallel creations against funds that fit exactly 10 give exactly 10 reservations', async () => {
    const fresh = await createTestContext({ SIM_TREASURY_USDC: '100' });
    try {
      const quotes = await Promise.all(
        Array.from({ length: 20 }, () =>
          fresh.app
            .inject({ method: 'POST', url: '/quotes', headers: KEY, payload: { amount_usd: 10, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' } })
            .then((r) => r.json().quote_id as string),
        ),
      );
      const results = await Promise.all(
        quotes.map((quoteId, i) =>
          fresh.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: quoteId, idempotency_key: `c-${i}` } }),
        ),
      );
      const codes = results.map((r) => r.statusCode);
      expect(codes.filter((c) => c === 201)).toHaveLength(10);
      const refused = results.filter((r) => r.statusCode !== 201);
      expect(refused).toHaveLength(10);
      expect(refused.map((r) => [r.statusCode, r.json().code])).toEqual(Array(10).fill([400, 'INSUFFICIENT_BALANCE']));
      const overview = await fresh.app.inject({ method: 'GET', url: '/admin/overview' });
      const solana = overview.json().treasury_balances.find((b: { chain: string }) => b.chain === 'solana');
      expect(solana.available_balance).toBe(0);
      expect(solana.reserved_balance).toBe(100);
      expect((await verifyLedger(fresh.db.pool)).ok).toBe(true);
    } finally {
      await fresh.close();
    }
  });
});
