// A daily limit is exact under concurrency: 20 payouts at once against a limit that fits 10 give exactly 10, whether
// they arrive through one app or through two apps with their own connection pools and queues on one database (two
// api processes; the e2e CLI test runs two real ones).
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import type PgBoss from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { createAdapters } from '../../src/chains/factory.js';
import { createMerchant } from '../../src/core/merchants.js';
import { updateMerchantPolicy } from '../../src/core/policies.js';
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
