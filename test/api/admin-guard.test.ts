// The checks in front of /admin/*: Host allowlist (DNS rebinding), Origin on state-changing requests (cross-site
// POSTs), and the optional ADMIN_TOKEN. A refused request answers in the error body and changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultAdminHosts, hostnameOf } from '../../src/api/admin-guard.js';
import { insertEvent } from '../../src/db/queries/webhook-events.js';
import { createTestContext, type TestContext } from '../helpers/context.js';

const TOKEN = 'b3f1c9e2a7d84f60a1e5c7b9d2f4086e';
let t: TestContext;
let guarded: TestContext;
beforeAll(async () => {
  t = await createTestContext();
  guarded = await createTestContext({ ADMIN_TOKEN: TOKEN, ADMIN_ALLOWED_HOSTS: 'ops.internal, 10.0.0.7' });
});
afterAll(async () => {
  await t.close();
  await guarded.close();
});

const snapshots = async (ctx: TestContext) => (await ctx.db.pool.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM chain_health_snapshots')).rows[0]!.n;
const chainHealth = { chain: 'solana', health_status: 'degraded' };

describe('Host allowlist', () => {
  it('answers localhost names (inject sends Host: localhost:80) and refuses any other Host with 403', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/admin/overview' })).statusCode).toBe(200);
    for (const host of ['127.0.0.1:3000', '[::1]:3000', 'LOCALHOST', 'localhost.']) {
      expect((await t.app.inject({ method: 'GET', url: '/admin/overview', headers: { host } })).statusCode, host).toBe(200);
    }
    for (const host of ['evil.example', 'evil.example:80', 'localhost.evil.example', '127.0.0.1.nip.io']) {
      const res = await t.app.inject({ method: 'GET', url: '/admin/overview', headers: { host } });
      expect(res.statusCode, host).toBe(403);
      expect(res.json()).toEqual({ statusCode: 403, error: 'Forbidden', message: expect.any(String), code: 'HOST_NOT_ALLOWED' });
    }
  });

  it('refuses a state-changing request under a foreign Host before anything runs', async () => {
    const before = await snapshots(t);
    const res = await t.app.inject({ method: 'POST', url: '/admin/chain-health', headers: { host: 'evil.example' }, payload: chainHealth });
    expect(res.statusCode).toBe(403);
    expect(await snapshots(t)).toBe(before);
  });

  it('ADMIN_ALLOWED_HOSTS replaces the default list', async () => {
    const ok = await guarded.app.inject({ method: 'GET', url: '/admin/overview', headers: { host: 'ops.internal:3001', authorization: `Bearer ${TOKEN}` } });
    expect(ok.statusCode).toBe(200);
    const local = await guarded.app.inject({ method: 'GET', url: '/admin/overview', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(local.statusCode).toBe(403);
    expect(local.json().code).toBe('HOST_NOT_ALLOWED');
  });

  it("defaults to localhost names plus the listener's own address (every interface's when bound to all)", () => {
    expect(defaultAdminHosts('127.0.0.1')).toEqual(expect.arrayContaining(['localhost', '127.0.0.1', '::1']));
    expect(defaultAdminHosts('10.1.2.3')).toContain('10.1.2.3');
    expect(defaultAdminHosts('0.0.0.0')).toEqual(expect.arrayContaining(['localhost', '127.0.0.1']));
    expect(hostnameOf('[::1]:80')).toBe('::1');
    expect(hostnameOf('Example.COM.:8080')).toBe('example.com');
    expect(hostnameOf('')).toBeNull();
  });

  it('the merchant API and /health are not behind it', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/health', headers: { host: 'api.example' } })).statusCode).toBe(200);
  });
});

describe('Origin check on state-changing admin requests', () => {
  it('refuses a cross-site POST (Origin of another site, Origin null, or Sec-Fetch-Site cross-site) and changes nothing', async () => {
    const id = await insertEvent(t.db.pool, { merchantId: 'mer_test', paymentIntentId: null, type: 'webhook.test', payload: {}, at: t.clock.now() });
    // A merchant without a webhook_url: the event is stored; redelivery would need a URL, so mark it failed by hand.
    await t.db.pool.query("UPDATE webhook_events SET status = 'failed' WHERE id = $1", [id]);
    const before = await snapshots(t);
    for (const headers of [
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { origin: 'http://localhost:8080' }, // another port is another origin
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ]) {
      const redeliver = await t.app.inject({ method: 'POST', url: `/admin/webhook-events/${id}/redeliver`, headers });
      expect(redeliver.statusCode, JSON.stringify(headers)).toBe(403);
      expect(redeliver.json()).toEqual({ statusCode: 403, error: 'Forbidden', message: expect.any(String), code: 'CROSS_SITE_REQUEST' });
      const health = await t.app.inject({ method: 'POST', url: '/admin/chain-health', headers, payload: chainHealth });
      expect(health.statusCode).toBe(403);
    }
    expect(await snapshots(t)).toBe(before);
    expect((await t.db.pool.query('SELECT status FROM webhook_events WHERE id = $1', [id])).rows[0].status).toBe('failed');
  });

  it('lets same-origin browsers, and clients without browser headers, through; reads are not checked', async () => {
    for (const headers of [{}, { origin: 'http://localhost:80' }, { 'sec-fetch-site': 'same-origin' }, { 'sec-fetch-site': 'none' }]) {
      const res = await t.app.inject({ method: 'POST', url: '/admin/chain-health', headers, payload: chainHealth });
      expect(res.statusCode, JSON.stringify(headers)).toBe(201);
    }
    const read = await t.app.inject({ method: 'GET', url: '/admin/overview', headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' } });
    expect(read.statusCode).toBe(200); // the browser's same-origin policy keeps the answer from the page
  });
});

describe('ADMIN_TOKEN', () => {
  it('401 without the bearer token or with a wrong one; 200 with it', async () => {
    const headers = { host: 'ops.internal' };
    const missing = await guarded.app.inject({ method: 'GET', url: '/admin/payments', headers });
    expect(missing.statusCode).toBe(401);
    expect(missing.headers['www-authenticate']).toMatch(/^Bearer/);
    expect(missing.json()).toEqual({ statusCode: 401, error: 'Unauthorized', message: expect.any(String), code: 'UNAUTHORIZED' });
    for (const url of ['/admin/payments', '/admin/overview']) {
      for (const authorization of [`Bearer ${TOKEN.slice(0, -1)}x`, `Bearer ${TOKEN}${TOKEN}`, TOKEN, `Basic ${TOKEN}`]) {
        expect((await guarded.app.inject({ method: 'GET', url, headers: { ...headers, authorization } })).statusCode, `${url} ${authorization}`).toBe(401);
      }
    }
    const ok = await guarded.app.inject({ method: 'GET', url: '/admin/payments', headers: { ...headers, authorization: `bearer ${TOKEN}` } });
    expect(ok.statusCode).toBe(200);
  });

  it("is not asked of the spec's four admin endpoints, which need no authentication (decision 96)", async () => {
    const headers = { host: 'ops.internal' };
    for (const url of ['/admin/overview', '/admin/route-distribution', '/admin/failures']) {
      expect((await guarded.app.inject({ method: 'GET', url, headers })).statusCode, url).toBe(200);
    }
    const before = await snapshots(guarded);
    expect((await guarded.app.inject({ method: 'POST', url: '/admin/chain-health', headers, payload: chainHealth })).statusCode).toBe(201);
    expect(await snapshots(guarded)).toBe(before + 1);
  });

  it('is not asked of the merchant API', async () => {
    expect((await guarded.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  });

  it("is not asked of the console's page and scripts (they hold no data; the page sends the token), but of its data", async () => {
    const headers = { host: 'ops.internal' };
    expect((await guarded.app.inject({ method: 'GET', url: '/console', headers })).statusCode).toBe(200);
    for (const url of ['/admin/payments', '/admin/events', '/metrics']) {
      expect((await guarded.app.inject({ method: 'GET', url, headers })).statusCode, url).toBe(401);
    }
    // The Host check still holds for the page (DNS rebinding).
    expect((await guarded.app.inject({ method: 'GET', url: '/console', headers: { host: 'evil.example' } })).statusCode).toBe(403);
    // A path that only starts like the console is not the console.
    expect((await guarded.app.inject({ method: 'GET', url: '/consolex', headers })).statusCode).not.toBe(200);
  });
});
