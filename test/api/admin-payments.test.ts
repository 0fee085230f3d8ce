// The operator endpoints behind the console: payment pages (keyset, filters, search), one payment in full, and the
// operator's actions through the same use cases as the CLI, answered in the spec's error format.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant } from '../../src/core/merchants/merchants.js';
import { createOperator } from '../../src/core/operators/operators.js';
import { PAYMENT_STATUSES, TERMINAL_STATUSES } from '../../src/domain/payment-intent.js';
import { WEBHOOK_EVENT_STATUSES } from '../../src/domain/webhook-delivery.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createPayment, createTestContext, ETH_ADDRESS, KEY, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { confirm, drainExecution } from '../helpers/workers.js';
import { testAudit } from '../helpers/audit.js';

let t: TestContext;
/** Ids newest first, as the list should show them. */
const created: string[] = [];
let stuckSolana: string;
let stuckEthereum: string;
let otherMerchantPayment: string;

const get = async (url: string) => t.app.inject({ method: 'GET', url });
const post = async (url: string, payload?: object) => t.app.inject({ method: 'POST', url, ...(payload === undefined ? {} : { payload }) });

beforeAll(async () => {
  t = await createTestContext({ SIM_TREASURY_USDC: '1000', SIM_STUCK_RATE: '1', STUCK_AFTER_SECONDS: '60' });
  // Two that reach the chain and get stuck (manual review), then four left before execution; one second apart,
  // except the last two, created in the same millisecond so that the id breaks the tie.
  stuckSolana = await createPayment(t.app, 11, { solana_address: SOL_ADDRESS });
  t.clock.advance(1000);
  stuckEthereum = await createPayment(t.app, 12, { ethereum_address: ETH_ADDRESS });
  await drainExecution(t);
  t.clock.advance(61_000);
  await confirm(t);
  created.push(stuckEthereum, stuckSolana);
  for (const amount of [13, 14]) {
    t.clock.advance(1000);
    created.unshift(await createPayment(t.app, amount, { solana_address: SOL_ADDRESS }));
  }
  t.clock.advance(1000);
  const { apiKey } = await createMerchant(t.db.pool, t.ctx.config, { name: 'Other', webhookUrl: null }, t.clock.now(), testAudit());
  const quote = await t.app.inject({
    method: 'POST',
    url: '/quotes',
    headers: { 'x-api-key': apiKey },
    payload: { amount_usd: 15, destination: { ethereum_address: ETH_ADDRESS }, priority: 'fast' },
  });
  const intent = await t.app.inject({
    method: 'POST',
    url: '/payment_intents',
    headers: { 'x-api-key': apiKey },
    payload: { quote_id: quote.json().quote_id, idempotency_key: 'other-1' },
  });
  otherMerchantPayment = intent.json().payment_intent_id;
  const sameInstant = await createPayment(t.app, 16, { solana_address: SOL_ADDRESS });
  const tied = [otherMerchantPayment, sameInstant].sort().reverse();
  created.unshift(...tied);
});
afterAll(async () => t.close());

describe('GET /admin/payments', () => {
  it('lists newest first and pages with a cursor without skipping or repeating a row', async () => {
    const all = (await get('/admin/payments')).json();
    expect(all.data.map((p: { id: string }) => p.id)).toEqual(created);
    expect(all.next_cursor).toBeNull();

    const seen: string[] = [];
    let url = '/admin/payments?limit=2';
    for (let pages = 0; pages < 10; pages++) {
      const page = (await get(url)).json();
      seen.push(...page.data.map((p: { id: string }) => p.id));
      if (page.next_cursor === null) break;
      url = `/admin/payments?limit=2&cursor=${page.next_cursor}`;
    }
    expect(seen).toEqual(created);
  });

  it('filters by status, chain, merchant and creation time', async () => {
    const ids = async (query: string) => (await get(`/admin/payments?${query}`)).json().data.map((p: { id: string }) => p.id);
    expect(await ids('status=manual_review')).toEqual([stuckEthereum, stuckSolana]);
    expect(await ids('chain=ethereum')).toEqual(created.filter((id) => id === stuckEthereum || id === otherMerchantPayment));
    expect(await ids('merchant_id=mer_test')).toEqual(created.filter((id) => id !== otherMerchantPayment));
    expect(await ids('status=manual_review&chain=solana')).toEqual([stuckSolana]);
    const second = (await get(`/admin/payments/${stuckEthereum}`)).json().created_at;
    expect(await ids(`created_before=${second}`)).toEqual([stuckSolana]);
    expect(await ids(`created_from=${second}&status=manual_review`)).toEqual([stuckEthereum]);
  });

  it('finds a payment by its id, a transaction id or its destination address', async () => {
    const ids = async (q: string) => (await get(`/admin/payments?q=${encodeURIComponent(q)}`)).json().data.map((p: { id: string }) => p.id);
    expect(await ids(stuckSolana)).toEqual([stuckSolana]);
    const row = (await get('/admin/payments?status=manual_review&chain=ethereum')).json().data[0];
    expect(row.tx_id).toMatch(/\w/);
    expect(row.actions).toEqual({ resolve: ['settled', 'failed'], cancel: false });
    expect(await ids(row.tx_id)).toEqual([stuckEthereum]);
    expect(await ids(ETH_ADDRESS.toLowerCase())).toEqual(created.filter((id) => id === stuckEthereum || id === otherMerchantPayment));
    expect(await ids(SOL_ADDRESS.toLowerCase())).toEqual([]);
    expect(await ids('pi_nothing')).toEqual([]);
  });

  it('answers malformed filters and cursors with 400 in the error format', async () => {
    for (const [query, code] of [
      ['status=lost', 'INVALID_FILTER'],
      ['chain=bitcoin', 'INVALID_FILTER'],
      ['limit=0', 'INVALID_FILTER'],
      ['limit=500', 'INVALID_FILTER'],
      ['created_from=yesterday', 'INVALID_FILTER'],
      ['cursor=bm9wZQ', 'INVALID_CURSOR'],
      [`cursor=${Buffer.from(JSON.stringify(['2026-01-01', "x' OR 1=1"])).toString('base64url')}`, 'INVALID_CURSOR'],
    ]) {
      const res = await get(`/admin/payments?${query}`);
      expect(res.statusCode, query).toBe(400);
      expect(res.json(), query).toMatchObject({ statusCode: 400, error: 'Bad Request', code });
    }
  });

  it('counts payments by status', async () => {
    const counts = (await get('/admin/payment-counts')).json();
    expect(counts).toEqual({ total: created.length, by_status: { manual_review: 2, route_selected: created.length - 2 } });
  });
});

