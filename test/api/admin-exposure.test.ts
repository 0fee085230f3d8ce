// Who can reach /admin/* over a real socket (issue 24, item 1). The review withdrew treasury funds from another host
// through a default production start: no ADMIN_PORT, no ADMIN_TOKEN, the public listener on every interface. These
// requests come from this machine's own non-loopback address (the peer the service sees is that address, whatever the
// headers say) and from loopback, to listeners started the way `serve` starts them.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startRuntime, type Runtime } from '../../src/runtime.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { nonLoopbackAddress, send } from '../helpers/peer.js';
import { freePort, killAll, runCommand, startService, waitHealthy, type ServiceProcess } from '../helpers/process.js';

const SALT = 'f0c1d2e3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a59687';
const SIGNING = '9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f3021';
const TOKEN = '4c1f9e7d2b8a6053e1f7c9d4b2a80e6f3d5c7b9a1e2f4d6c';
const SOL_TO = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const PEER = nonLoopbackAddress();
const PRODUCTION = { NODE_ENV: 'production', API_KEY_SALT: SALT, WEBHOOK_SIGNING_SECRET: SIGNING, AUDIT_KEY: '6e2b9d4f1a8c3e7b5d0f2a9c4e6b8d1f3a5c7e9b0d2f', LOG_LEVEL: 'silent' };

/** Headers a forger sends to look local: none of them may count. */
const forged = (port: number) => ({
  host: `localhost:${port}`,
  origin: `http://localhost:${port}`,
  'x-forwarded-for': '127.0.0.1',
  'x-real-ip': '127.0.0.1',
  forwarded: 'for=127.0.0.1',
});

const withdrawal = (key: string) => ({ chain: 'solana', to: SOL_TO, amount_usdc: '12.5', idempotency_key: key });

async function withdrawals(db: TestDatabase): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>("SELECT COUNT(*)::int AS n FROM payment_intents WHERE kind = 'withdrawal'");
  return rows[0]!.n;
}

/** Every table an admin action writes, counted, so a refused request is seen to change nothing. */
async function footprint(db: TestDatabase): Promise<string> {
  const { rows } = await db.pool.query<{ t: string }>(
    `SELECT concat_ws(',', (SELECT COUNT(*) FROM payment_intents), (SELECT COUNT(*) FROM payment_intent_transitions),
       (SELECT COUNT(*) FROM ledger_transactions), (SELECT COUNT(*) FROM chain_health_snapshots),
       (SELECT COUNT(*) FROM merchant_policies), (SELECT COUNT(*) FROM merchant_addresses),
       (SELECT md5(string_agg(id || status, ',' ORDER BY id)) FROM webhook_events)) AS t`,
  );
  return rows[0]!.t;
}

const OPEN = [
  ['GET', '/admin/overview'],
  ['GET', '/admin/route-distribution'],
  ['GET', '/admin/failures'],
  ['POST', '/admin/chain-health'],
] as const;
const chainHealth = { chain: 'solana', health_status: 'healthy' };

interface Started {
  db: TestDatabase;
  runtime: Runtime;
  publicPort: number;
  adminPort: number | null;
}
const started: Started[] = [];

async function start(env: Record<string, string>): Promise<Started> {
  const db = await createTestDatabase();
  const config = loadConfig({ ...PRODUCTION, PORT: '0', HOST: '0.0.0.0', ...env, DATABASE_URL: db.url });
  const runtime = await startRuntime(config, { api: true, workers: false }, { log: pino({ level: 'silent' }) });
  const portOf = (url: string | undefined) => (url === undefined ? null : Number(new URL(url).port));
  const s = { db, runtime, publicPort: portOf(runtime.addresses.public)!, adminPort: portOf(runtime.addresses.admin) };
  started.push(s);
  return s;
}

afterAll(async () => {
  for (const s of started) {
    await s.runtime.stop();
    await s.db.drop();
  }
});

