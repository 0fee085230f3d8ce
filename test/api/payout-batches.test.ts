// POST /payout_batches and GET /payout_batches/:id: each item answered on its own (created, replayed, refused in the
// error format), the batch replayed on its key and refused for a different body, the item and body bounds, a daily
// limit that neither one batch nor two concurrent ones can beat, progress and totals as the payments settle, and
// payout_batch.completed written once, after the last payment is final, with the ledger still balanced.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAYOUT_BATCH_BODY_MAX_BYTES, PAYOUT_BATCH_ITEMS_MAX } from '../../src/bounds.js';
import { createMerchant } from '../../src/core/merchants/merchants.js';
import { cancelPayment } from '../../src/core/operators/transitions/cancel.js';
import { updateMerchantPolicy, type PolicyChange } from '../../src/core/merchants/policies.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { testAudit } from '../helpers/audit.js';
import { createTestContext, ETH_ADDRESS, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { deliverDueEvents } from '../../src/core/webhooks/delivery.js';
import { startReceiver } from '../helpers/receiver.js';
import { waitFor } from '../helpers/process.js';
import { confirm, drainExecution } from '../helpers/workers.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext({ SIM_TREASURY_USDC: '1000000', SIM_CONFIRM_SECONDS: '10' });
});
afterAll(async () => t.close());

const usd = (n: number) => BigInt(Math.round(n * 1_000_000));
let merchants = 0;

/** A fresh merchant (its own keys, volume and limits) with the policy overrides given. */
async function merchant(change: PolicyChange = {}): Promise<{ id: string; headers: Record<string, string> }> {
  const { merchant: m, apiKey } = await createMerchant(t.db.pool, t.ctx.config, { name: `b${++merchants}`, webhookUrl: null }, t.clock.now(), testAudit());
  if (Object.keys(change).length) await updateMerchantPolicy(t.db.pool, t.ctx.config, m.id, change, t.clock.now(), testAudit());
  return { id: m.id, headers: { 'x-api-key': apiKey } };
}

const item = (key: string, amount: number, destination: object = { solana_address: SOL_ADDRESS }) => ({
  idempotency_key: key,
  amount_usd: amount,
  destination,
  priority: 'fast',
});

const postTo = (c: TestContext, headers: Record<string, string>, payload: unknown) =>
  c.app.inject({ method: 'POST', url: '/payout_batches', headers, payload: payload as object });
const readFrom = (c: TestContext, headers: Record<string, string>, id: string) => c.app.inject({ method: 'GET', url: `/payout_batches/${id}`, headers });
const post = (headers: Record<string, string>, payload: unknown) => postTo(t, headers, payload);
const read = (headers: Record<string, string>, id: string) => readFrom(t, headers, id);

/** Everything a batch may write, for "a refusal changes nothing". */
async function books(c: TestContext = t) {
  const one = async (sql: string) => (await c.db.pool.query(sql)).rows[0].n as number;
  return {
    batches: await one('SELECT COUNT(*)::int AS n FROM payout_batches'),
    quotes: await one('SELECT COUNT(*)::int AS n FROM quotes'),
    intents: await one('SELECT COUNT(*)::int AS n FROM payment_intents'),
    transactions: await one('SELECT COUNT(*)::int AS n FROM ledger_transactions'),
    events: await one('SELECT COUNT(*)::int AS n FROM webhook_events'),
    jobs: await one("SELECT COUNT(*)::int AS n FROM pgboss.job WHERE name = 'payment-execute'"),
  };
}

const completedEvents = async (merchantId: string) =>
  (await t.db.pool.query("SELECT payload FROM webhook_events WHERE merchant_id = $1 AND event_type = 'payout_batch.completed'", [merchantId])).rows.map(
    (r) => r.payload,
  );

