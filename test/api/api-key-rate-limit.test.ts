// Merchant requests refused 401 (a missing, unknown or revoked X-Api-Key) count against their client address (decision
// 224), from the outside: real HTTP on a listening port, in production (only issued keys work), each client on its own
// loopback address (127.0.0.x). Over the limit the refusal is 429 RATE_LIMITED; another address is unaffected;
// X-Forwarded-For changes nothing (no trustProxy); a valid key's requests and their own merchant limit are as they
// were (decision 93); every 401 carries exactly the headers /openapi.json declares for it.
import type { AddressInfo } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calls, expectDeclared, expectRateLimited, type DeclaredHeaders } from '../helpers/rate-limit.js';
import { createApiKey, revokeApiKey } from '../../src/core/merchants/api-keys.js';
import { createMerchant } from '../../src/core/merchants/merchants.js';
import { apiKeyFailureRateLimitKey } from '../../src/api/rate-limit.js';
import { createTestContext, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { testAudit } from '../helpers/audit.js';
import { send, type Answer } from '../helpers/peer.js';

const FAILURE_LIMIT = 4;
const MERCHANT_LIMIT = 3;

let t: TestContext;
let port: number;
let document: DeclaredHeaders;
let valid: string;
let revoked: string;

const call = (from: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<Answer> =>
  send(from, '127.0.0.1', port, method, path, headers, body);
const quote = (from: string, headers: Record<string, string> = {}) =>
  call(from, 'POST', '/quotes', headers, { amount_usd: 1, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' });

const unauthorized = (answer: Answer) => [answer.status, answer.body.code];

beforeAll(async () => {
  t = await createTestContext(
    {
      NODE_ENV: 'production',
      API_KEY_SALT: 'production-test-salt-5f0c2b8e91d7a4c3',
      WEBHOOK_SIGNING_SECRET: 'whsec-test-7d2e9a1c4b8f0e6d3a5c7b9e1f2d4a6c',
      AUDIT_KEY: '6e2b9d4f1a8c3e7b5d0f2a9c4e6b8d1f3a5c7e9b0d2f',
      RATE_LIMIT_PER_MINUTE: String(MERCHANT_LIMIT),
      API_KEY_FAILURE_RATE_LIMIT_PER_MINUTE: String(FAILURE_LIMIT),
    },
    { admin: false },
  );
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  port = (t.app.server.address() as AddressInfo).port;
  document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  const { merchant, apiKey } = await createMerchant(t.db.pool, t.ctx.config, { name: 'Acme', webhookUrl: null }, t.clock.now(), testAudit());
  valid = apiKey;
  revoked = (await createApiKey(t.db.pool, t.ctx.config, merchant.id, t.clock.now(), testAudit())).apiKey;
  await revokeApiKey(t.db.pool, t.ctx.config, merchant.id, revoked, t.clock.now(), testAudit());
});
afterAll(async () => {
  await t.close();
});

describe('merchant requests without a valid API key, over HTTP', () => {
  it('count per address: over the limit they are 429 RATE_LIMITED, another address is unaffected, and the next minute opens again', async () => {
    const wrong = await calls(FAILURE_LIMIT, (i) => quote('127.0.0.2', { 'x-api-key': `sr_live_guess-${i}` }));
    expect(wrong.map(unauthorized)).toEqual(Array(FAILURE_LIMIT).fill([401, 'UNAUTHORIZED']));
    expect(wrong.map((a) => a.headers['x-ratelimit-remaining'])).toEqual(['3', '2', '1', '0']);
    expect(wrong[0]!.headers).toMatchObject({ 'x-ratelimit-limit': String(FAILURE_LIMIT), 'x-ratelimit-reset': '60' });
    for (const a of wrong) expectDeclared(document, a, '/quotes', 'post');

    // Over the limit, whatever the refusal would have been: a guess, no key, a revoked key.
    for (const headers of [{ 'x-api-key': 'sr_live_one-more' }, {}, { 'x-api-key': revoked }] as Array<Record<string, string>>) {
      const limited = await quote('127.0.0.2', headers);
      expectRateLimited(limited, FAILURE_LIMIT);
      expectDeclared(document, limited, '/quotes', 'post');
    }

    const elsewhere = await quote('127.0.0.3', { 'x-api-key': 'sr_live_guess' });
    expect([...unauthorized(elsewhere), elsewhere.headers['x-ratelimit-remaining']]).toEqual([401, 'UNAUTHORIZED', '3']);

    t.clock.advance(60_000);
    expect(unauthorized(await quote('127.0.0.2', { 'x-api-key': 'sr_live_guess' }))).toEqual([401, 'UNAUTHORIZED']);
  });

  it('is not evaded by a forged X-Forwarded-For (trustProxy is off: the socket is the address)', async () => {
    const forged = await calls(FAILURE_LIMIT + 1, (i) => quote('127.0.0.4', { 'x-api-key': 'sr_live_guess', 'x-forwarded-for': `203.0.113.${i + 1}` }));
    expect(forged.map((a) => a.status)).toEqual([...Array(FAILURE_LIMIT).fill(401), 429]);
  });

  it('changes nothing for a valid key, even from an address over the limit: its own merchant limit, counted as before', async () => {
    await calls(FAILURE_LIMIT + 1, () => quote('127.0.0.5'));
    expect((await quote('127.0.0.5')).status).toBe(429);

    const answers = await calls(MERCHANT_LIMIT + 1, () => quote('127.0.0.5', { 'x-api-key': valid }));
    expect(answers.map((a) => a.status)).toEqual([...Array(MERCHANT_LIMIT).fill(201), 429]);
    expect(answers.map((a) => [a.headers['x-ratelimit-limit'], a.headers['x-ratelimit-remaining']])).toEqual([
      ['3', '2'],
      ['3', '1'],
      ['3', '0'],
      ['3', '0'],
    ]);
    expectRateLimited(answers[MERCHANT_LIMIT]!, MERCHANT_LIMIT);
    for (const a of answers) expectDeclared(document, a, '/quotes', 'post');
    // The merchant's refusals and the address's are two counts: over one, the other is untouched.
    const refused = await quote('127.0.0.6');
    expect([refused.status, refused.headers['x-ratelimit-remaining']]).toEqual([401, '3']);
  });

  it('every merchant operation\'s 401 carries the headers its document declares', async () => {
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, operation]) => operation.tags?.includes('merchant'))
        .map(([method]) => ({ path, method })),
    );
    expect(operations.length).toBeGreaterThanOrEqual(7);
    for (const [i, { path, method }] of operations.entries()) {
      const url = path.replace(/\{[^}]+\}/g, 'pi_unknown');
      const refusals = [
        await call(`127.0.1.${i + 1}`, method.toUpperCase(), url),
        await call(`127.0.1.${i + 1}`, method.toUpperCase(), url, { 'x-api-key': 'sr_live_guess' }),
        await call(`127.0.1.${i + 1}`, method.toUpperCase(), url, { 'x-api-key': revoked }),
      ];
      expect(refusals.map((a) => [path, method, a.status, a.headers['x-ratelimit-remaining']])).toEqual(
        ['3', '2', '1'].map((remaining) => [path, method, 401, remaining]),
      );
      for (const a of refusals) expectDeclared(document, a, path, method);
    }
  });
});

describe('the address a refusal counts against', () => {
  const keyOf = (ip: string) => apiKeyFailureRateLimitKey({ ip } as FastifyRequest);

  it('is an IPv4 address as it is, an IPv6 one by its /64', () => {
    expect(keyOf('203.0.113.7')).not.toBe(keyOf('203.0.113.8'));
    expect(keyOf('2001:db8:1:2::1')).toBe(keyOf('2001:db8:1:2:ffff:ffff:ffff:ffff'));
    expect(keyOf('2001:db8:1:2::1')).not.toBe(keyOf('2001:db8:1:3::1'));
  });
});
