// A daily limit is exact under concurrency: 20 payouts at once against a limit that fits 10 give exactly 10, whether
// they arrive through one app or through two apps with their own connection pools and queues on one database (two
// api processes; the e2e CLI test runs two real ones).
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import type PgBoss from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { createAdapters } from '../../src/chains/factory.js';
import { createMerchant } from '../../src/core/merchants/merchants.js';
import { updateMerchantPolicy } from '../../src/core/merchants/policies.js';
import { createPool, type Pool } from '../../src/db/pool.js';
import { startQueue } from '../../src/jobs/queue.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createTestContext, secondProcess, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { testAudit } from '../helpers/audit.js';

let t: TestContext;
let second: { app: FastifyInstance; pool: Pool; boss: PgBoss };

beforeAll(async () => {
  t = await createTestContext({ SIM_TREASURY_USDC: '100000' });
  // A second "process": its own pool, queue and adapters on the same database, the same clock.
  const pool = createPool(t.db.url, 20);
  const boss = await startQueue({ connectionString: t.db.url, jobTimeoutSeconds: 60, retryDelaySeconds: 5, supervise: false });
  const log = pino({ level: 'silent' });
  const adapters = await createAdapters(t.ctx.config, pool, t.clock, log);
  const app = await buildApp(secondProcess(t.ctx, { pool, boss, adapters, log }), { merchant: true, admin: false, readiness: { ready: true } });
  second = { app, pool, boss };
});
afterAll(async () => {
  await second.app.close();
  await second.boss.stop({ graceful: false, wait: true });
  await second.pool.end();
  await t.close();
});

async function merchantWithDailyLimit(limitUsd: number): Promise<{ id: string; headers: Record<string, string> }> {
  const { merchant, apiKey } = await createMerchant(t.db.pool, t.ctx.config, { name: 'busy', webhookUrl: null }, t.clock.now(), testAudit());
  await updateMerchantPolicy(t.db.pool, t.ctx.config, merchant.id, { dailyLimitMicros: BigInt(limitUsd) * 1_000_000n }, t.clock.now(), testAudit());
  return { id: merchant.id, headers: { 'x-api-key': apiKey } };
}