/** Every admin route the app documents, with its parameters filled in, plus the undocumented ones. */
async function adminRoutes(port: number): Promise<[string, string][]> {
  const doc = (await send('127.0.0.1', '127.0.0.1', port, 'GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
  const routes: [string, string][] = [['GET', '/admin/events'], ['GET', '/metrics']];
  for (const [path, operations] of Object.entries(doc.paths)) {
    if (!path.startsWith('/admin/')) continue;
    const filled = path.replace('{chain}', 'solana').replace('{address}', SOL_TO).replace(/\{[a-z_]+\}/g, 'pi_0000000000000000');
    for (const method of Object.keys(operations)) routes.push([method.toUpperCase(), filled]);
  }
  return routes;
}

const isOpen = (method: string, path: string) => OPEN.some(([m, p]) => m === method && p === path);

describe('production, ADMIN_PORT and ADMIN_TOKEN unset (the documented default)', () => {
  let s: Started;
  beforeAll(async () => {
    s = await start({});
  });

  it('refuses the reviewed withdrawal from another address, whatever its Host, Origin or forwarding headers', async () => {
    const before = await withdrawals(s.db);
    const res = await send(PEER, PEER, s.publicPort, 'POST', '/admin/withdrawals', forged(s.publicPort), withdrawal('review-1'));
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ statusCode: 401, error: 'Unauthorized', message: expect.stringContaining('ADMIN_TOKEN'), code: 'UNAUTHORIZED' });
    expect(await withdrawals(s.db)).toBe(before);
  });

  it('refuses it from loopback too: in production every admin action needs credentials', async () => {
    const res = await send('127.0.0.1', '127.0.0.1', s.publicPort, 'POST', '/admin/withdrawals', {}, withdrawal('review-2'));
    expect(res.status).toBe(401);
    expect(await withdrawals(s.db)).toBe(0);
  });

  it('refuses every admin route but the spec four without credentials, from both peers, and changes nothing', async () => {
    const routes = (await adminRoutes(s.publicPort)).filter(([m, p]) => !isOpen(m, p));
    // The money movers the review named are among them.
    for (const path of ['/admin/withdrawals', '/admin/payments/{id}/resolve', '/admin/payments/{id}/cancel', '/admin/payments/{id}/refund']) {
      expect(routes.map(([, p]) => p)).toContain(path.replace('{id}', 'pi_0000000000000000'));
    }
    expect(routes.some(([m, p]) => m === 'POST' && p.endsWith('/approve'))).toBe(true);
    expect(routes.some(([m, p]) => m === 'POST' && p.endsWith('/addresses'))).toBe(true);
    expect(routes.some(([m, p]) => m === 'DELETE' && p.includes('/addresses/'))).toBe(true);
    const before = await footprint(s.db);
    for (const [method, path] of routes) {
      for (const [from, headers] of [[PEER, forged(s.publicPort)], ['127.0.0.1', {}]] as const) {
        const body = method === 'GET' || method === 'DELETE' ? undefined : { resolution: 'failed', force: true, chain: 'solana', address: SOL_TO };
        const res = await send(from, from, s.publicPort, method, path, headers, body);
        expect(res.status, `${method} ${path} from ${from}`).toBe(401);
        expect(res.body.code, `${method} ${path}`).toBe('UNAUTHORIZED');
      }
    }
    expect(await footprint(s.db)).toBe(before);
  });

  it('answers the spec four without credentials from loopback, and not from another address', async () => {
    for (const [method, path] of OPEN) {
      const body = method === 'POST' ? chainHealth : undefined;
      const local = await send('127.0.0.1', '127.0.0.1', s.publicPort, method, path, {}, body);
      expect(local.status, `${method} ${path} from loopback`).toBe(method === 'POST' ? 201 : 200);
      const before = await footprint(s.db);
      const remote = await send(PEER, PEER, s.publicPort, method, path, forged(s.publicPort), body);
      expect(remote.status, `${method} ${path} from ${PEER}`).toBe(403);
      expect(remote.body.code).toBe('ADMIN_NOT_EXPOSED');
      expect(remote.body.message).toContain('ADMIN_EXPOSE_OPEN_ENDPOINTS');
      expect(await footprint(s.db)).toBe(before);
    }
  });

  it('keeps the merchant API and /health open on the public listener', async () => {
    expect((await send(PEER, PEER, s.publicPort, 'GET', '/health')).status).toBe(200);
    expect((await send(PEER, PEER, s.publicPort, 'POST', '/quotes', { 'x-api-key': 'nope' }, {})).status).toBe(401);
  });
});

describe('production with ADMIN_TOKEN', () => {
  let s: Started;
  beforeAll(async () => {
    s = await start({ ADMIN_TOKEN: TOKEN });
  });

  it('takes a withdrawal from another address with the token, and refuses it without or with a wrong one', async () => {
    const bearer = { ...forged(s.publicPort), authorization: `Bearer ${TOKEN}` };
    expect((await send(PEER, PEER, s.publicPort, 'POST', '/admin/withdrawals', forged(s.publicPort), withdrawal('t-1'))).status).toBe(401);
    const wrong = { ...forged(s.publicPort), authorization: `Bearer ${TOKEN.slice(1)}x` };
    expect((await send(PEER, PEER, s.publicPort, 'POST', '/admin/withdrawals', wrong, withdrawal('t-2'))).status).toBe(401);
    expect(await withdrawals(s.db)).toBe(0);
    const ok = await send(PEER, PEER, s.publicPort, 'POST', '/admin/withdrawals', bearer, withdrawal('t-3'));
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(await withdrawals(s.db)).toBe(1);
  });

  it('answers the spec four from loopback without the token, from another address only with it', async () => {
    expect((await send('127.0.0.1', '127.0.0.1', s.publicPort, 'GET', '/admin/overview')).status).toBe(200);
    expect((await send(PEER, PEER, s.publicPort, 'GET', '/admin/overview', forged(s.publicPort))).status).toBe(403);
    const bearer = { ...forged(s.publicPort), authorization: `Bearer ${TOKEN}` };
    expect((await send(PEER, PEER, s.publicPort, 'GET', '/admin/overview', bearer)).status).toBe(200);
  });
});