describe('POST /payout_batches', () => {
  it('answers each item: created, replayed (a key already used with the same terms), refused with its error', async () => {
    const m = await merchant();
    // A payment made the usual way, whose key an item then repeats with the same terms.
    const quote = await t.app.inject({ method: 'POST', url: '/quotes', headers: m.headers, payload: { amount_usd: 7, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' } });
    const earlier = await t.app.inject({ method: 'POST', url: '/payment_intents', headers: m.headers, payload: { quote_id: quote.json().quote_id, idempotency_key: 'pay-old' } });
    expect(earlier.statusCode).toBe(201);

    const res = await post(m.headers, {
      idempotency_key: 'payroll-1',
      items: [
        item('pay-1', 10),
        item('pay-old', 7),
        item('pay-bad-address', 5, { solana_address: 'not-an-address' }),
        item('pay-old', 8), // the key of a payment with other terms
        item('pay-2', 12.5, { ethereum_address: ETH_ADDRESS }),
        item('pay-1', 10), // the same key and terms as item 0: that payment
      ],
    });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body.id).toMatch(/^pob_/);
    expect(body.counts).toEqual({ created: 2, replayed: 2, refused: 2 });
    expect(body.items.map((i: { result: string }) => i.result)).toEqual(['created', 'replayed', 'refused', 'refused', 'created', 'replayed']);
    expect(body.items[0]).toMatchObject({
      index: 0,
      idempotency_key: 'pay-1',
      payment_intent: { payment_intent_id: expect.stringMatching(/^pi_/), status: 'route_selected', amount_usd: 10, selected_chain: 'solana' },
    });
    expect(body.items[1].payment_intent.payment_intent_id).toBe(earlier.json().payment_intent_id);
    expect(body.items[2].error).toEqual({ statusCode: 400, error: 'Bad Request', code: 'INVALID_DESTINATION', message: expect.stringContaining('solana') });
    expect(body.items[3].error).toMatchObject({ statusCode: 409, error: 'Conflict', code: 'IDEMPOTENCY_KEY_REUSED' });
    expect(body.items[4].payment_intent).toMatchObject({ selected_chain: 'ethereum', amount_usd: 12.5 });
    expect(body.items[5].payment_intent.payment_intent_id).toBe(body.items[0].payment_intent.payment_intent_id);

    // Each created payment is a payment like any other: its payment.created event and its execution job.
    const created = [body.items[0].payment_intent.payment_intent_id, body.items[4].payment_intent.payment_intent_id];
    const events = await t.db.pool.query('SELECT event_type FROM webhook_events WHERE payment_intent_id = ANY($1)', [created]);
    expect(events.rows.map((r) => r.event_type)).toEqual(['payment.created', 'payment.created']);
    const jobs = await t.db.pool.query("SELECT 1 FROM pgboss.job WHERE name = 'payment-execute' AND data->>'payment_intent_id' = ANY($1)", [created]);
    expect(jobs.rows).toHaveLength(2);
  });

  it('replays the stored answer for the same key and items; refuses the key with other items (409), changing nothing', async () => {
    const m = await merchant();
    const payload = { idempotency_key: 'payroll-r', items: [item('r-1', 3), item('r-2', 4)] };
    const first = await post(m.headers, payload);
    expect(first.statusCode).toBe(201);
    const before = await books();
    // The same body spelled differently (key order) is the same batch.
    const again = await post(m.headers, { items: payload.items.map((i) => ({ priority: i.priority, destination: i.destination, amount_usd: i.amount_usd, idempotency_key: i.idempotency_key })), idempotency_key: 'payroll-r' });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(await books()).toEqual(before);

    const other = await post(m.headers, { ...payload, items: [item('r-1', 3), item('r-2', 5)] });
    expect(other.statusCode).toBe(409);
    expect(other.json()).toEqual({ statusCode: 409, error: 'Conflict', code: 'IDEMPOTENCY_KEY_REUSED', message: expect.stringContaining(first.json().id) });
    expect(await books()).toEqual(before);

    // Another merchant's batch key is its own.
    const n = await merchant();
    expect((await post(n.headers, payload)).json().counts).toEqual({ created: 2, replayed: 0, refused: 0 });
  });

  it('refuses a malformed item with 400 naming it, and the whole batch with it, changing nothing', async () => {
    const m = await merchant();
    const before = await books();
    const cases: [unknown, string, string][] = [
      [{ idempotency_key: 'm', items: [item('a', 1), { ...item('b', 1), amount_usd: -1 }] }, 'INVALID_REQUEST', 'items.1.amount_usd'],
      [{ idempotency_key: 'm', items: [item('a', 1), item('b', 1.0000001)] }, 'INVALID_AMOUNT', 'items[1].amount_usd'],
      [{ idempotency_key: 'm', items: [item('a', 1), item('  ', 1)] }, 'MISSING_IDEMPOTENCY_KEY', 'items[1].idempotency_key'],
      [{ idempotency_key: 'm', items: [item('a', 1, { solana_address: '  ' })] }, 'MISSING_DESTINATION', 'items[0]'],
      [{ idempotency_key: 'm', items: [] }, 'INVALID_REQUEST', 'items'],
      [{ items: [item('a', 1)] }, 'MISSING_IDEMPOTENCY_KEY', 'idempotency_key'],
    ];
    for (const [payload, code, where] of cases) {
      const res = await post(m.headers, payload);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ code, message: expect.stringContaining(where) });
    }
    expect(await books()).toEqual(before);
  });

  it('answers 401 without an API key and 404 for an unknown batch or another merchant’s', async () => {
    const m = await merchant();
    const other = await merchant();
    const created = await post(m.headers, { idempotency_key: 'own', items: [item('o-1', 1)] });
    expect((await post({}, { idempotency_key: 'k', items: [item('a', 1)] })).statusCode).toBe(401);
    expect((await read({}, created.json().id)).statusCode).toBe(401);
    for (const res of [await read(other.headers, created.json().id), await read(m.headers, 'pob_unknown')]) {
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ code: 'PAYOUT_BATCH_NOT_FOUND' });
    }
  });
});

