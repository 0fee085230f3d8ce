// What the console needs to show who is who (issue 25, item 5), in production over a real socket: the operators'
// names for the ids in the audit log and on approvals (GET /admin/operators, never anything of a token), and the
// approvals given and needed ("1 of 2") on the approvals queue and on one payment's page (GET /admin/payments/:id).
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { createMerchant } from '../../src/core/merchants/merchants.js';
import { createOperator, disableOperator, type OperatorRole } from '../../src/core/operators/operators.js';
import { updateMerchantPolicy } from '../../src/core/merchants/policies.js';
import { startRuntime, type Runtime } from '../../src/runtime.js';
import { testAudit } from '../helpers/audit.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { send } from '../helpers/peer.js';

const LOCAL = '127.0.0.1';
const SOL_TO = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const env = {
  NODE_ENV: 'production',
  API_KEY_SALT: 'f0c1d2e3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a59687',
  WEBHOOK_SIGNING_SECRET: '9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f3021',
  AUDIT_KEY: '6e2b9d4f1a8c3e7b5d0f2a9c4e6b8d1f3a5c7e9b0d2f',
  WITHDRAWAL_APPROVAL_ABOVE_USD: '100',
  LOG_LEVEL: 'silent',
  PORT: '0',
  HOST: LOCAL,
};

let db: TestDatabase;
let config: Config;
let runtime: Runtime;
let port: number;
const people = new Map<string, { id: string; token: string }>();

async function operator(name: string, role: OperatorRole): Promise<void> {
  const { operator: row, token } = await createOperator(db.pool, config, { name, role }, new Date(), testAudit('operator.create'));
  people.set(name, { id: row.id, token });
}

beforeAll(async () => {
  db = await createTestDatabase();
  config = loadConfig({ ...env, DATABASE_URL: db.url });
  runtime = await startRuntime(config, { api: true, workers: false }, { log: pino({ level: 'silent' }) });
  port = Number(new URL(runtime.addresses.public!).port);
  await operator('Ada Admin', 'admin');
  await operator('Bob Approver', 'approver');
  await operator('Cy Approver', 'approver');
  await operator('Vic Viewer', 'viewer');
  await operator('Gone Operator', 'operator');
  await disableOperator(db.pool, config, people.get('Gone Operator')!.id, new Date(), testAudit('operator.disable'));
});
afterAll(async () => {
  await runtime?.stop();
  await db?.drop();
});

const call = (name: string, method: string, path: string, body?: unknown) =>
  send(LOCAL, LOCAL, port, method, path, { host: `localhost:${port}`, authorization: `Bearer ${people.get(name)!.token}` }, body);
const id = (name: string) => people.get(name)!.id;

describe('GET /admin/operators', () => {
  it('names every operator, disabled ones too, to any role, with nothing of a token', async () => {
    const res = await call('Vic Viewer', 'GET', '/admin/operators');
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const list = res.body as unknown as Record<string, unknown>[];
    expect(list.map((o) => [o.operator_id, o.name, o.role, o.status])).toEqual([
      [id('Ada Admin'), 'Ada Admin', 'admin', 'active'],
      [id('Bob Approver'), 'Bob Approver', 'approver', 'active'],
      [id('Cy Approver'), 'Cy Approver', 'approver', 'active'],
      [id('Vic Viewer'), 'Vic Viewer', 'viewer', 'active'],
      [id('Gone Operator'), 'Gone Operator', 'operator', 'disabled'],
    ]);
    const text = JSON.stringify(list);
    expect(text).not.toContain('token');
    for (const { token } of people.values()) expect(text).not.toContain(token.slice(0, 12));
  });
});

describe('approvals given and needed', () => {
  it('a held withdrawal: who requested it, 0 of 1, on the queue and on its payment page', async () => {
    const created = await call('Ada Admin', 'POST', '/admin/withdrawals', { chain: 'solana', to: SOL_TO, amount_usdc: '250', idempotency_key: 'console-identity-1' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const wid = created.body.id as string;
    const queue = (await call('Vic Viewer', 'GET', '/admin/approvals')).body as unknown as Record<string, unknown>[];
    expect(queue.find((q) => q.payment_intent_id === wid)).toMatchObject({ kind: 'withdrawal', requested_by: id('Ada Admin'), first_approved_by: null, approvals: 0, approvals_required: 1 });
    const page = await call('Vic Viewer', 'GET', `/admin/payments/${wid}`);
    expect(page.status).toBe(200);
    expect(page.body.approval).toMatchObject({ status: 'pending', requested_by: id('Ada Admin'), first_approved_by: null, decided_by: null, approvals: 0, approvals_required: 1 });

    expect((await call('Bob Approver', 'POST', `/admin/payment_intents/${wid}/approve`, {})).status).toBe(200);
    const after = await call('Vic Viewer', 'GET', `/admin/payments/${wid}`);
    expect(after.body.approval).toMatchObject({ status: 'approved', requested_by: id('Ada Admin'), decided_by: id('Bob Approver'), approvals: 1, approvals_required: 1 });
  });

  it('a payment held by its merchant\'s threshold: 1 of 2 after the first approval, 2 of 2 after the second', async () => {
    const { merchant, apiKey } = await createMerchant(db.pool, config, { name: 'Held Co', webhookUrl: null }, new Date(), testAudit('merchant.create'));
    await updateMerchantPolicy(db.pool, config, merchant.id, { approvalAboveMicros: 10_000_000n }, new Date(), testAudit('merchant.policy'));
    const key = { host: `localhost:${port}`, 'x-api-key': apiKey };
    const quote = await send(LOCAL, LOCAL, port, 'POST', '/quotes', key, { amount_usd: 50, destination: { solana_address: SOL_TO }, priority: 'fast' });
    const intent = await send(LOCAL, LOCAL, port, 'POST', '/payment_intents', key, { quote_id: quote.body.quote_id, idempotency_key: 'held-console' });
    expect(intent.status, JSON.stringify(intent.body)).toBe(201);
    const pid = intent.body.payment_intent_id as string;

    expect((await call('Bob Approver', 'POST', `/admin/payment_intents/${pid}/approve`, {})).body).toMatchObject({ approvals: 1, approvals_required: 2 });
    const queue = (await call('Vic Viewer', 'GET', '/admin/approvals')).body as unknown as Record<string, unknown>[];
    expect(queue.find((q) => q.payment_intent_id === pid)).toMatchObject({ kind: 'payout', requested_by: null, first_approved_by: id('Bob Approver'), approvals: 1, approvals_required: 2 });
    const page = await call('Vic Viewer', 'GET', `/admin/payments/${pid}`);
    expect(page.body.approval).toMatchObject({ status: 'pending', first_approved_by: id('Bob Approver'), approvals: 1, approvals_required: 2 });

    expect((await call('Cy Approver', 'POST', `/admin/payment_intents/${pid}/approve`, {})).status).toBe(200);
    const after = await call('Vic Viewer', 'GET', `/admin/payments/${pid}`);
    expect(after.body.approval).toMatchObject({ status: 'approved', first_approved_by: id('Bob Approver'), decided_by: id('Cy Approver'), approvals: 2, approvals_required: 2 });
  });

  it('leaves the approval out of a payment that never waited for one', async () => {
    const created = await call('Ada Admin', 'POST', '/admin/withdrawals', { chain: 'solana', to: SOL_TO, amount_usdc: '5', idempotency_key: 'console-identity-small' });
    const page = await call('Vic Viewer', 'GET', `/admin/payments/${created.body.id as string}`);
    expect(page.status).toBe(200);
    expect(page.body.approval).toBeUndefined();
  });
});