describe('GET /admin/statuses', () => {
  it("answers the domain's statuses in its order, which the console offers and counts with", async () => {
    const res = await get('/admin/statuses');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      payment_statuses: [...PAYMENT_STATUSES],
      final_payment_statuses: [...TERMINAL_STATUSES],
      webhook_event_statuses: [...WEBHOOK_EVENT_STATUSES],
    });
  });
});

describe('GET /admin/payments/:id', () => {
  it('shows the status timeline, attempts, ledger postings, webhook events and the actions that apply', async () => {
    const res = await get(`/admin/payments/${stuckSolana}`);
    expect(res.statusCode).toBe(200);
    const p = res.json();
    expect(p).toMatchObject({ id: stuckSolana, status: 'manual_review', amount_usd: 11, selected_chain: 'solana' });
    expect(p.timeline.map((s: { to: string }) => s.to)).toEqual(['created', 'quoted', 'route_selected', 'broadcasting', 'broadcasted', 'manual_review']);
    expect(p.timeline.at(-1)).toMatchObject({ from: 'broadcasted', reason: 'stuck' });
    expect(p.attempts).toHaveLength(1);
    expect(p.attempts[0]).toMatchObject({ status: 'broadcasted', fee_currency: 'SOL', tx_id: expect.any(String) });
    expect(p.ledger.map((l: { type: string }) => l.type)).toEqual(['reserve', 'debit']);
    expect(p.ledger[0].postings).toEqual([
      { account: 'treasury_available', currency: 'USDC', amount: '-11' },
      { account: 'treasury_reserved', currency: 'USDC', amount: '11' },
    ]);
    expect(p.webhook_events.map((e: { event_type: string }) => e.event_type)).toEqual([
      'payment.created',
      'payment.broadcasting',
      'payment.broadcasted',
      'payment.manual_review',
    ]);
    expect(p.webhook_events[0]).toMatchObject({ status: 'stored', deliveries: [], payload: expect.objectContaining({ amount_usd: 11 }) });
    expect(p.actions).toEqual({ resolve: ['settled', 'failed'], cancel: false });
    expect((await get(`/admin/payments/${created[0]}`)).json().actions).toEqual({ resolve: [], cancel: true });
  });

  it('answers 404 for an unknown or malformed id', async () => {
    for (const id of ['pi_unknown', 'no%20such']) {
      const res = await get(`/admin/payments/${id}`);
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('PAYMENT_INTENT_NOT_FOUND');
    }
  });
});

