import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { createPool } from '../../src/db/pool.js';
import { ERROR_CODES } from '../../src/domain/errors.js';
import { createTestContext, KEY, secondProcess, type TestContext } from '../helpers/context.js';
import { freePort } from '../helpers/process.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => t.close());

const shape = (statusCode: number, code: string) => ({ statusCode, error: expect.any(String), message: expect.any(String), code });

describe('every error uses the spec error body', () => {
  it('400 INVALID_JSON for malformed JSON', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/quotes', headers: { ...KEY, 'content-type': 'application/json' }, payload: '{"amount_usd": ' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual(shape(400, 'INVALID_JSON'));
  });

  it('413 PAYLOAD_TOO_LARGE for a body over the limit', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/quotes',
      headers: { ...KEY, 'content-type': 'application/json' },
      payload: JSON.stringify({ amount_usd: 1, pad: 'x'.repeat(70_000) }),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual(shape(413, 'PAYLOAD_TOO_LARGE'));
  });

  it('415 UNSUPPORTED_MEDIA_TYPE for a non-JSON body', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/quotes', headers: { ...KEY, 'content-type': 'text/plain' }, payload: 'amount=1' });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual(shape(415, 'UNSUPPORTED_MEDIA_TYPE'));
  });

  it('404 NOT_FOUND for an unknown route', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual(shape(404, 'NOT_FOUND'));
  });

  it('400 INVALID_IDEMPOTENCY_KEY for control characters, INVALID_QUOTE_ID for a non-string', async () => {
    const key = await t.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: 'quo_x', idempotency_key: 'a\u0000b' } });
    expect(key.json()).toEqual(shape(400, 'INVALID_IDEMPOTENCY_KEY'));
    const long = await t.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: 'quo_x', idempotency_key: 'k'.repeat(256) } });
    expect(long.json()).toEqual(shape(400, 'INVALID_IDEMPOTENCY_KEY'));
    const quote = await t.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: 12, idempotency_key: 'k' } });
    expect(quote.json()).toEqual(shape(400, 'INVALID_QUOTE_ID'));
  });

  it('404 for an id that cannot exist, never a 500', async () => {
    for (const url of ['/payment_intents/%00', '/payment_intents/pi_%27%3B', `/routes/debug/${'x'.repeat(200)}`]) {
      const res = await t.app.inject({ method: 'GET', url, headers: KEY });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(shape(404, 'PAYMENT_INTENT_NOT_FOUND'));
    }
    const tooLong = await t.app.inject({ method: 'GET', url: `/payment_intents/${'x'.repeat(400)}`, headers: KEY });
    expect(tooLong.json()).toEqual(shape(414, 'URI_TOO_LONG'));
  });

  it('POST /admin/chain-health validates with clear codes and applies chain defaults', async () => {
    const cases: [object, string][] = [
      [{ health_status: 'healthy' }, 'INVALID_CHAIN'],
      [{ chain: 'bitcoin', health_status: 'healthy' }, 'INVALID_CHAIN'],
      [{ chain: 'solana' }, 'INVALID_HEALTH_STATUS'],
      [{ chain: 'solana', health_status: 'fine' }, 'INVALID_HEALTH_STATUS'],
      [{ chain: 'solana', health_status: 'healthy', rpc_error_rate: 1.5 }, 'INVALID_CHAIN_HEALTH'],
      [{ chain: 'solana', health_status: 'healthy', rpc_error_rate: -0.1 }, 'INVALID_CHAIN_HEALTH'],
      [{ chain: 'solana', health_status: 'healthy', estimated_fee_usd: -1 }, 'INVALID_CHAIN_HEALTH'],
      [{ chain: 'solana', health_status: 'healthy', avg_confirmation_seconds: '3' }, 'INVALID_CHAIN_HEALTH'],
    ];
    for (const [payload, code] of cases) {
      const res = await t.app.inject({ method: 'POST', url: '/admin/chain-health', payload });
      expect(res.json(), JSON.stringify(payload)).toEqual(shape(400, code));
    }
    const ok = await t.app.inject({ method: 'POST', url: '/admin/chain-health', payload: { chain: 'ethereum', health_status: 'degraded' } });
    expect(ok.statusCode).toBe(201);
    expect(ok.json()).toMatchObject({ chain: 'ethereum', health_status: 'degraded', estimated_fee_usd: 1.5, avg_confirmation_seconds: 180, rpc_error_rate: 0.01 });
    const overview = await t.app.inject({ method: 'GET', url: '/admin/overview' });
    expect(overview.json().chain_health.find((h: { chain: string }) => h.chain === 'ethereum').health_status).toBe('degraded');
  });

  it('every error code the code can emit is documented in docs/errors.md', async () => {
    const doc = await readFile(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    for (const code of Object.keys(ERROR_CODES)) expect(doc, code).toContain(`\`${code}\``);
  });

  it('GET /health answers 200 without a key; /openapi.json describes the routes', async () => {
    const health = await t.app.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
    const spec = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(Object.keys(spec.paths)).toEqual(expect.arrayContaining(['/quotes', '/payment_intents', '/payment_intents/{id}', '/admin/overview']));
  });

  it('503 SERVICE_UNAVAILABLE with Retry-After, not a 500, while the database cannot be reached', async () => {
    // A real pool to a port where no server listens: every connection is refused, as during a restart.
    const pool = createPool(`postgres://postgres@127.0.0.1:${await freePort()}/none`, 2);
    const app = await buildApp(secondProcess(t.ctx, { pool }), { merchant: true, admin: true, readiness: { ready: true } });
    try {
      const quote = await app.inject({
        method: 'POST',
        url: '/quotes',
        headers: KEY,
        payload: { amount_usd: 5, destination: { solana_address: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM' }, priority: 'fast' },
      });
      expect(quote.statusCode, quote.body).toBe(503);
      expect(quote.json()).toEqual({ ...shape(503, 'SERVICE_UNAVAILABLE'), error: 'Service Unavailable' });
      expect(quote.headers['retry-after']).toBe('1');
      expect(quote.body).not.toContain('ECONNREFUSED'); // the detail stays in the logs
      const overview = await app.inject({ method: 'GET', url: '/admin/overview' });
      expect(overview.statusCode).toBe(503);
      const health = await app.inject({ method: 'GET', url: '/health' });
      expect(health.json()).toEqual({ ...shape(503, 'SERVICE_UNAVAILABLE'), error: 'Service Unavailable' });
    } finally {
      await app.close();
      await pool.end();
    }
  });
});