describe('production with ADMIN_EXPOSE_OPEN_ENDPOINTS=on', () => {
  it('answers the spec four from another address, and still refuses every other admin route', async () => {
    const s = await start({ ADMIN_EXPOSE_OPEN_ENDPOINTS: 'on' });
    for (const [method, path] of OPEN) {
      const res = await send(PEER, PEER, s.publicPort, method, path, forged(s.publicPort), method === 'POST' ? chainHealth : undefined);
      expect(res.status, `${method} ${path}`).toBe(method === 'POST' ? 201 : 200);
    }
    expect((await send(PEER, PEER, s.publicPort, 'POST', '/admin/withdrawals', forged(s.publicPort), withdrawal('o-1'))).status).toBe(401);
    expect(await withdrawals(s.db)).toBe(0);
  });
});

describe('production with an admin listener on an internal address (ADMIN_PORT, ADMIN_HOST)', () => {
  it('answers the spec four to peers of that network, refuses admin actions without the token, serves no admin route on the public listener', async () => {
    const s = await start({ ADMIN_PORT: '0', ADMIN_HOST: PEER });
    expect(s.adminPort).not.toBeNull();
    for (const [method, path] of OPEN) {
      const res = await send(PEER, PEER, s.adminPort!, method, path, {}, method === 'POST' ? chainHealth : undefined);
      expect(res.status, `${method} ${path}`).toBe(method === 'POST' ? 201 : 200);
      expect((await send(PEER, PEER, s.publicPort, method, path, forged(s.publicPort), method === 'POST' ? chainHealth : undefined)).status).toBe(404);
    }
    expect((await send(PEER, PEER, s.adminPort!, 'POST', '/admin/withdrawals', {}, withdrawal('a-1'))).status).toBe(401);
    expect(await withdrawals(s.db)).toBe(0);
  });

  it('refuses to start when the admin listener would take every interface, naming the setting', async () => {
    const env = { ...PRODUCTION, DATABASE_URL: 'postgres://127.0.0.1:1/none', ADMIN_PORT: '0' };
    for (const host of ['0.0.0.0', '::']) {
      expect(() => loadConfig({ ...env, ADMIN_HOST: host })).toThrow(/ADMIN_EXPOSE_OPEN_ENDPOINTS/);
    }
    expect(() => loadConfig({ ...env, HOST: PEER, ADMIN_HOST: PEER })).toThrow(/ADMIN_EXPOSE_OPEN_ENDPOINTS/);
    expect(() => loadConfig({ ...env, ADMIN_HOST: '0.0.0.0', ADMIN_EXPOSE_OPEN_ENDPOINTS: 'on' })).not.toThrow();
    const result = await runCommand(['serve'], { ...env, ADMIN_HOST: '0.0.0.0' });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('ADMIN_EXPOSE_OPEN_ENDPOINTS');
  });
});

describe('development mode', () => {
  it('keeps the spec four open to every peer, and admin actions without ADMIN_TOKEN to loopback only', async () => {
    const s = await start({ NODE_ENV: 'development' });
    expect((await send(PEER, PEER, s.publicPort, 'GET', '/admin/overview')).status).toBe(200);
    const remote = await send(PEER, PEER, s.publicPort, 'POST', '/admin/withdrawals', forged(s.publicPort), withdrawal('d-1'));
    expect(remote.status).toBe(401);
    expect(remote.body.message).toContain('ADMIN_TOKEN');
    expect(await withdrawals(s.db)).toBe(0);
    const local = await send('127.0.0.1', '127.0.0.1', s.publicPort, 'POST', '/admin/withdrawals', {}, withdrawal('d-2'));
    expect(local.status, JSON.stringify(local.body)).toBe(201);
  });
});

describe('`stableroute serve` started as the review started it', () => {
  let db: TestDatabase;
  let service: ServiceProcess | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await killAll([service]);
    await db.drop();
  });

  it('NODE_ENV=production, no ADMIN_PORT, no ADMIN_TOKEN: the withdrawal from another address is refused', async () => {
    const port = await freePort();
    service = startService(['serve'], { ...PRODUCTION, DATABASE_URL: db.url, PORT: String(port), LOG_LEVEL: 'warn' });
    await waitHealthy(`http://127.0.0.1:${port}`, service);
    const res = await send(PEER, PEER, port, 'POST', '/admin/withdrawals', forged(port), withdrawal('serve-1'));
    expect(res.status).toBe(401);
    expect(await withdrawals(db)).toBe(0);
    expect((await send('127.0.0.1', '127.0.0.1', port, 'GET', '/admin/overview')).status, service.output()).toBe(200);
    expect((await send(PEER, PEER, port, 'GET', '/admin/overview', forged(port))).status).toBe(403);
  });
});
