// API keys at the edge (production mode): several active keys during a rotation, a revoked key refused by the very
// next request in this process and in another one (its own pool: no cache survives a revocation), and last use
// recorded at most once a minute per key without holding up the request.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { apiKeysOf, createApiKey, revokeApiKey } from '../../src/core/merchants/api-keys.js';
import { createMerchant } from '../../src/core/merchants/merchants.js';
import { createPool, type Pool } from '../../src/db/pool.js';
import { createTestContext, secondProcess, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { testAudit } from '../helpers/audit.js';

let t: TestContext;
let other: { app: FastifyInstance; pool: Pool };

beforeAll(async () => {
  t = await createTestContext({ NODE_ENV: 'production', API_KEY_SALT: 'keys-test-salt-5b1e9c3a7d2f8e4b6a0c9d1e7f3a5b2c', WEBHOOK_SIGNING_SECRET: 'whsec-test-0f6c2a9e4b7d1c3e5a8f2b6d9c0e4a7b', AUDIT_KEY: '6e2b9d4f1a8c3e7b5d0f2a9c4e6b8d1f3a5c7e9b0d2f' });
  const pool = createPool(t.db.url, 5);
  other = { pool, app: await buildApp(secondProcess(t.ctx, { pool }), { merchant: true, admin: false, readiness: { ready: true } }) };
});
afterAll(async () => {
  await other.app.close();
  await other.pool.end();
  await t.close();
});

const quote = (app: FastifyInstance, key: string) =>
  app.inject({ method: 'POST', url: '/quotes', headers: { 'x-api-key': key }, payload: { amount_usd: 1, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' } });

async function onboard() {
  const { merchant, apiKey } = await createMerchant(t.db.pool, t.ctx.config, { name: 'Rotating', webhookUrl: null }, t.clock.now(), testAudit());
  return { id: merchant.id, key: apiKey };
}

describe('rotation and revocation', () => {
  it('a second key works next to the first; the revoked one is 401 at once in both processes, the other still works', async () => {
    const m = await onboard();
    const second = await createApiKey(t.db.pool, t.ctx.config, m.id, t.clock.now(), testAudit());
    expect(second.apiKey).toMatch(/^sr_live_[A-Za-z0-9_-]{32}$/);
    expect(second.key.prefix).toBe(second.apiKey.slice(0, 16));
    for (const key of [m.key, second.apiKey]) {
      for (const app of [t.app, other.app]) expect((await quote(app, key)).statusCode).toBe(201);
    }

    // Warm both processes on the old key, then revoke it by its shown prefix.
    const first = (await apiKeysOf(t.db.pool, m.id)).find((k) => m.key.startsWith(k.prefix!))!;
    expect(first.prefix).toHaveLength(16);
    await revokeApiKey(t.db.pool, t.ctx.config, m.id, first.prefix!, t.clock.now(), testAudit());
    for (const app of [t.app, other.app]) {
      const refused = await quote(app, m.key);
      expect(refused.statusCode).toBe(401);
      expect(refused.json()).toEqual({ statusCode: 401, error: 'Unauthorized', message: 'The API key is not valid', code: 'UNAUTHORIZED' });
      expect((await quote(app, second.apiKey)).statusCode).toBe(201);
    }
  });

  it('a key can be named by its id, its prefix or the whole key; a wrong name or a second revocation is refused', async () => {
    const m = await onboard();
    const b = await createApiKey(t.db.pool, t.ctx.config, m.id, t.clock.now(), testAudit());
    const c = await createApiKey(t.db.pool, t.ctx.config, m.id, t.clock.now(), testAudit());
    await expect(revokeApiKey(t.db.pool, t.ctx.config, m.id, 'sr_live_nothing1', t.clock.now(), testAudit())).rejects.toMatchObject({ code: 'API_KEY_NOT_FOUND' });
    // Another merchant's key is not this merchant's to revoke.
    const stranger = await onboard();
    await expect(revokeApiKey(t.db.pool, t.ctx.config, m.id, stranger.key, t.clock.now(), testAudit())).rejects.toMatchObject({ code: 'API_KEY_NOT_FOUND' });
    expect((await quote(t.app, stranger.key)).statusCode).toBe(201);

    expect((await revokeApiKey(t.db.pool, t.ctx.config, m.id, m.key, t.clock.now(), testAudit())).revoked_at).not.toBeNull();
    expect((await revokeApiKey(t.db.pool, t.ctx.config, m.id, b.key.id, t.clock.now(), testAudit())).id).toBe(b.key.id);
    await expect(revokeApiKey(t.db.pool, t.ctx.config, m.id, b.key.id, t.clock.now(), testAudit())).rejects.toMatchObject({ code: 'INVALID_STATE' });
    expect((await quote(t.app, m.key)).statusCode).toBe(401);
    expect((await quote(t.app, b.apiKey)).statusCode).toBe(401);
    expect((await quote(t.app, c.apiKey)).statusCode).toBe(201);
    await expect(revokeApiKey(t.db.pool, t.ctx.config, 'mer_nobody', c.apiKey, t.clock.now(), testAudit())).rejects.toMatchObject({ code: 'MERCHANT_NOT_FOUND' });
  });
});

describe('last use', () => {
  const lastUsed = async (keyId: string) =>
    (await t.db.pool.query<{ last_used_at: Date | null }>('SELECT last_used_at FROM api_keys WHERE id = $1', [keyId])).rows[0]!.last_used_at?.toISOString() ?? null;

  it('is recorded on first use, then at most once a minute per key', async () => {
    const m = await onboard();
    const [key] = await apiKeysOf(t.db.pool, m.id);
    expect(key!.last_used_at).toBeNull();
    const first = t.clock.now().toISOString();
    expect((await quote(t.app, m.key)).statusCode).toBe(201);
    await vi.waitFor(async () => expect(await lastUsed(key!.id)).toBe(first), { timeout: 5000 });

    // Within the minute the burst writes nothing: had it written 12:00:59, the use a second later (a minute after
    // the first) would be skipped and last_used_at would stay 12:00:59.
    t.clock.advance(59_000);
    await Promise.all(Array.from({ length: 5 }, () => quote(t.app, m.key)));
    t.clock.advance(1_000);
    const later = t.clock.now().toISOString();
    expect((await quote(other.app, m.key)).statusCode).toBe(201);
    await vi.waitFor(async () => expect(await lastUsed(key!.id)).toBe(later), { timeout: 5000 });
  });
});

describe('development mode', () => {
  it('a revoked issued key is refused there too, while unknown keys stay the test merchant', async () => {
    const dev = await createTestContext({ NODE_ENV: 'development' });
    try {
      const { merchant, apiKey } = await createMerchant(dev.db.pool, dev.ctx.config, { name: 'dev', webhookUrl: null }, dev.clock.now(), testAudit());
      expect((await quote(dev.app, apiKey)).statusCode).toBe(201);
      await revokeApiKey(dev.db.pool, dev.ctx.config, merchant.id, apiKey, dev.clock.now(), testAudit());
      expect((await quote(dev.app, apiKey)).statusCode).toBe(401);
      expect((await quote(dev.app, 'anything')).statusCode).toBe(201);
    } finally {
      await dev.close();
    }
  });
});