describe('bounds', () => {
  it(`accepts ${PAYOUT_BATCH_ITEMS_MAX} items; refuses ${PAYOUT_BATCH_ITEMS_MAX + 1} (400 TOO_MANY_ITEMS) and a body over its limit (413), changing nothing`, async () => {
    // Its own database: its thousand payments stay out of the other tests' execution queue.
    const own = await createTestContext({ SIM_TREASURY_USDC: '1000000' });
    const m = { headers: { 'x-api-key': 'test-key' } };
    try {
    const items = Array.from({ length: PAYOUT_BATCH_ITEMS_MAX + 1 }, (_, i) => item(`big-${i}`, 1 + (i % 50)));
    const before = await books(own);
    const tooMany = await postTo(own, m.headers, { idempotency_key: 'big-1', items });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json()).toEqual({ statusCode: 400, error: 'Bad Request', code: 'TOO_MANY_ITEMS', message: `a payout batch takes at most ${PAYOUT_BATCH_ITEMS_MAX} items` });
    const tooBig = await own.app.inject({
      method: 'POST',
      url: '/payout_batches',
      headers: { ...m.headers, 'content-type': 'application/json' },
      payload: JSON.stringify({ idempotency_key: 'big-2', items: [item('x'.repeat(PAYOUT_BATCH_BODY_MAX_BYTES), 1)] }),
    });
    expect(tooBig.statusCode).toBe(413);
    expect(tooBig.json()).toMatchObject({ statusCode: 413, code: 'PAYLOAD_TOO_LARGE' });
    expect(await books(own)).toEqual(before);

    const res = await postTo(own, m.headers, { idempotency_key: 'big-3', items: items.slice(0, PAYOUT_BATCH_ITEMS_MAX) });
    expect(res.statusCode, res.body.slice(0, 500)).toBe(201);
    expect(res.json().counts).toEqual({ created: PAYOUT_BATCH_ITEMS_MAX, replayed: 0, refused: 0 });
    const got = await readFrom(own, m.headers, res.json().id);
    expect(got.json()).toMatchObject({ items: { total: PAYOUT_BATCH_ITEMS_MAX, payments: PAYOUT_BATCH_ITEMS_MAX, refused: 0 }, payments_by_status: { route_selected: PAYOUT_BATCH_ITEMS_MAX } });
    expect((await verifyLedger(own.db.pool)).problems).toEqual([]);
  } finally {
      await own.close();
    }
  });
});

