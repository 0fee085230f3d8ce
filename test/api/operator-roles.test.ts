// Named operators and their roles (issue 25): every admin route x every role, over real sockets from this machine's
// non-loopback address, in production. The expected matrix is written out here, apart from src/api/admin-access.ts,
// so a change of the table shows up as a failing row.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createOperator, disableOperator, rotateOperatorToken, type OperatorRole } from '../../src/core/operators/operators.js';
import { startRuntime, type Runtime } from '../../src/runtime.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { nonLoopbackAddress, send } from '../helpers/peer.js';
import { testAudit } from '../helpers/audit.js';

const PEER = nonLoopbackAddress();
const SALT = 'f0c1d2e3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a59687';
const BREAK_GLASS = '4c1f9e7d2b8a6053e1f7c9d4b2a80e6f3d5c7b9a1e2f4d6c';
const env = {
  NODE_ENV: 'production',
  API_KEY_SALT: SALT,
  WEBHOOK_SIGNING_SECRET: '9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f3021',
  AUDIT_KEY: '6e2b9d4f1a8c3e7b5d0f2a9c4e6b8d1f3a5c7e9b0d2f',
  ADMIN_TOKEN: BREAK_GLASS,
  LOG_LEVEL: 'silent',
  PORT: '0',
  HOST: '0.0.0.0',
};

/** Which roles may call each admin route (the spec's four are open and not in it). */
const MATRIX: Record<string, readonly OperatorRole[]> = {
  'GET /admin/reconciliation': ['viewer', 'operator', 'approver', 'admin'],
  'GET /admin/webhook-events': ['viewer', 'operator', 'approver', 'admin'],
  'GET /admin/webhook-events/{id}': ['viewer', 'operator', 'approver', 'admin'],
  'POST /admin/webhook-events/{id}/redeliver': ['operator', 'admin'],
  'GET /admin/approvals': ['viewer', 'operator', 'approver', 'admin'],
  'POST /admin/payment_intents/{id}/approve': ['approver', 'admin'],
  'POST /admin/payment_intents/{id}/reject': ['approver', 'admin'],
  'POST /admin/payout_batches/{id}/approve': ['approver', 'admin'],
  'POST /admin/payout_batches/{id}/reject': ['approver', 'admin'],
  'GET /admin/merchants/{id}/policy': ['viewer', 'operator', 'approver', 'admin'],
  'GET /admin/merchants/{id}/addresses': ['viewer', 'operator', 'approver', 'admin'],
  'POST /admin/merchants/{id}/addresses': ['admin'],
  'DELETE /admin/merchants/{id}/addresses/{chain}/{address}': ['admin'],
  'GET /admin/payments': ['viewer', 'operator', 'approver', 'admin'],
  'GET /admin/payment-counts': ['viewer', 'operator', 'approver', 'admin'],
  'GET /admin/statuses': ['viewer', 'operator', 'approver', 'admin'],
  'GET /admin/payments/{id}': ['viewer', 'operator', 'approver', 'admin'],
  'POST /admin/payments/{id}/resolve': ['operator', 'admin'],
  'POST /admin/payments/{id}/cancel': ['operator', 'admin'],
  'POST /admin/payments/{id}/refund': ['operator', 'admin'],
  'POST /admin/books/{chain}/attach': ['operator', 'admin'],
  'POST /admin/books/{chain}/foreign': ['operator', 'admin'],
  'GET /admin/treasury': ['viewer', 'operator', 'approver', 'admin'],
  'GET /admin/read-replica': ['viewer', 'operator', 'approver', 'admin'],
  'GET /admin/chain-health': ['viewer', 'operator', 'approver', 'admin'],
  'GET /admin/alerts': ['viewer', 'operator', 'approver', 'admin'],
  'GET /admin/reconciliations': ['viewer', 'operator', 'approver', 'admin'],
  'POST /admin/withdrawals': ['admin'],
  'GET /admin/withdrawals': ['viewer', 'operator', 'approver', 'admin'],
  'GET /admin/withdrawals/{id}': ['viewer', 'operator', 'approver', 'admin'],
  'GET /admin/deposits': ['viewer', 'operator', 'approver', 'admin'],
  'GET /admin/books': ['viewer', 'operator', 'approver', 'admin'],
  'GET /admin/events': ['viewer', 'operator', 'approver', 'admin'],
  'GET /admin/me': ['viewer', 'operator', 'approver', 'admin'],
  'GET /admin/audit': ['viewer', 'operator', 'approver', 'admin'],
  'GET /admin/operators': ['viewer', 'operator', 'approver', 'admin'],
  'GET /admin/exports/payments.csv': ['viewer', 'operator', 'approver', 'admin'],
  'GET /admin/exports/ledger.csv': ['viewer', 'operator', 'approver', 'admin'],
  'GET /metrics': ['viewer', 'operator', 'approver', 'admin'],
};
const OPEN = new Set(['GET /admin/overview', 'GET /admin/route-distribution', 'GET /admin/failures', 'POST /admin/chain-health']);
const ROLES: readonly OperatorRole[] = ['viewer', 'operator', 'approver', 'admin'];

