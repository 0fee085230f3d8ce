// Reservations in batches (group commit): a batch decides its requests in arrival order, each refusal alone, and is
// exact under contention within one process and across two.
import { afterEach, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/core/context.js';
import { createPaymentIntent } from '../../src/core/payments/payment-intents.js';
import { reserveBatch } from '../../src/core/payments/reserve/reserve-batch.js';
import { createPool } from '../../src/db/pool.js';
import { insertQuotes } from '../../src/db/queries/quotes.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createTestContext, KEY, secondProcess, SOL_ADDRESS, type TestContext } from '../helpers/context.js';

let t: TestContext | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function newQuote(amountUsd: number): Promise<string> {
  const res = await t!.app.inject({
    method: 'POST',
    url: '/quotes',
    headers: KEY,
    payload: { amount_usd: amountUsd, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().quote_id as string;
}

const count = async (sql: string) => (await t!.db.pool.query<{ n: number }>(sql)).rows[0]!.n;
const solanaAvailable = async () =>
  (await t!.app.inject({ method: 'GET', url: '/admin/overview' })).json().treasury_balances.find((b: { chain: string }) => b.chain === 'solana')
    .available_balance as number;

describe('a reservation batch', () => {
  it('decides each request alone: refusals in the middle, the rest commit in one transaction', async () => {
    t = await createTestContext({ SIM_TREASURY_USDC: '100' });
    const old = await newQuote(10);
    t.clock.advance(350_000); // past the 300 s quote lifetime of `old`
    const [still, fresh] = [await newQuote(3), await newQuote(1)];
    const m = 'mer_test';
    const outcomes = await reserveBatch(t.ctx, [
      { merchantId: m, quoteId: still, idempotencyKey: 'a' }, // reserved: 3
      { merchantId: m, quoteId: old, idempotencyKey: 'b' }, // expired
      { merchantId: m, quoteId: 'quo_unknown', idempotencyKey: 'c' }, // no such quote
      { merchantId: 'mer_other', quoteId: fresh, idempotencyKey: 'd' }, // another merchant's quote
      { merchantId: m, quoteId: fresh, idempotencyKey: 'e' }, // reserved: 1
      { merchantId: m, quoteId: still, idempotencyKey: 'a' }, // same key, same quote: the first one's intent
      { merchantId: m, quoteId: fresh, idempotencyKey: 'a' }, // same key, another quote: refused
    ]);
    expect(outcomes.map((o) => (o.ok ? (o.result.replayed ? 'replayed' : 'created') : o.error.code))).toEqual([
      'created',
      'QUOTE_EXPIRED',
      'QUOTE_NOT_FOUND',
      'QUOTE_NOT_FOUND',
      'created',
      'replayed',
      'IDEMPOTENCY_KEY_REUSED',
    ]);
    const intentOf = (i: number) => {
      const outcome = outcomes[i]!;
      if (!outcome.ok) throw new Error(`outcome ${i} was refused`);
      return outcome.result.intent;
    };
    expect(intentOf(5).id).toBe(intentOf(0).id);
    expect(intentOf(4).amount_micros).toBe(1_000_000n);
    expect(await count('SELECT COUNT(*)::int AS n FROM payment_intents')).toBe(2);
    expect(await count("SELECT COUNT(*)::int AS n FROM ledger_transactions WHERE type = 'reserve'")).toBe(2);
    expect(await count("SELECT COUNT(*)::int AS n FROM webhook_events WHERE event_type = 'payment.created'")).toBe(2);
    expect(await count("SELECT COUNT(*)::int AS n FROM pgboss.job WHERE name = 'payment-execute'")).toBe(2);
    expect(await count("SELECT COUNT(*)::int AS n FROM payment_intent_transitions")).toBe(6);
    expect(await solanaAvailable()).toBe(96);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });

  it('spends funds in arrival order: a later request that no longer fits is refused, a smaller one after it fits', async () => {
    t = await createTestContext({ SIM_TREASURY_USDC: '100' });
    const [sixty, fifty, forty] = [await newQuote(60), await newQuote(50), await newQuote(40)];
    const outcomes = await reserveBatch(t.ctx, [
      { merchantId: 'mer_test', quoteId: sixty, idempotencyKey: 'x1' },
      { merchantId: 'mer_test', quoteId: fifty, idempotencyKey: 'x2' },
      { merchantId: 'mer_test', quoteId: forty, idempotencyKey: 'x3' },
    ]);
    expect(outcomes.map((o) => (o.ok ? 'created' : o.error.code))).toEqual(['created', 'INSUFFICIENT_BALANCE', 'created']);
    expect(await solanaAvailable()).toBe(0);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });

  it('replays an intent of an earlier transaction, and keeps it even when the key comes with another quote', async () => {
    t = await createTestContext({ SIM_TREASURY_USDC: '100' });
    const [q1, q2] = [await newQuote(10), await newQuote(10)];
    const [made] = await reserveBatch(t.ctx, [{ merchantId: 'mer_test', quoteId: q1, idempotencyKey: 'k' }]);
    if (!made?.ok) throw new Error('the first creation was refused');
    const again = await reserveBatch(t.ctx, [
      { merchantId: 'mer_test', quoteId: q1, idempotencyKey: 'k' },
      { merchantId: 'mer_test', quoteId: q2, idempotencyKey: 'k' },
    ]);
    expect(again[0]).toMatchObject({ ok: true, result: { replayed: true, intent: { id: made.result.intent.id } } });
    expect(again[1]).toMatchObject({ ok: false, error: { code: 'IDEMPOTENCY_KEY_REUSED' } });
    expect(await count('SELECT COUNT(*)::int AS n FROM payment_intents')).toBe(1);
  });
});

describe('idempotency keys in one batch', () => {
  it('a refused request does not claim its key: (K, expired quote) then (K, another quote) creates, as one after the other does', async () => {
    t = await createTestContext({ SIM_TREASURY_USDC: '100' });
    const expired = await newQuote(5);
    t.clock.advance(350_000); // past the 300 s quote lifetime of `expired`
    const [fresh, small] = [await newQuote(7), await newQuote(2)];
    const create = (quoteId: string, idempotencyKey: string) => createPaymentIntent(t!.ctx, 'mer_test', { quoteId, idempotencyKey });
    const answer = (r: PromiseSettledResult<{ replayed: boolean }>) =>
      r.status === 'fulfilled' ? (r.value.replayed ? 'replayed' : 'created') : (r.reason as { code: string }).code;

    // One after the other: the refusal stores nothing, so the key is free for the next request (decision 80).
    const sequential = [];
    for (const quoteId of [expired, fresh]) sequential.push(await create(quoteId, 'K1').then(
      (value) => ({ status: 'fulfilled' as const, value }),
      (reason: unknown) => ({ status: 'rejected' as const, reason }),
    ));
    expect(sequential.map(answer)).toEqual(['QUOTE_EXPIRED', 'created']);

    // Together: the first creation is a batch of its own, written while the others arrive in this same tick, so they
    // queue for the next batch and are decided in one transaction, in arrival order.
    const together = await Promise.allSettled([create(small, 'first'), create(expired, 'K2'), create(fresh, 'K2'), create(small, 'companion')]);
    expect(together.map(answer)).toEqual(['created', 'QUOTE_EXPIRED', 'created', 'created']);
    expect(await count("SELECT COUNT(DISTINCT xmin::text)::int AS n FROM payment_intents WHERE idempotency_key IN ('K2', 'companion')")).toBe(1);
    const k2 = await t.db.pool.query<{ quote_id: string }>("SELECT quote_id FROM payment_intents WHERE idempotency_key = 'K2'");
    expect(k2.rows.map((r) => r.quote_id)).toEqual([fresh]);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });
});

describe('batched reservations under contention', () => {
  it('40 concurrent creations from two processes against funds for 10 give exactly 10, in shared transactions', async () => {
    t = await createTestContext({ SIM_TREASURY_USDC: '100' });
    const quotes = await Promise.all(Array.from({ length: 40 }, () => newQuote(10)));
    // A second process: its own pool, so its own batcher, on the same database.
    const otherPool = createPool(t.db.url, 10);
    const other: AppContext = secondProcess(t.ctx, { pool: otherPool });
    try {
      const results = await Promise.allSettled(
        quotes.map((quoteId, i) => createPaymentIntent(i % 2 === 0 ? t!.ctx : other, 'mer_test', { quoteId, idempotencyKey: `c-${i}` })),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10);
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(refused.map((r) => (r.reason as { code: string }).code)).toEqual(Array(30).fill('INSUFFICIENT_BALANCE'));
    } finally {
      await otherPool.end();
    }
    expect(await solanaAvailable()).toBe(0);
    expect(await count("SELECT COUNT(*)::int AS n FROM ledger_transactions WHERE type = 'reserve'")).toBe(10);
    // Requests that arrived together were written together: fewer creation instants than intents is not guaranteed,
    // but several intents per transaction is (each batch shares one transaction and one clock reading).
    expect(await count('SELECT COUNT(DISTINCT xmin::text)::int AS n FROM payment_intents')).toBeLessThan(10);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });
});

describe('quotes created together', () => {
  it('are written by shared INSERTs, each readable and usable at once', async () => {
    t = await createTestContext({ SIM_TREASURY_USDC: '1000' });
    const ids = await Promise.all(Array.from({ length: 30 }, (_, i) => newQuote(1 + i)));
    expect(new Set(ids).size).toBe(30);
    expect(await count('SELECT COUNT(*)::int AS n FROM quotes')).toBe(30);
    expect(await count('SELECT COUNT(DISTINCT xmin::text)::int AS n FROM quotes')).toBeLessThan(30);
    // Each quote was committed before its answer went out: an intent can be made from any of them right away.
    const intent = await t.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: ids[29], idempotency_key: 'q' } });
    expect(intent.statusCode, intent.body).toBe(201);
    expect(intent.json().amount_usd).toBe(30);
  });

  it("commit without waiting for the disk, and the connection's next transaction waits again (decision 135)", async () => {
    t = await createTestContext({ SIM_TREASURY_USDC: '1000' });
    const id = await newQuote(2);
    const stored = (await t.db.pool.query('SELECT * FROM quotes WHERE id = $1', [id])).rows[0];
    const again = (n: number) => ({ ...stored, id: `quo_lazyflush${n}`, amount_micros: BigInt(stored.amount_micros) });
    const client = await t.db.pool.connect();
    try {
      // Inside a transaction of ours the setting shows until that transaction ends (a lazy insert never runs in one on
      // the quote path; the test holds it open to see the setting the insert's commit reads).
      await client.query('BEGIN');
      await insertQuotes(client, [again(1)], { lazyFlush: true });
      expect((await client.query('SHOW synchronous_commit')).rows[0].synchronous_commit).toBe('off');
      await client.query('COMMIT');
      expect((await client.query('SHOW synchronous_commit')).rows[0].synchronous_commit).toBe('on');
      // On its own (the quote writer's way), the insert is its own transaction: nothing is left behind.
      await insertQuotes(client, [again(2)], { lazyFlush: true });
      expect((await client.query('SHOW synchronous_commit')).rows[0].synchronous_commit).toBe('on');
      await insertQuotes(client, [again(3)]);
      expect(await count("SELECT COUNT(*)::int AS n FROM quotes WHERE id LIKE 'quo_lazyflush%'")).toBe(3);
    } finally {
      client.release();
    }
  });
});