/** 20 quotes of 10 USD, then 20 intents at once, spread over `apps`; the status codes and error codes. */
async function burst(apps: FastifyInstance[], headers: Record<string, string>): Promise<string[]> {
  const quotes = await Promise.all(
    Array.from({ length: 20 }, () =>
      t.app.inject({ method: 'POST', url: '/quotes', headers, payload: { amount_usd: 10, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' } }),
    ),
  );
  const responses = await Promise.all(
    quotes.map((q, i) =>
      apps[i % apps.length]!.inject({
        method: 'POST',
        url: '/payment_intents',
        headers,
        payload: { quote_id: q.json().quote_id, idempotency_key: `burst-${i}` },
      }),
    ),
  );
  return responses.map((r) => (r.statusCode === 201 ? '201' : `${r.statusCode} ${r.json().code}`));
}

async function reservedFor(merchantId: string): Promise<{ intents: number; reserved: string }> {
  const { rows } = await t.db.pool.query(
    `SELECT COUNT(DISTINCT i.id)::int AS intents, COALESCE(SUM(p.amount) FILTER (WHERE a.kind = 'treasury_reserved'), 0)::text AS reserved
       FROM payment_intents i
       JOIN ledger_transactions lt ON lt.payment_intent_id = i.id
       JOIN ledger_postings p ON p.transaction_id = lt.id
       JOIN ledger_accounts a ON a.id = p.account_id
      WHERE i.merchant_id = $1`,
    [merchantId],
  );
  return rows[0];
}

describe('daily limit under concurrency', () => {
  it('20 parallel payouts against a limit that fits 10, through one app: exactly 10', async () => {
    const m = await merchantWithDailyLimit(100);
    const outcomes = await burst([t.app], m.headers);
    expect(outcomes.filter((o) => o === '201')).toHaveLength(10);
    expect(outcomes.filter((o) => o === '422 POLICY_DAILY_LIMIT_EXCEEDED')).toHaveLength(10);
    expect(await reservedFor(m.id)).toEqual({ intents: 10, reserved: '100000000' });
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
  });

  it('the same through two apps with their own pools on one database: exactly 10', async () => {
    const m = await merchantWithDailyLimit(100);
    const outcomes = await burst([t.app, second.app], m.headers);
    expect(outcomes.filter((o) => o === '201')).toHaveLength(10);
    expect(outcomes.filter((o) => o === '422 POLICY_DAILY_LIMIT_EXCEEDED')).toHaveLength(10);
    expect(await reservedFor(m.id)).toEqual({ intents: 10, reserved: '100000000' });
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
  });
});

// Issue 35: `--approval-above-usd-per-day N` holds any payment that would bring what the merchant sent without approval
// in the last 24 hours above N: exact under concurrency (two apps, one database) and within one payout batch.
describe('the approval limit per day', () => {
  const usd = (n: number) => BigInt(Math.round(n * 1_000_000));
  async function merchantWithPerDay(limitUsd: number) {
    const { merchant, apiKey } = await createMerchant(t.db.pool, t.ctx.config, { name: 'splitter', webhookUrl: null }, t.clock.now(), testAudit());
    await updateMerchantPolicy(t.db.pool, t.ctx.config, merchant.id, { approvalAbovePerDayMicros: usd(limitUsd) }, t.clock.now(), testAudit());
    return { id: merchant.id, headers: { 'x-api-key': apiKey } };
  }
  let keys = 0;
  async function pay(app: FastifyInstance, headers: Record<string, string>, amount: number) {
    const q = await t.app.inject({ method: 'POST', url: '/quotes', headers, payload: { amount_usd: amount, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' } });
    const res = await app.inject({ method: 'POST', url: '/payment_intents', headers, payload: { quote_id: q.json().quote_id, idempotency_key: `per-day-${++keys}` } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { payment_intent_id: string; approval?: { status: string } };
  }
  const held = (p: { approval?: { status: string } }) => p.approval?.status === 'pending';

  it('holds the payment that would pass it; held and approved payments do not count; the day rolls', async () => {
    const m = await merchantWithPerDay(100);
    const outcomes = [];
    for (const amount of [60, 30, 20, 10]) outcomes.push(held(await pay(t.app, m.headers, amount)));
    expect(outcomes).toEqual([false, false, true, false]);
    expect(held(await pay(t.app, m.headers, 0.000001))).toBe(true);
    t.clock.advance(24 * 3600_000 + 1);
    expect(held(await pay(t.app, m.headers, 100))).toBe(false);
  });

  it('20 payments of 60 at once through two apps against a limit of 100: exactly one goes unapproved', async () => {
    const m = await merchantWithPerDay(100);
    const all = await Promise.all(Array.from({ length: 20 }, (_, i) => pay(i % 2 ? second.app : t.app, m.headers, 60)));
    expect(all.filter((p) => !held(p))).toHaveLength(1);
  });

  it('a payout batch counts its own earlier items, and is held whole once one of them would pass it', async () => {
    const m = await merchantWithPerDay(100);
    const batch = (key: string, amounts: number[]) =>
      t.app.inject({
        method: 'POST',
        url: '/payout_batches',
        headers: m.headers,
        payload: { idempotency_key: key, items: amounts.map((amount_usd, i) => ({ idempotency_key: `${key}-${i}`, amount_usd, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' })) },
      });
    const statuses = async (key: string, amounts: number[]) => {
      const res = await batch(key, amounts);
      expect(res.statusCode, res.body).toBe(201);
      return res.json().items.map((i: { payment_intent: { approval?: { status: string } } }) => i.payment_intent.approval?.status ?? 'sent');
    };
    expect(await statuses('b-1', [50, 40])).toEqual(['sent', 'sent']);
    expect(await statuses('b-2', [5, 20, 1])).toEqual(['pending', 'pending', 'pending']);
    expect(await statuses('b-3', [10])).toEqual(['sent']);
  });
});
