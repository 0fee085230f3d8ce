// Rate limits on the admin routes and /health (decision 217), from the outside: real HTTP on a listening port, each
// client on its own loopback address (127.0.0.x). An admin request counts against its operator, or its address
// without one, refusals included; /health counts per address; X-Forwarded-For changes nothing (no trustProxy); the
// merchant limit is as it was (decision 93); every answer carries exactly the headers /openapi.json declares for it.
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { calls, expectDeclared, expectRateLimited, type DeclaredHeaders } from '../helpers/rate-limit.js';
import { createOperator } from '../../src/core/operators/operators.js';
import { createTestContext, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { testAudit } from '../helpers/audit.js';

const ADMIN_LIMIT = 5;
const HEALTH_LIMIT = 4;
const MERCHANT_LIMIT = 3;

let t: TestContext;
let port: number;
let document: DeclaredHeaders;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** One request on a new connection from `from` (a loopback address of its own). */
function call(from: string, method: string, path: string, headers: Record<string, string> = {}, payload?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = payload === undefined ? undefined : JSON.stringify(payload);
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        localAddress: from,
        agent: false,
        headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

beforeAll(async () => {
  t = await createTestContext(
    { ADMIN_RATE_LIMIT_PER_MINUTE: String(ADMIN_LIMIT), HEALTH_RATE_LIMIT_PER_MINUTE: String(HEALTH_LIMIT), RATE_LIMIT_PER_MINUTE: String(MERCHANT_LIMIT) },
    { admin: true },
  );
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  port = (t.app.server.address() as AddressInfo).port;
  document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
});
afterAll(async () => {
  await t.close();
});

describe('the admin rate limit, over HTTP', () => {
  it('answers the request over the limit from one address 429 RATE_LIMITED with the headers; another address is unaffected', async () => {
    const ok = await calls(ADMIN_LIMIT, () => call('127.0.0.2', 'GET', '/admin/overview'));
    expect(ok.map((a) => a.status)).toEqual(Array(ADMIN_LIMIT).fill(200));
    expect(ok.map((a) => a.headers['x-ratelimit-remaining'])).toEqual(['4', '3', '2', '1', '0']);
    expect(ok[0]!.headers).toMatchObject({ 'x-ratelimit-limit': String(ADMIN_LIMIT), 'x-ratelimit-reset': '60' });
    for (const a of ok) expectDeclared(document, a, '/admin/overview', 'get');

    const limited = await call('127.0.0.2', 'GET', '/admin/overview');
    expectRateLimited(limited, ADMIN_LIMIT);
    expectDeclared(document, limited, '/admin/overview', 'get');
    // A state-changing open route of the same caller is over the same limit, and changes nothing.
    const insert = await call('127.0.0.2', 'POST', '/admin/chain-health', {}, { chain: 'solana', health_status: 'healthy', latency_ms: 100 });
    expectRateLimited(insert, ADMIN_LIMIT);

    expect((await call('127.0.0.3', 'GET', '/admin/overview')).status).toBe(200);
  });

  it('is not evaded by a forged X-Forwarded-For (trustProxy is off: the socket is the address)', async () => {
    let n = 0;
    const forged = await calls(ADMIN_LIMIT + 1, async () => call('127.0.0.4', 'GET', '/admin/failures', { 'x-forwarded-for': `203.0.113.${++n}` }));
    expect(forged.map((a) => a.status)).toEqual([...Array(ADMIN_LIMIT).fill(200), 429]);
  });

  it('counts per operator: one operator over its limit leaves another on the same address unaffected, and follows its token to another address', async () => {
    const [a, b] = await Promise.all(
      (['first', 'second'] as const).map(async (name) => (await createOperator(t.db.pool, t.ctx.config, { name, role: 'viewer' }, t.clock.now(), testAudit())).token),
    );
    const as = (token: string) => ({ authorization: `Bearer ${token}` });
    const first = await calls(ADMIN_LIMIT, () => call('127.0.0.5', 'GET', '/admin/payments', as(a!)));
    expect(first.map((x) => x.status)).toEqual(Array(ADMIN_LIMIT).fill(200));
    expectDeclared(document, first[0]!, '/admin/payments', 'get');
    const limited = await call('127.0.0.5', 'GET', '/admin/payments', as(a!));
    expectRateLimited(limited, ADMIN_LIMIT);
    expectDeclared(document, limited, '/admin/payments', 'get');

    expect((await call('127.0.0.5', 'GET', '/admin/payments', as(b!))).status).toBe(200);
    expect((await call('127.0.0.6', 'GET', '/admin/payments', as(a!))).status).toBe(429);
    // Refused for its role, the operator is still counted under its name.
    const refused = await call('127.0.0.7', 'POST', '/admin/payments/pi_unknown/cancel', as(b!));
    expect(refused.status).toBe(403);
    expect(refused.headers['x-ratelimit-remaining']).toBe(String(ADMIN_LIMIT - 2));
    expectDeclared(document, refused, '/admin/payments/{id}/cancel', 'post');

    t.clock.advance(60_000);
    expect((await call('127.0.0.5', 'GET', '/admin/payments', as(a!))).status).toBe(200);
  });

  it('counts refusals too, by address: a wrong token and a Host the admin API does not answer to', async () => {
    const wrong = await calls(ADMIN_LIMIT - 1, () => call('127.0.0.8', 'GET', '/admin/payments', { authorization: 'Bearer not-a-token' }));
    expect(wrong.map((a) => a.status)).toEqual(Array(ADMIN_LIMIT - 1).fill(401));
    expectDeclared(document, wrong[0]!, '/admin/payments', 'get');
    const badHost = await call('127.0.0.8', 'GET', '/admin/payments', { host: 'evil.example' });
    expect([badHost.status, (badHost.body as { code: string }).code, badHost.headers['x-ratelimit-remaining']]).toEqual([403, 'HOST_NOT_ALLOWED', '0']);
    expectDeclared(document, badHost, '/admin/payments', 'get');
    expectRateLimited(await call('127.0.0.8', 'GET', '/admin/payments', { authorization: 'Bearer not-a-token' }), ADMIN_LIMIT);
  });
});

describe('the /health rate limit, over HTTP', () => {
  it('limits each address, whatever X-Forwarded-For says, and opens again with the next minute', async () => {
    const probes = await calls(HEALTH_LIMIT, () => call('127.0.0.9', 'GET', '/health'));
    expect(probes.map((a) => a.status)).toEqual(Array(HEALTH_LIMIT).fill(200));
    for (const a of probes) expectDeclared(document, a, '/health', 'get');
    const limited = await call('127.0.0.9', 'GET', '/health', { 'x-forwarded-for': '198.51.100.7' });
    expectRateLimited(limited, HEALTH_LIMIT);
    expectDeclared(document, limited, '/health', 'get');
    expect((await call('127.0.0.10', 'GET', '/health')).status).toBe(200);
    t.clock.advance(60_000);
    expect((await call('127.0.0.9', 'GET', '/health')).status).toBe(200);
  });
});

describe('the merchant rate limit, over HTTP', () => {
  it('is unchanged: per merchant, whatever the address, and apart from the admin and /health counts', async () => {
    const quote = (from: string) =>
      call(from, 'POST', '/quotes', { 'x-api-key': 'any-key-in-development' }, { amount_usd: 1, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' });
    const answers = [await quote('127.0.0.11'), await quote('127.0.0.12'), await quote('127.0.0.13'), await quote('127.0.0.14')];
    expect(answers.map((a) => a.status)).toEqual([201, 201, 201, 429]);
    expectRateLimited(answers[3]!, MERCHANT_LIMIT);
    for (const a of answers) expectDeclared(document, a, '/quotes', 'post');
    expect((await call('127.0.0.11', 'GET', '/admin/overview')).status).toBe(200);
    expect((await call('127.0.0.11', 'GET', '/health')).status).toBe(200);
  });
});

describe('Access-Control-Allow-Origin', () => {
  it('names the origin the answer was served from on every answer, never the Origin that asked', async () => {
    const own = `http://127.0.0.1:${port}`;
    const answers = [
      await call('127.0.0.15', 'GET', '/health', { origin: 'https://evil.example' }),
      await call('127.0.0.15', 'GET', '/admin/overview', { origin: 'https://evil.example' }),
      await call('127.0.0.15', 'GET', '/payment_intents/pi_unknown', { origin: 'null' }),
      await call('127.0.0.15', 'GET', '/no/such/route'),
      await call('127.0.0.15', 'OPTIONS', '/quotes', { origin: 'https://evil.example', 'access-control-request-method': 'POST' }),
    ];
    expect(answers.map((a) => [a.status, a.headers['access-control-allow-origin']])).toEqual([
      [200, own],
      [200, own],
      [401, own],
      [404, own],
      [404, own],
    ]);
    expect(answers[4]!.headers['access-control-allow-methods']).toBeUndefined();
  });

  it('names the listener\'s own address when the request has no Host (HTTP/1.0)', async () => {
    const head = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = connect({ host: '127.0.0.1', port, localAddress: '127.0.0.16' }, () => socket.write('GET /health HTTP/1.0\r\n\r\n'));
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(head.toLowerCase()).toContain(`access-control-allow-origin: http://127.0.0.1:${port}\r\n`);
  });
});
