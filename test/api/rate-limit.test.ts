// Per-merchant rate limits: the request over the limit is 429 RATE_LIMITED in the error body with Retry-After, and
// changes nothing; limits are per merchant (overrides included), shared by every api process on the database, exact
// under concurrency, and a new window opens a minute after the first request of the last one.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { createMerchant } from '../../src/core/merchants/merchants.js';
import { updateMerchantPolicy } from '../../src/core/merchants/policies.js';
import { createPool, type Pool } from '../../src/db/pool.js';
import { createTestContext, secondProcess, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { testAudit } from '../helpers/audit.js';

let t: TestContext;
let other: { app: FastifyInstance; pool: Pool };

beforeAll(async () => {
  t = await createTestContext({ RATE_LIMIT_PER_MINUTE: '5' });
  const pool = createPool(t.db.url, 5);
  other = { pool, app: await buildApp(secondProcess(t.ctx, { pool }), { merchant: true, admin: false, readiness: { ready: true } }) };
});
afterAll(async () => {
  await other.app.close();
  await other.pool.end();
  await t.close();
});

async function merchant(rateLimitPerMinute?: number): Promise<{ id: string; headers: Record<string, string> }> {
  const { merchant: m, apiKey } = await createMerchant(t.db.pool, t.ctx.config, { name: 'busy', webhookUrl: null }, t.clock.now(), testAudit());
  if (rateLimitPerMinute !== undefined) await updateMerchantPolicy(t.db.pool, t.ctx.config, m.id, { rateLimitPerMinute }, t.clock.now(), testAudit());
  return { id: m.id, headers: { 'x-api-key': apiKey } };
}

const quote = (headers: Record<string, string>, app: FastifyInstance = t.app) =>
  app.inject({ method: 'POST', url: '/quotes', headers, payload: { amount_usd: 1, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' } });
const read = (headers: Record<string, string>, app: FastifyInstance = t.app) => app.inject({ method: 'GET', url: '/payment_intents/pi_unknown', headers });
const quotesOf = async (id: string) => (await t.db.pool.query('SELECT COUNT(*)::int AS n FROM quotes WHERE merchant_id = $1', [id])).rows[0].n;

describe('rate limit per merchant', () => {
  it('the request over the limit is 429 RATE_LIMITED with Retry-After, stores nothing, and the next window lets it through', async () => {
    const m = await merchant();
    const ok = [await quote(m.headers), await read(m.headers), await quote(m.headers), await quote(m.headers), await read(m.headers)];
    expect(ok.map((r) => r.statusCode)).toEqual([201, 404, 201, 201, 404]);
    expect(ok[4]!.headers['x-ratelimit-remaining']).toBe('0');

    const limited = await quote(m.headers);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toEqual({ statusCode: 429, error: 'Too Many Requests', message: expect.stringContaining('5 requests'), code: 'RATE_LIMITED' });
    expect(limited.headers['retry-after']).toBe('60');
    expect(await quotesOf(m.id)).toBe(3);

    t.clock.advance(45_000);
    const still = await read(m.headers);
    expect([still.statusCode, still.headers['retry-after']]).toEqual([429, '15']);
    t.clock.advance(15_000);
    expect((await quote(m.headers)).statusCode).toBe(201);
  });

  it('belongs to each merchant, with its own override (0: none)', async () => {
    const [busy, calm, strict, unlimited] = [await merchant(), await merchant(), await merchant(2), await merchant(0)];
    for (let i = 0; i < 5; i++) await read(busy.headers);
    expect((await read(busy.headers)).statusCode).toBe(429);
    expect((await read(calm.headers)).statusCode).toBe(404);
    expect([(await read(strict.headers)).statusCode, (await read(strict.headers)).statusCode, (await read(strict.headers)).statusCode]).toEqual([404, 404, 429]);
    const many = await Promise.all(Array.from({ length: 12 }, () => read(unlimited.headers)));
    expect(many.every((r) => r.statusCode === 404)).toBe(true);
  });

  it('is one limit across api processes, exact under concurrency', async () => {
    const m = await merchant();
    const responses = await Promise.all(Array.from({ length: 12 }, (_, i) => read(m.headers, i % 2 ? t.app : other.app)));
    expect(responses.filter((r) => r.statusCode === 404)).toHaveLength(5);
    expect(responses.filter((r) => r.statusCode === 429)).toHaveLength(7);
    expect(responses.filter((r) => r.statusCode === 429).every((r) => r.headers['retry-after'] === '60')).toBe(true);
  });

  it('comes after authentication: a bad key is 401, and /health does not count against a merchant', async () => {
    for (let i = 0; i < 8; i++) expect((await read({ 'x-api-key': '' })).statusCode).toBe(401);
    for (let i = 0; i < 8; i++) expect((await t.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  });
});
