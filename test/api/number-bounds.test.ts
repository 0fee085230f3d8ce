// Numbers the APIs accept are ones the service can compute with (decision 26): an absurd chain-health metric is
// refused with 400 and changes nothing, and one already stored (written before the bound existed, or by hand)
// disqualifies its chain instead of making every quote on it answer 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, ETH_ADDRESS, KEY, SOL_ADDRESS, type TestContext } from '../helpers/context.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext({ SIM_TREASURY_USDC: '1000' });
});
afterAll(async () => t.close());

const chainHealth = (payload: string | object) =>
  t.app.inject({ method: 'POST', url: '/admin/chain-health', headers: { 'content-type': 'application/json' }, payload });
const quote = (destination: object) =>
  t.app.inject({ method: 'POST', url: '/quotes', headers: KEY, payload: { amount_usd: 10, destination, priority: 'low_fee' } });
const snapshotCount = async () => (await t.db.pool.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM chain_health_snapshots')).rows[0]!.n;
const shape = (statusCode: number, code: string) => ({ statusCode, error: expect.any(String), message: expect.any(String), code });

describe('POST /admin/chain-health bounds', () => {
  it.each([
    ['estimated_fee_usd', '1e308'],
    ['estimated_fee_usd', '1e7'],
    ['avg_confirmation_seconds', '1e308'],
    ['avg_confirmation_seconds', '1e6'],
  ])('%s: %s answers 400 INVALID_CHAIN_HEALTH and stores nothing', async (field, value) => {
    const before = await snapshotCount();
    const res = await chainHealth(`{"chain":"ethereum","health_status":"healthy","${field}":${value}}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(shape(400, 'INVALID_CHAIN_HEALTH'));
    expect(await snapshotCount()).toBe(before);
    expect((await quote({ ethereum_address: ETH_ADDRESS })).statusCode).toBe(201);
  });

  it("accepts the spec's fields as written, at the edges of their ranges", async () => {
    for (const payload of [
      { chain: 'ethereum', health_status: 'healthy' },
      { chain: 'ethereum', health_status: 'degraded', estimated_fee_usd: 0, avg_confirmation_seconds: 0, rpc_error_rate: 0 },
      { chain: 'solana', health_status: 'healthy', estimated_fee_usd: 1_000_000, avg_confirmation_seconds: 86_400, rpc_error_rate: 1 },
      { chain: 'solana', health_status: 'unhealthy', estimated_fee_usd: 0.00075, avg_confirmation_seconds: 12.5, rpc_error_rate: 0.01 },
    ]) {
      const res = await chainHealth(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(201);
      expect(res.json()).toMatchObject(payload);
    }
  });
});

describe('a stored snapshot with an absurd metric', () => {
  it.each([
    ['estimated_fee_usd', '1e308'],
    ['estimated_fee_usd', 'Infinity'],
    ['estimated_fee_usd', 'NaN'],
    ['avg_confirmation_seconds', 'Infinity'],
    ['avg_confirmation_seconds', 'NaN'],
  ])('%s = %s disqualifies its chain; quotes never answer 500', async (field, value) => {
    await chainHealth({ chain: 'solana', health_status: 'healthy' });
    t.clock.advance(1_000);
    const metrics = { estimated_fee_usd: '1.5', avg_confirmation_seconds: '180', [field]: value };
    await t.db.pool.query(
      `INSERT INTO chain_health_snapshots (chain, health_status, estimated_fee_usd, avg_confirmation_seconds, rpc_error_rate, source, created_at)
       VALUES ('ethereum', 'healthy', $1::float8, $2::float8, 0.01, 'admin', $3)`,
      [metrics.estimated_fee_usd, metrics.avg_confirmation_seconds, t.clock.now()],
    );
    t.clock.advance(1_000);

    const both = await quote({ ethereum_address: ETH_ADDRESS, solana_address: SOL_ADDRESS });
    expect(both.statusCode, both.body).toBe(201);
    expect(both.json().candidate_routes.map((r: { chain: string }) => r.chain)).toEqual(['solana']);

    const ethereumOnly = await quote({ ethereum_address: ETH_ADDRESS });
    expect(ethereumOnly.statusCode, ethereumOnly.body).toBe(422);
    expect(ethereumOnly.json()).toMatchObject({ code: 'NO_ROUTE_AVAILABLE', message: expect.stringContaining('ethereum: invalid_chain_health') });

    // NaN has no JSON form at all: only SQL typed by hand can store it, and the views do not try to show it.
    if (value !== 'NaN') {
      const overview = await t.app.inject({ method: 'GET', url: '/admin/overview' });
      expect(overview.statusCode, overview.body).toBe(200);
    }
  });
});