describe('POST /admin/payments/:id/resolve and /cancel', () => {
  it('refuses a resolution the chain contradicts and changes nothing; force overrides', async () => {
    const refused = await post(`/admin/payments/${stuckEthereum}/resolve`, { resolution: 'failed' });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ code: 'INVALID_STATE', message: expect.stringContaining('force') });
    expect((await get(`/admin/payments/${stuckEthereum}`)).json().status).toBe('manual_review');
    // Forced over a transfer that may still land: a request another operator approves (decision 181).
    const forced = await post(`/admin/payments/${stuckEthereum}/resolve`, { resolution: 'failed', force: true });
    expect(forced.statusCode).toBe(200);
    expect(forced.json()).toMatchObject({ payment_intent_id: stuckEthereum, status: 'manual_review', approval: 'pending' });
    const self = await post(`/admin/payment_intents/${stuckEthereum}/approve`, {});
    expect([self.statusCode, self.json().code]).toEqual([403, 'SELF_APPROVAL']);
    const { token } = await createOperator(t.db.pool, t.ctx.config, { name: 'second', role: 'approver' }, t.clock.now(), testAudit());
    const approved = await t.app.inject({ method: 'POST', url: `/admin/payment_intents/${stuckEthereum}/approve`, headers: { authorization: `Bearer ${token}` }, payload: {} });
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toMatchObject({ payment_intent_id: stuckEthereum, status: 'failed', approval: 'approved', requested_action: 'force_fail' });
  });

  it('settles a payment in manual review and refuses a second resolution', async () => {
    const res = await post(`/admin/payments/${stuckSolana}/resolve`, { resolution: 'settled' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ payment_intent_id: stuckSolana, status: 'settled', tx_id: expect.any(String) });
    const after = (await get(`/admin/payments/${stuckSolana}`)).json();
    expect(after.status).toBe('settled');
    expect(after.actions).toEqual({ resolve: [], cancel: false });
    expect(after.webhook_events.at(-1).event_type).toBe('payment.settled');
    const again = await post(`/admin/payments/${stuckSolana}/resolve`, { resolution: 'settled' });
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('INVALID_STATE');
  });

  it('answers bad bodies and unknown ids in the error format', async () => {
    for (const body of [undefined, {}, { resolution: 'maybe' }, { resolution: 'settled', extra: 1 }]) {
      const res = await post(`/admin/payments/${created[0]}/resolve`, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().code, JSON.stringify(body)).toBe('INVALID_RESOLUTION');
    }
    const force = await post(`/admin/payments/${created[0]}/resolve`, { resolution: 'failed', force: 'yes' });
    expect(force.json().code).toBe('INVALID_REQUEST');
    const unknown = await post('/admin/payments/pi_unknown/resolve', { resolution: 'failed' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().code).toBe('PAYMENT_INTENT_NOT_FOUND');
    const wrongState = await post(`/admin/payments/${created[0]}/resolve`, { resolution: 'failed' });
    expect(wrongState.statusCode).toBe(409);
  });

  it('cancels a payment not yet on chain once, releasing its funds', async () => {
    const id = created[0]!;
    const res = await post(`/admin/payments/${id}/cancel`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ payment_intent_id: id, status: 'cancelled', tx_id: null });
    const p = (await get(`/admin/payments/${id}`)).json();
    expect(p.ledger.map((l: { type: string }) => l.type)).toEqual(['reserve', 'release']);
    const again = await post(`/admin/payments/${id}/cancel`);
    expect(again.statusCode).toBe(409);
    expect((await post('/admin/payments/pi_unknown/cancel')).statusCode).toBe(404);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });
});

describe('treasury, chain health history and webhook events', () => {
  it('GET /admin/treasury books available, reserved and in-flight USDC and gas per chain', async () => {
    const treasury = (await get('/admin/treasury')).json();
    expect(treasury.map((c: { chain: string }) => c.chain)).toEqual(['ethereum', 'solana']);
    const solana = treasury.find((c: { chain: string }) => c.chain === 'solana');
    // 1000 opening, of which 11 settled by the operator; the rest is available or reserved (a cancel released its own).
    const reserved = Number(solana.reserved_usdc);
    expect(Number(solana.available_usdc) + reserved + Number(solana.in_flight_usdc)).toBe(1000 - 11);
    expect(solana).toMatchObject({ adapter: 'simulated', native_currency: 'SOL', in_flight_usdc: '0', unconfirmed_transfers: 0 });
    expect(Number(solana.native_balance)).toBeGreaterThan(0);
  });

  it('GET /admin/chain-health returns snapshots over time, oldest first, bounded per chain', async () => {
    for (const fee of [1, 2, 3]) {
      t.clock.advance(15_000);
      await post('/admin/chain-health', { chain: 'ethereum', health_status: 'healthy', estimated_fee_usd: fee });
    }
    const history = (await get('/admin/chain-health?chain=ethereum&points=2')).json();
    expect(history.map((s: { estimated_fee_usd: number }) => s.estimated_fee_usd)).toEqual([2, 3]);
    expect(history[0]).toMatchObject({ chain: 'ethereum', source: 'admin', recorded_at: expect.any(String) });
    expect((await get('/admin/chain-health?chain=dogecoin')).json().code).toBe('INVALID_FILTER');
  });

  it('GET /admin/webhook-events pages through every status; GET /admin/webhook-events/:id shows one event', async () => {
    const first = (await get('/admin/webhook-events?status=all&limit=3')).json();
    expect(first).toHaveLength(3);
    const next = (await get(`/admin/webhook-events?status=all&limit=3&before=${first[2].id}`)).json();
    expect(next).toHaveLength(3);
    expect(next.map((e: { id: string }) => e.id)).not.toContain(first[2].id);
    const one = (await get(`/admin/webhook-events/${first[0].id}`)).json();
    expect(one).toMatchObject({ id: first[0].id, payload: expect.any(Object), deliveries: [] });
    const missing = await get('/admin/webhook-events/evt_missing');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('NOT_FOUND');
  });
});

describe('the merchant API is unchanged', () => {
  it('still reads a payment the merchant way', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/payment_intents/${stuckSolana}`, headers: KEY });
    expect(res.statusCode).toBe(200);
  });
});