describe('policies over a batch', () => {
  it('a daily limit counts the batch’s own items: the over-limit ones are refused, nothing overspends', async () => {
    const m = await merchant({ dailyLimitMicros: usd(100) });
    const res = await post(m.headers, { idempotency_key: 'limit-1', items: [30, 30, 30, 30, 10].map((a, i) => item(`l-${i}`, a)) });
    expect(res.statusCode).toBe(201);
    expect(res.json().items.map((i: { result: string; error?: { code: string } }) => i.error?.code ?? i.result)).toEqual([
      'created',
      'created',
      'created',
      'POLICY_DAILY_LIMIT_EXCEEDED',
      'created',
    ]);
    const spent = await t.db.pool.query('SELECT SUM(amount_micros)::text AS s FROM payment_intents WHERE merchant_id = $1', [m.id]);
    expect(spent.rows[0].s).toBe(usd(100).toString());
  });

  it('the per-payment maximum refuses its item only', async () => {
    const m = await merchant({ maxPaymentMicros: usd(50) });
    const res = await post(m.headers, { idempotency_key: 'max-1', items: [item('x-1', 50), item('x-2', 50.000001), item('x-3', 1)] });
    expect(res.json().items.map((i: { result: string; error?: { code: string } }) => i.error?.code ?? i.result)).toEqual([
      'created',
      'POLICY_MAX_PAYMENT_EXCEEDED',
      'created',
    ]);
    expect(res.json().items[1].error).toMatchObject({ statusCode: 422, error: 'Unprocessable Entity' });
  });

  it('two concurrent batches cannot beat it either', async () => {
    const m = await merchant({ dailyLimitMicros: usd(100) });
    const [a, b] = await Promise.all([
      post(m.headers, { idempotency_key: 'c-a', items: [40, 40, 40].map((x, i) => item(`ca-${i}`, x)) }),
      post(m.headers, { idempotency_key: 'c-b', items: [40, 40, 40].map((x, i) => item(`cb-${i}`, x)) }),
    ]);
    expect([a!.statusCode, b!.statusCode]).toEqual([201, 201]);
    const created = a!.json().counts.created + b!.json().counts.created;
    expect(created).toBe(2);
    const spent = await t.db.pool.query('SELECT SUM(amount_micros)::text AS s FROM payment_intents WHERE merchant_id = $1', [m.id]);
    expect(spent.rows[0].s).toBe(usd(80).toString());
  });
});

