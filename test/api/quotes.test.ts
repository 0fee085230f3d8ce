import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, ETH_ADDRESS, KEY, SOL_ADDRESS, type TestContext } from '../helpers/context.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext({ SIM_TREASURY_USDC: '1000' });
});
afterAll(async () => t.close());

const quote = (body: unknown, headers: Record<string, string> = KEY) =>
  t.app.inject({ method: 'POST', url: '/quotes', headers, payload: body as object });

describe('POST /quotes', () => {
  it('201: scores both chains and recommends one, expiring 5 minutes later', async () => {
    const res = await quote({ amount_usd: 100.5, destination: { ethereum_address: ETH_ADDRESS, solana_address: SOL_ADDRESS }, priority: 'low_fee' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.quote_id).toMatch(/^quo_/);
    expect(body.amount_usd).toBe(100.5);
    expect(body.candidate_routes.map((r: { chain: string }) => r.chain).sort()).toEqual(['ethereum', 'solana']);
    for (const route of body.candidate_routes) {
      expect(route.final_score).toBeGreaterThanOrEqual(0);
      expect(route.final_score).toBeLessThanOrEqual(1);
      expect(route.reliability_score).toBeGreaterThanOrEqual(0);
      expect(route.reliability_score).toBeLessThanOrEqual(1);
      expect(typeof route.estimated_fee_usd).toBe('number');
      expect(typeof route.estimated_settlement_seconds).toBe('number');
    }
    expect(body.recommended_route).toBe('solana');
    expect(body.expires_at).toBe('2026-03-01T12:05:00.000Z');
  });

  it('201: only the chain with a destination is a candidate', async () => {
    const res = await quote({ amount_usd: 5, destination: { ethereum_address: ETH_ADDRESS }, priority: 'fast' });
    expect(res.statusCode).toBe(201);
    expect(res.json().candidate_routes).toHaveLength(1);
    expect(res.json().recommended_route).toBe('ethereum');
  });

  it('an unhealthy chain is disqualified; a degraded one scores lower for reliable', async () => {
    const both = { amount_usd: 5, destination: { ethereum_address: ETH_ADDRESS, solana_address: SOL_ADDRESS }, priority: 'reliable' };
    const solanaRoute = (res: { json(): { candidate_routes: { chain: string; reliability_score: number; final_score: number }[] } }) =>
      res.json().candidate_routes.find((r) => r.chain === 'solana')!;
    const health = (status: string) =>
      t.app.inject({ method: 'POST', url: '/admin/chain-health', payload: { chain: 'solana', health_status: status, rpc_error_rate: 0 } });
    await health('healthy');
    const healthy = solanaRoute(await quote(both));
    await health('degraded');
    const degradedQuote = await quote(both);
    const degraded = solanaRoute(degradedQuote);
    expect(healthy.reliability_score).toBe(1);
    expect(degraded.reliability_score).toBe(0.6);
    expect(degraded.final_score).toBeLessThan(healthy.final_score);
    expect(degradedQuote.json().candidate_routes).toHaveLength(2); // degraded is not disqualified

    await t.app.inject({ method: 'POST', url: '/admin/chain-health', payload: { chain: 'solana', health_status: 'unhealthy' } });
    const res = await quote({ amount_usd: 5, destination: { ethereum_address: ETH_ADDRESS, solana_address: SOL_ADDRESS }, priority: 'low_fee' });
    expect(res.json().recommended_route).toBe('ethereum');
    expect(res.json().candidate_routes).toHaveLength(1);
    const only = await quote({ amount_usd: 5, destination: { solana_address: SOL_ADDRESS }, priority: 'low_fee' });
    expect(only.statusCode).toBe(422);
    expect(only.json().code).toBe('NO_ROUTE_AVAILABLE');
    await t.app.inject({ method: 'POST', url: '/admin/chain-health', payload: { chain: 'solana', health_status: 'healthy' } });
  });

  it('400 INSUFFICIENT_BALANCE when no requested chain holds the amount', async () => {
    const res = await quote({ amount_usd: 1000.01, destination: { ethereum_address: ETH_ADDRESS, solana_address: SOL_ADDRESS }, priority: 'fast' });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('INSUFFICIENT_BALANCE');
  });

  it.each([
    [{ destination: { ethereum_address: ETH_ADDRESS }, priority: 'fast' }, 'INVALID_AMOUNT'],
    [{ amount_usd: 0, destination: { ethereum_address: ETH_ADDRESS }, priority: 'fast' }, 'INVALID_AMOUNT'],
    [{ amount_usd: -5, destination: { ethereum_address: ETH_ADDRESS }, priority: 'fast' }, 'INVALID_AMOUNT'],
    [{ amount_usd: '10', destination: { ethereum_address: ETH_ADDRESS }, priority: 'fast' }, 'INVALID_AMOUNT'],
    [{ amount_usd: 1.0000001, destination: { ethereum_address: ETH_ADDRESS }, priority: 'fast' }, 'INVALID_AMOUNT'],
    [{ amount_usd: 1e12, destination: { ethereum_address: ETH_ADDRESS }, priority: 'fast' }, 'INVALID_AMOUNT'],
    [{ amount_usd: null, destination: { ethereum_address: ETH_ADDRESS }, priority: 'fast' }, 'INVALID_AMOUNT'],
    [{ amount_usd: 10, priority: 'fast' }, 'MISSING_DESTINATION'],
    [{ amount_usd: 10, destination: {}, priority: 'fast' }, 'MISSING_DESTINATION'],
    [{ amount_usd: 10, destination: { ethereum_address: '' }, priority: 'fast' }, 'MISSING_DESTINATION'],
    [{ amount_usd: 10, destination: { ethereum_address: ETH_ADDRESS } }, 'INVALID_PRIORITY'],
    [{ amount_usd: 10, destination: { ethereum_address: ETH_ADDRESS }, priority: 'cheap' }, 'INVALID_PRIORITY'],
    [{ amount_usd: 10, destination: { ethereum_address: '0x1234' }, priority: 'fast' }, 'INVALID_DESTINATION'],
    [{ amount_usd: 10, destination: { solana_address: 'not-base58-0OIl' }, priority: 'fast' }, 'INVALID_DESTINATION'],
    [{ amount_usd: 10, destination: { ethereum_address: 5 }, priority: 'fast' }, 'INVALID_DESTINATION'],
    // Several mistakes: the earliest field in the spec's order (amount, destination, priority) is answered.
    [{}, 'INVALID_AMOUNT'],
    [{ amount_usd: -1 }, 'INVALID_AMOUNT'],
    [{ amount_usd: 'ten', priority: 'cheap' }, 'INVALID_AMOUNT'],
    [{ amount_usd: 10 }, 'MISSING_DESTINATION'],
    [{ amount_usd: 10, destination: {}, priority: 'cheap' }, 'MISSING_DESTINATION'],
  ])('400 for %j -> %s', async (body, code) => {
    const res = await quote(body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.any(String), code });
  });

  it('400 INVALID_DESTINATION for the treasury\'s own address on either chain', async () => {
    for (const chain of ['ethereum', 'solana'] as const) {
      const treasury = t.ctx.adapters[chain]!.treasuryAddress();
      const res = await quote({ amount_usd: 10, destination: { [`${chain}_address`]: treasury }, priority: 'fast' });
      expect(res.statusCode, chain).toBe(400);
      expect(res.json().code, chain).toBe('INVALID_DESTINATION');
    }
  });

  it('the simulated chains follow decision 2: zero address and System Program refused, all-upper-case Ethereum taken', async () => {
    const zero = await quote({ amount_usd: 10, destination: { ethereum_address: `0x${'0'.repeat(40)}` }, priority: 'fast' });
    expect(zero.statusCode).toBe(400);
    expect(zero.json().code).toBe('INVALID_DESTINATION');
    const systemProgram = await quote({ amount_usd: 10, destination: { solana_address: '1'.repeat(32) }, priority: 'fast' });
    expect(systemProgram.statusCode).toBe(400);
    expect(systemProgram.json().code).toBe('INVALID_DESTINATION');
    // EIP-55: a checksum is carried by mixed case only; all upper case is as valid as all lower case.
    const upper = await quote({ amount_usd: 10, destination: { ethereum_address: `0x${ETH_ADDRESS.slice(2).toUpperCase()}` }, priority: 'fast' });
    expect(upper.statusCode, upper.body).toBe(201);
    const lower = await quote({ amount_usd: 10, destination: { ethereum_address: ETH_ADDRESS.toLowerCase() }, priority: 'fast' });
    expect(lower.statusCode, lower.body).toBe(201);
  });

  it('401 UNAUTHORIZED without a key', async () => {
    const res = await quote({ amount_usd: 10, destination: { ethereum_address: ETH_ADDRESS }, priority: 'fast' }, {});
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ statusCode: 401, error: 'Unauthorized', message: expect.any(String), code: 'UNAUTHORIZED' });
  });

  it('a failed request stores nothing', async () => {
    const before = await t.db.pool.query('SELECT COUNT(*)::int AS n FROM quotes');
    await quote({ amount_usd: -1, destination: { ethereum_address: ETH_ADDRESS }, priority: 'fast' });
    const after = await t.db.pool.query('SELECT COUNT(*)::int AS n FROM quotes');
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });
});