let db: TestDatabase;
let runtime: Runtime;
let port: number;
const tokens = new Map<OperatorRole, string>();
const ids = new Map<OperatorRole, string>();

beforeAll(async () => {
  db = await createTestDatabase();
  const config = loadConfig({ ...env, DATABASE_URL: db.url });
  runtime = await startRuntime(config, { api: true, workers: false }, { log: pino({ level: 'silent' }) });
  port = Number(new URL(runtime.addresses.public!).port);
  for (const role of ROLES) {
    const { operator, token } = await createOperator(db.pool, config, { name: `${role} person`, role }, new Date(), testAudit());
    tokens.set(role, token);
    ids.set(role, operator.id);
  }
});
afterAll(async () => {
  await runtime?.stop();
  await db?.drop();
});

const bearer = (token: string) => ({ host: `localhost:${port}`, authorization: `Bearer ${token}` });

/** A request the route refuses after the guard (unknown ids, a body that fails validation), so nothing changes. */
function probe(route: string): [string, string, unknown] {
  const [method, path] = route.split(' ') as [string, string];
  const filled = path.replace('{chain}', 'solana').replace('{address}', 'nowhere').replace(/\{[a-z_]+\}/g, 'pi_0000000000000000');
  return [method, filled, method === 'POST' ? { unexpected: true } : undefined];
}

describe('the role matrix', () => {
  it('covers every admin route the app documents', async () => {
    const doc = (await send('127.0.0.1', '127.0.0.1', port, 'GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/admin/'))
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .filter((r) => !OPEN.has(r));
    expect(documented.sort()).toEqual(Object.keys(MATRIX).filter((r) => r !== 'GET /admin/events' && r !== 'GET /metrics').sort());
  });

  it('lets each role call exactly its routes (403 FORBIDDEN otherwise), from another address', async () => {
    const wrong: string[] = [];
    for (const [route, allowed] of Object.entries(MATRIX)) {
      const [method, path, body] = probe(route);
      for (const role of ROLES) {
        const res = await send(PEER, PEER, port, method, path, bearer(tokens.get(role)!), body, { statusOnly: route === 'GET /admin/events' });
        const denied = res.status === 403 && res.body.code === 'FORBIDDEN';
        if (denied === allowed.includes(role) || res.status === 401) wrong.push(`${route} as ${role}: ${res.status} ${res.body.code ?? ''}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('gives every role the spec four, and the break-glass ADMIN_TOKEN everything', async () => {
    for (const role of ROLES) expect((await send(PEER, PEER, port, 'GET', '/admin/overview', bearer(tokens.get(role)!))).status).toBe(200);
    const res = await send(PEER, PEER, port, 'POST', '/admin/withdrawals', bearer(BREAK_GLASS), { unexpected: true });
    expect(res.status).toBe(400);
  });
});

describe('operator tokens', () => {
  it('refuses an unknown token, a malformed header, and no header, with 401', async () => {
    const attempts: Record<string, string>[] = [bearer('sr_op_not-a-token'), bearer('x'.repeat(300)), { authorization: 'Basic abc' }, {}];
    for (const headers of attempts) {
      const res = await send(PEER, PEER, port, 'GET', '/admin/payments', { host: `localhost:${port}`, ...headers });
      expect(res.status, JSON.stringify(headers).slice(0, 80)).toBe(401);
      expect(res.body.code).toBe('UNAUTHORIZED');
    }
  });

  it('refuses a disabled operator and a rotated-out token from the next request', async () => {
    const config = loadConfig({ ...env, DATABASE_URL: db.url });
    const { operator, token } = await createOperator(db.pool, config, { name: 'leaving soon', role: 'operator' }, new Date(), testAudit());
    expect((await send(PEER, PEER, port, 'GET', '/admin/payments', bearer(token))).status).toBe(200);
    const rotated = await rotateOperatorToken(db.pool, config, operator.id, new Date(), testAudit());
    expect((await send(PEER, PEER, port, 'GET', '/admin/payments', bearer(token))).status).toBe(401);
    expect((await send(PEER, PEER, port, 'GET', '/admin/payments', bearer(rotated.token))).status).toBe(200);
    await disableOperator(db.pool, config, operator.id, new Date(), testAudit());
    expect((await send(PEER, PEER, port, 'GET', '/admin/payments', bearer(rotated.token))).status).toBe(401);
    await expect(rotateOperatorToken(db.pool, config, operator.id, new Date(), testAudit())).rejects.toMatchObject({ code: 'INVALID_STATE' });
    await expect(disableOperator(db.pool, config, 'op_missing', new Date(), testAudit())).rejects.toMatchObject({ code: 'OPERATOR_NOT_FOUND' });
  });

  it('stores only a hash of each token', async () => {
    const { rows } = await db.pool.query<{ row: string }>('SELECT row_to_json(o)::text AS row FROM operators o');
    for (const token of tokens.values()) for (const r of rows) expect(r.row).not.toContain(token.slice(6));
  });
});