describe('the locks a batch holds', () => {
  it('one advisory lock for the whole batch; a payment created meanwhile under an item\'s key still waits for it and is never made twice', async () => {
    const m = await merchant();
    const blocker = await t.db.pool.connect();
    try {
      // The chain's available funds locked by someone else: the batch stops there, holding the locks it took before.
      await blocker.query('BEGIN');
      await blocker.query("SELECT 1 FROM ledger_accounts WHERE chain = 'solana' AND currency = 'USDC' AND kind = 'treasury_available' AND stripe = 0 FOR UPDATE");
      const posted = post(m.headers, { idempotency_key: 'one-lock', items: Array.from({ length: 200 }, (_, i) => item(`ol-${i}`, 1)) });
      const waiting = await waitFor(
        'the batch waiting for the funds',
        async () =>
          (
            await t.db.pool.query<{ pid: number }>(
              "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%treasury_available%'",
            )
          ).rows[0]?.pid,
        10_000,
      );
      const { rows: locks } = await t.db.pool.query<{ n: number }>("SELECT COUNT(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = $1", [
        waiting,
      ]);
      // Meanwhile the same merchant creates a payment the usual way under the key of the batch's first item.
      const quote = await t.app.inject({ method: 'POST', url: '/quotes', headers: m.headers, payload: { amount_usd: 1, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' } });
      const single = t.app.inject({ method: 'POST', url: '/payment_intents', headers: m.headers, payload: { quote_id: quote.json().quote_id, idempotency_key: 'ol-0' } });
      await waitFor('the single creation waiting for the batch', async () => {
        const { rows } = await t.db.pool.query<{ n: number }>(
          "SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%advisory%'",
        );
        return rows[0]!.n > 0;
      }, 10_000);
      await blocker.query('ROLLBACK');
      const [batch, alone] = await Promise.all([posted, single]);
      expect(locks[0]!.n).toBe(1);
      expect(batch.json().counts.created).toBe(200);
      // The batch came first: the key names its payment, made with another quote.
      expect(alone.statusCode).toBe(409);
      expect(alone.json().code).toBe('IDEMPOTENCY_KEY_REUSED');
      const made = await t.db.pool.query("SELECT COUNT(*)::int AS n FROM payment_intents WHERE merchant_id = $1 AND idempotency_key = 'ol-0'", [m.id]);
      expect(made.rows[0].n).toBe(1);
    } finally {
      await blocker.query('ROLLBACK').catch(() => undefined);
      blocker.release();
    }
  });
});

describe('GET /payout_batches/:id and payout_batch.completed', () => {
  it('shows progress and totals as the payments settle; completes once, after the last payment is final', async () => {
    const m = await merchant();
    const res = await post(m.headers, {
      idempotency_key: 'progress',
      items: [item('p-1', 10), item('p-2', 20, { ethereum_address: ETH_ADDRESS }), item('p-3', 5), item('p-4', 1, { solana_address: 'nope' })],
    });
    const id = res.json().id as string;
    const intents = res.json().items.flatMap((i: { payment_intent?: { payment_intent_id: string } }) => (i.payment_intent ? [i.payment_intent.payment_intent_id] : []));
    expect((await read(m.headers, id)).json()).toEqual({
      id,
      idempotency_key: 'progress',
      status: 'processing',
      items: { total: 4, payments: 3, refused: 1 },
      payments_by_status: { route_selected: 3 },
      totals: { requested_usd: 35, settled_usd: 0, failed_usd: 0 },
      created_at: '2026-03-01T12:00:00.000Z',
      completed_at: null,
    });

    // One payment is cancelled by an operator before it is sent: final, its amount counted as failed.
    await cancelPayment(t.ctx, intents[2], testAudit());
    expect((await read(m.headers, id)).json()).toMatchObject({ payments_by_status: { route_selected: 2, cancelled: 1 }, totals: { failed_usd: 5 } });

    await drainExecution(t);
    expect((await read(m.headers, id)).json()).toMatchObject({ status: 'processing', payments_by_status: { broadcasted: 2, cancelled: 1 } });
    expect(await completedEvents(m.id)).toEqual([]);

    t.clock.advance(11_000); // past SIM_CONFIRM_SECONDS
    await confirm(t);
    await confirm(t); // a second round finds nothing new: still one event
    const done = (await read(m.headers, id)).json();
    expect(done).toMatchObject({
      status: 'completed',
      payments_by_status: { settled: 2, cancelled: 1 },
      totals: { requested_usd: 35, settled_usd: 30, failed_usd: 5 },
      completed_at: expect.any(String),
    });
    const events = await completedEvents(m.id);
    expect(events).toEqual([done]);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });

  it('a batch whose items were all refused is complete at once', async () => {
    const m = await merchant();
    const res = await post(m.headers, { idempotency_key: 'none', items: [item('n-1', 1, { solana_address: 'nope' })] });
    expect(res.json().counts).toEqual({ created: 0, replayed: 0, refused: 1 });
    expect((await read(m.headers, res.json().id)).json()).toMatchObject({ status: 'completed', items: { total: 1, payments: 0, refused: 1 } });
    expect(await completedEvents(m.id)).toHaveLength(1);
  });

  it('payments made final at the same moment in concurrent transactions complete their batch exactly once', async () => {
    const m = await merchant();
    for (let round = 0; round < 5; round++) {
      const res = await post(m.headers, { idempotency_key: `race-${round}`, items: [item(`race-${round}-a`, 1), item(`race-${round}-b`, 2)] });
      const [a, b] = res.json().items.map((i: { payment_intent: { payment_intent_id: string } }) => i.payment_intent.payment_intent_id);
      await Promise.all([cancelPayment(t.ctx, a, testAudit()), cancelPayment(t.ctx, b, testAudit())]);
      expect((await read(m.headers, res.json().id)).json()).toMatchObject({ status: 'completed', totals: { failed_usd: 3 } });
    }
    const events = await completedEvents(m.id);
    expect(events).toHaveLength(5);
    expect(new Set(events.map((e) => e.id)).size).toBe(5);
  });

  it('webhooks: each payment its own events, then payout_batch.completed once, signed and delivered like any event', async () => {
    const receiver = await startReceiver(t.ctx.config.webhookSigningSecret);
    try {
      await t.db.pool.query("UPDATE merchants SET webhook_url = $1 WHERE id = 'mer_test'", [receiver.url]);
      const headers = { 'x-api-key': 'test-key' };
      const res = await post(headers, { idempotency_key: 'hooks', items: [item('h-1', 2), item('h-2', 3, { ethereum_address: ETH_ADDRESS })] });
      const ids = res.json().items.map((i: { payment_intent: { payment_intent_id: string } }) => i.payment_intent.payment_intent_id);
      await drainExecution(t);
      t.clock.advance(11_000);
      await confirm(t);
      const deps = { ...t.ctx, config: { ...t.ctx.config, webhookSsrfGuard: false } };
      const deliverAll = async () => {
        for (let pass = 0; pass < 10 && (await deliverDueEvents(deps)).delivered > 0; pass++);
      };
      await deliverAll();
      await confirm(t);
      await deliverAll();
      expect(receiver.badSignatures).toBe(0);
      for (const id of ids) {
        const types = receiver.events.filter((e) => e.payment_intent_id === id).map((e) => e.event_type);
        expect(types).toContain('payment.created');
        expect(types).toContain('payment.settled');
      }
      const completed = receiver.events.filter((e) => e.event_type === 'payout_batch.completed');
      expect(completed).toHaveLength(1);
      expect(completed[0]).toMatchObject({ payment_intent_id: null, merchant_id: 'mer_test' });
      expect(completed[0]!.payload).toEqual((await read(headers, res.json().id)).json());
      expect(completed[0]!.payload).toMatchObject({ status: 'completed', totals: { requested_usd: 5, settled_usd: 5, failed_usd: 0 } });
    } finally {
      await t.db.pool.query("UPDATE merchants SET webhook_url = NULL WHERE id = 'mer_test'");
      await receiver.close();
    }
  });
});

// Issue 35: a payout batch cannot split its way under the merchant's approval threshold. One whose total is above it
// is held whole (reserved, nothing signed, no execution job), listed once in GET /admin/approvals with its
// payout_batch_id, and decided once for every payment in it.
describe('a payout batch above the approval threshold', () => {
  const jobsOf = async (ids: string[]) =>
    (await t.db.pool.query("SELECT COUNT(*)::int AS n FROM pgboss.job WHERE name = 'payment-execute' AND data->>'payment_intent_id' = ANY($1)", [ids])).rows[0].n as number;
  const idsOf = (body: { items: { payment_intent?: { payment_intent_id: string } }[] }) => body.items.flatMap((i) => (i.payment_intent ? [i.payment_intent.payment_intent_id] : []));
  const approvals = async () => (await t.app.inject({ method: 'GET', url: '/admin/approvals?limit=500' })).json() as Record<string, unknown>[];
  const decideBatch = (id: string, action: 'approve' | 'reject', payload: object = {}) => t.app.inject({ method: 'POST', url: `/admin/payout_batches/${id}/${action}`, payload });

  it('is held whole: 5 items of 99.99 under a threshold of 100 queue nothing, and show as one approval', async () => {
    const m = await merchant({ approvalAboveMicros: usd(100) });
    const res = await post(m.headers, { idempotency_key: 'split-1', items: [1, 2, 3, 4, 5].map((i) => item(`s-${i}`, 99.99)) });
    expect(res.statusCode, res.body).toBe(201);
    const batch = res.json();
    const ids = idsOf(batch);
    expect(ids).toHaveLength(5);
    expect(batch.items.map((i: { payment_intent: { approval?: { status: string } } }) => i.payment_intent.approval?.status)).toEqual(Array(5).fill('pending'));
    expect(await jobsOf(ids)).toBe(0);
    await drainExecution(t);
    expect((await read(m.headers, batch.id)).json().payments_by_status).toEqual({ route_selected: 5 });

    const entries = (await approvals()).filter((a) => a.merchant_id === m.id);
    expect(entries).toEqual([
      expect.objectContaining({ payout_batch_id: batch.id, payments: 5, kind: 'payout', amount_usd: 499.95, approval_above_usd: 100, approvals: 0, approvals_required: 1 }),
    ]);
    expect(ids).toContain(entries[0]!.payment_intent_id);

    // One of its payments cannot be decided alone: the batch is decided once.
    const alone = await t.app.inject({ method: 'POST', url: `/admin/payment_intents/${ids[2]}/approve`, payload: {} });
    expect([alone.statusCode, alone.json().code]).toEqual([409, 'INVALID_STATE']);
    expect(alone.json().message).toContain(batch.id);
    expect(await jobsOf(ids)).toBe(0);

    const approved = await decideBatch(batch.id, 'approve', { reason: 'payroll checked' });
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toEqual({ payout_batch_id: batch.id, approval: 'approved', approvals: 1, approvals_required: 1, payments: 5 });
    expect(await jobsOf(ids)).toBe(5);
    expect((await approvals()).filter((a) => a.merchant_id === m.id)).toEqual([]);
    const again = await decideBatch(batch.id, 'approve');
    expect([again.statusCode, again.json().code]).toEqual([409, 'INVALID_STATE']);
    await drainExecution(t);
    expect((await read(m.headers, batch.id)).json().payments_by_status).toEqual({ broadcasted: 5 });
  });

  it('a rejection fails every payment in it (approval_rejected), releases the funds and tells the merchant', async () => {
    const m = await merchant({ approvalAboveMicros: usd(100) });
    const batch = (await post(m.headers, { idempotency_key: 'split-2', items: [1, 2, 3].map((i) => item(`r-${i}`, 60)) })).json();
    const ids = idsOf(batch);
    const rejected = await decideBatch(batch.id, 'reject', { reason: 'not ours' });
    expect(rejected.statusCode, rejected.body).toBe(200);
    expect(rejected.json()).toEqual({ payout_batch_id: batch.id, approval: 'rejected', approvals: 0, approvals_required: 1, payments: 3 });
    expect(await jobsOf(ids)).toBe(0);
    const { rows } = await t.db.pool.query(
      `SELECT i.status, (SELECT string_agg(type, ',' ORDER BY id) FROM ledger_transactions l WHERE l.payment_intent_id = i.id) AS ledger,
              (SELECT payload->>'failure_reason' FROM webhook_events e WHERE e.payment_intent_id = i.id AND e.event_type = 'payment.failed') AS failed
         FROM payment_intents i WHERE i.id = ANY($1)`,
      [ids],
    );
    expect(rows).toEqual(Array(3).fill({ status: 'failed', ledger: 'reserve,release', failed: 'approval_rejected' }));
    expect((await read(m.headers, batch.id)).json()).toMatchObject({ status: 'completed', totals: { failed_usd: 180 } });
    expect(await completedEvents(m.id)).toHaveLength(1);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });

  it('a batch at or under the threshold is not held; unknown and undecidable batches are refused', async () => {
    const m = await merchant({ approvalAboveMicros: usd(100) });
    const batch = (await post(m.headers, { idempotency_key: 'under', items: [item('u-1', 60), item('u-2', 40)] })).json();
    expect(batch.items.map((i: { payment_intent: object }) => i.payment_intent)).not.toContainEqual(expect.objectContaining({ approval: expect.anything() }));
    expect(await jobsOf(idsOf(batch))).toBe(2);
    const notHeld = await decideBatch(batch.id, 'approve');
    expect([notHeld.statusCode, notHeld.json().code]).toEqual([409, 'INVALID_STATE']);
    const unknown = await decideBatch('pob_unknown', 'reject');
    expect([unknown.statusCode, unknown.json().code]).toEqual([404, 'PAYOUT_BATCH_NOT_FOUND']);
  });
});
