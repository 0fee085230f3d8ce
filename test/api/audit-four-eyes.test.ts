// Four-eyes approvals and the audit log (issue 25), over real sockets in production: a withdrawal above
// WITHDRAWAL_APPROVAL_ABOVE_USD waits for an approver other than its requester; a payment held by its merchant's
// threshold needs two operators; every action commits with its audit record, and a refused one is recorded apart.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { createMerchant } from '../../src/core/merchants/merchants.js';
import { createOperator, type OperatorRole } from '../../src/core/operators/operators.js';
import { updateMerchantPolicy } from '../../src/core/merchants/policies.js';
import { startRuntime, type Runtime } from '../../src/runtime.js';
import { testAudit } from '../helpers/audit.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { nonLoopbackAddress, send } from '../helpers/peer.js';

const PEER = nonLoopbackAddress();
const BREAK_GLASS = '7d2c9e4f1a8b3605e2d7c1f9a4b8e30c6f5d2a9b7e1c4f8d';
const SOL_TO = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const env = {
  NODE_ENV: 'production',
  API_KEY_SALT: 'f0c1d2e3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a59687',
  WEBHOOK_SIGNING_SECRET: '9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f3021',
  AUDIT_KEY: '6e2b9d4f1a8c3e7b5d0f2a9c4e6b8d1f3a5c7e9b0d2f',
  WITHDRAWAL_APPROVAL_ABOVE_USD: '100',
  // Each withdrawal here is judged on its own (the rolling window has its own test in test/workers/withdrawals.test.ts).
  WITHDRAWAL_APPROVAL_WINDOW_SECONDS: '0',
  ADMIN_TOKEN: BREAK_GLASS,
  LOG_LEVEL: 'silent',
  PORT: '0',
  HOST: '0.0.0.0',
};

let db: TestDatabase;
let config: Config;
let runtime: Runtime;
let port: number;
const people = new Map<string, { id: string; token: string }>();

async function operator(name: string, role: OperatorRole): Promise<{ id: string; token: string }> {
  const { operator: row, token } = await createOperator(db.pool, config, { name, role }, new Date(), testAudit('operator.create'));
  const person = { id: row.id, token };
  people.set(name, person);
  return person;
}

beforeAll(async () => {
  db = await createTestDatabase();
  config = loadConfig({ ...env, DATABASE_URL: db.url });
  runtime = await startRuntime(config, { api: true, workers: false }, { log: pino({ level: 'silent' }) });
  port = Number(new URL(runtime.addresses.public!).port);
  await operator('ada', 'admin');
  await operator('ann', 'admin');
  await operator('bob', 'approver');
  await operator('cy', 'approver');
  await operator('vic', 'viewer');
});
afterAll(async () => {
  await runtime?.stop();
  await db?.drop();
});

const as = (name: string) => ({ host: `localhost:${port}`, authorization: `Bearer ${people.get(name)!.token}` });
const call = (name: string, method: string, path: string, body?: unknown) => send(PEER, PEER, port, method, path, as(name), body);
let keys = 0;
const withdraw = (name: string, usdc: string) => call(name, 'POST', '/admin/withdrawals', { chain: 'solana', to: SOL_TO, amount_usdc: usdc, idempotency_key: `w-${++keys}` });
const approve = (name: string, id: string) => call(name, 'POST', `/admin/payment_intents/${id}/approve`, {});

async function jobsOf(id: string): Promise<number> {
  const { rows } = await db.pool.query<{ n: number }>("SELECT COUNT(*)::int AS n FROM pgboss.job WHERE name = 'payment-execute' AND data->>'payment_intent_id' = $1", [id]);
  return rows[0]!.n;
}
async function auditOf(target: string): Promise<{ actor: string; action: string; outcome: string; peer: string | null; details: Record<string, unknown> }[]> {
  const { rows } = await db.pool.query('SELECT actor, action, outcome, peer, details FROM audit_log WHERE $1 = ANY(targets) ORDER BY seq', [target]);
  return rows;
}

describe('four-eyes on withdrawals', () => {
  it('holds a withdrawal above the threshold; its requester may not approve it, another approver may', async () => {
    const res = await withdraw('ada', '150');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.id as string;
    expect(res.body).toMatchObject({ status: 'route_selected', approval: { status: 'pending', requested_by: people.get('ada')!.id, decided_by: null } });
    expect(await jobsOf(id)).toBe(0);

    const self = await approve('ada', id);
    expect([self.status, self.body.code]).toEqual([403, 'SELF_APPROVAL']);
    expect(await jobsOf(id)).toBe(0);
    const viewer = await approve('vic', id);
    expect([viewer.status, viewer.body.code]).toEqual([403, 'FORBIDDEN']);

    const ok = await approve('bob', id);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ approval: 'approved', approvals: 1, approvals_required: 1 });
    expect(await jobsOf(id)).toBe(1);
    const shown = await call('vic', 'GET', `/admin/withdrawals/${id}`);
    expect(shown.body.approval).toMatchObject({ status: 'approved', requested_by: people.get('ada')!.id, decided_by: people.get('bob')!.id });

    // Who did what, in order: the request, the refused self-approval, the refused viewer, the approval.
    expect((await auditOf(id)).map((r) => [r.actor, r.action, r.outcome])).toEqual([
      [people.get('ada')!.id, 'withdrawal.create', 'ok'],
      [people.get('ada')!.id, 'payment.approve', 'refused:SELF_APPROVAL'],
      [people.get('vic')!.id, 'payment.approve', 'refused:FORBIDDEN'],
      [people.get('bob')!.id, 'payment.approve', 'ok'],
    ]);
    const [created] = await auditOf(id);
    expect(created).toMatchObject({ peer: PEER, details: { chain: 'solana', to: SOL_TO, amount_usdc: '150' } });
  });

  it('does not hold a withdrawal at or under the threshold', async () => {
    const res = await withdraw('ada', '100');
    expect(res.status).toBe(201);
    expect(res.body.approval).toBeUndefined();
    expect(await jobsOf(res.body.id as string)).toBe(1);
  });

  it('counts exactly one of two approvals sent at once', async () => {
    const id = (await withdraw('ann', '500')).body.id as string;
    const answers = await Promise.all([approve('bob', id), approve('cy', id)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(await jobsOf(id)).toBe(1);
    const { rows } = await db.pool.query('SELECT status, decided_by FROM payment_approvals WHERE payment_intent_id = $1', [id]);
    expect(rows).toEqual([{ status: 'approved', decided_by: answers[0]!.status === 200 ? people.get('bob')!.id : people.get('cy')!.id }]);
    expect((await auditOf(id)).filter((r) => r.action === 'payment.approve' && r.outcome === 'ok')).toHaveLength(1);
  });

  it('lets the requester reject its own withdrawal: funds released, nothing sent', async () => {
    const id = (await withdraw('ada', '120')).body.id as string;
    const rejected = await call('ada', 'POST', `/admin/payment_intents/${id}/reject`, { reason: 'wrong address' });
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
    expect(rejected.body).toMatchObject({ status: 'failed', approval: 'rejected' });
    expect(await jobsOf(id)).toBe(0);
    const { rows } = await db.pool.query<{ type: string }>('SELECT type FROM ledger_transactions WHERE payment_intent_id = $1 ORDER BY id', [id]);
    expect(rows.map((r) => r.type)).toEqual(['reserve', 'release']);
  });
});

describe('four-eyes on payments held by their merchant\'s approval threshold', () => {
  it('needs two different operators (APPROVALS_REQUIRE_SECOND_OPERATOR, on in production)', async () => {
    expect(config.approvalsRequireSecondOperator).toBe(true);
    const { merchant, apiKey } = await createMerchant(db.pool, config, { name: 'Held Co', webhookUrl: null }, new Date(), testAudit('merchant.create'));
    await updateMerchantPolicy(db.pool, config, merchant.id, { approvalAboveMicros: 10_000_000n }, new Date(), testAudit('merchant.policy'));
    const key = { host: `localhost:${port}`, 'x-api-key': apiKey };
    const quote = await send(PEER, PEER, port, 'POST', '/quotes', key, { amount_usd: 50, destination: { solana_address: SOL_TO }, priority: 'fast' });
    expect(quote.status, JSON.stringify(quote.body)).toBe(201);
    const created = await send(PEER, PEER, port, 'POST', '/payment_intents', key, { quote_id: quote.body.quote_id, idempotency_key: 'held-1' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.payment_intent_id as string;

    const first = await approve('bob', id);
    expect(first.body).toMatchObject({ approval: 'pending', approvals: 1, approvals_required: 2 });
    expect(await jobsOf(id)).toBe(0);
    const again = await approve('bob', id);
    expect([again.status, again.body.code]).toEqual([403, 'SELF_APPROVAL']);
    const waiting = (await call('vic', 'GET', '/admin/approvals')).body as unknown as { payment_intent_id: string; first_approved_by: string }[];
    expect(waiting.find((w) => w.payment_intent_id === id)?.first_approved_by).toBe(people.get('bob')!.id);
    const second = await approve('cy', id);
    expect(second.body).toMatchObject({ approval: 'approved', approvals: 2, approvals_required: 2 });
    expect(await jobsOf(id)).toBe(1);
    expect((await auditOf(id)).map((r) => [r.actor, r.outcome, r.details.approval ?? null])).toEqual([
      [people.get('bob')!.id, 'ok', 'first of two'],
      [people.get('bob')!.id, 'refused:SELF_APPROVAL', null],
      [people.get('cy')!.id, 'ok', null],
    ]);
  });
});

describe('the audit log', () => {
  it('pages and filters by actor, action and target', async () => {
    const bob = people.get('bob')!.id;
    const mine = await call('vic', 'GET', `/admin/audit?actor=${bob}&limit=2`);
    expect(mine.status).toBe(200);
    const data = mine.body.data as { actor: string; seq: string }[];
    expect(data).toHaveLength(2);
    expect(data.every((r) => r.actor === bob)).toBe(true);
    const next = await call('vic', 'GET', `/admin/audit?actor=${bob}&limit=2&cursor=${String(mine.body.next_cursor)}`);
    const later = next.body.data as { seq: string }[];
    expect(later.length).toBeGreaterThan(0);
    expect(BigInt(later[0]!.seq)).toBeLessThan(BigInt(data[1]!.seq));
    const creations = (await call('vic', 'GET', '/admin/audit?action=withdrawal.create')).body.data as { action: string }[];
    expect(creations.length).toBeGreaterThanOrEqual(4);
    expect(creations.every((r) => r.action === 'withdrawal.create')).toBe(true);
    const bad = await call('vic', 'GET', '/admin/audit?cursor=abc');
    expect([bad.status, bad.body.code]).toEqual([400, 'INVALID_FILTER']);
  });

  it('says who the caller is', async () => {
    const me = await call('bob', 'GET', '/admin/me');
    expect(me.body).toEqual({ actor: people.get('bob')!.id, name: 'bob', role: 'approver', permissions: ['read', 'approve'] });
  });

  it('writes no record of an action that rolled back, and no action without its record', async () => {
    const count = async () => (await db.pool.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM audit_log')).rows[0]!.n;
    const withdrawals = async () => (await db.pool.query<{ n: number }>("SELECT COUNT(*)::int AS n FROM payment_intents WHERE kind = 'withdrawal'")).rows[0]!.n;
    // The action fails at its commit (a deferred check that always fails): neither it nor its record remains.
    await db.pool.query(`CREATE FUNCTION refuse_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'forced rollback'; END $$`);
    await db.pool.query('CREATE CONSTRAINT TRIGGER forced_rollback AFTER INSERT ON payment_intents DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_commit()');
    const [auditBefore, withdrawalsBefore] = [await count(), await withdrawals()];
    const failed = await withdraw('ada', '10');
    expect(failed.status).toBe(500);
    expect([await count(), await withdrawals()]).toEqual([auditBefore, withdrawalsBefore]);
    await db.pool.query('DROP TRIGGER forced_rollback ON payment_intents');
    // The record cannot be written: the action does not happen either.
    await db.pool.query('CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse_commit()');
    expect((await withdraw('ada', '10')).status).toBe(500);
    expect([await count(), await withdrawals()]).toEqual([auditBefore, withdrawalsBefore]);
    await db.pool.query('DROP TRIGGER refuse_audit ON audit_log');
    expect((await withdraw('ada', '10')).status).toBe(201);
    expect(await count()).toBe(auditBefore + 1);
  });

  it('holds no token, key or secret', async () => {
    const { rows } = await db.pool.query<{ t: string }>('SELECT string_agg(row_to_json(a)::text, E\'\\n\') AS t FROM audit_log a');
    for (const { token } of people.values()) expect(rows[0]!.t).not.toContain(token.slice(6));
  });
});

// Issue 35: the break-glass token and the CLI are not second people while operator accounts exist (production,
// APPROVALS_ALLOW_BREAK_GLASS off); a payout batch held whole is decided once, four-eyes as for a payment.
describe('who counts as a second person', () => {
  const glass = (method: string, path: string, body?: unknown) => send(PEER, PEER, port, method, path, { host: `localhost:${port}`, authorization: `Bearer ${BREAK_GLASS}` }, body);

  it('the break-glass token cannot approve an operator\'s withdrawal', async () => {
    const id = (await withdraw('ada', '300')).body.id as string;
    const refused = await glass('POST', `/admin/payment_intents/${id}/approve`, {});
    expect([refused.status, refused.body.code], JSON.stringify(refused.body)).toEqual([403, 'NAMED_OPERATOR_REQUIRED']);
    expect(await jobsOf(id)).toBe(0);
    expect((await auditOf(id)).map((r) => [r.actor, r.outcome])).toContainEqual(['break-glass', 'refused:NAMED_OPERATOR_REQUIRED']);
    expect((await approve('bob', id)).body).toMatchObject({ approval: 'approved' });
  });

  it('a withdrawal the break-glass token requested needs two named approvers', async () => {
    const res = await glass('POST', '/admin/withdrawals', { chain: 'solana', to: SOL_TO, amount_usdc: '250', idempotency_key: `w-${++keys}` });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.id as string;
    const first = await approve('bob', id);
    expect(first.body).toMatchObject({ approval: 'pending', approvals: 1, approvals_required: 2 });
    expect(await jobsOf(id)).toBe(0);
    const second = await approve('cy', id);
    expect(second.body).toMatchObject({ approval: 'approved', approvals: 2, approvals_required: 2 });
    expect(await jobsOf(id)).toBe(1);
  });

  it('a payout batch held whole: one entry, two different named approvers, refused to a viewer, itself twice, break-glass and a merchant key', async () => {
    const { merchant, apiKey } = await createMerchant(db.pool, config, { name: 'Split Co', webhookUrl: null }, new Date(), testAudit('merchant.create'));
    await updateMerchantPolicy(db.pool, config, merchant.id, { approvalAboveMicros: 100_000_000n }, new Date(), testAudit('merchant.policy'));
    const items = [1, 2, 3, 4].map((i) => ({ idempotency_key: `split-${i}`, amount_usd: 99.99, destination: { solana_address: SOL_TO }, priority: 'fast' }));
    const created = await send(PEER, PEER, port, 'POST', '/payout_batches', { host: `localhost:${port}`, 'x-api-key': apiKey }, { idempotency_key: 'split', items });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const batchId = created.body.id as string;
    const ids = (created.body.items as { payment_intent: { payment_intent_id: string } }[]).map((i) => i.payment_intent.payment_intent_id);
    const entries = ((await call('vic', 'GET', '/admin/approvals')).body as unknown as { payout_batch_id: string | null; payments: number; amount_usd: number }[]).filter(
      (e) => e.payout_batch_id === batchId,
    );
    expect(entries).toEqual([expect.objectContaining({ payments: 4, amount_usd: 399.96, approvals: 0, approvals_required: 2 })]);

    const decide = (name: string) => call(name, 'POST', `/admin/payout_batches/${batchId}/approve`, { reason: 'payroll' });
    expect([(await decide('vic')).status, (await decide('vic')).body.code]).toEqual([403, 'FORBIDDEN']);
    const forged = await send(PEER, PEER, port, 'POST', `/admin/payout_batches/${batchId}/approve`, { host: `localhost:${port}`, authorization: `Bearer ${apiKey}`, 'x-api-key': apiKey }, {});
    expect(forged.status).toBe(401);
    expect((await decide('bob')).body).toMatchObject({ payout_batch_id: batchId, approval: 'pending', approvals: 1, approvals_required: 2, payments: 4 });
    expect(await jobsOf(ids[0]!)).toBe(0);
    const twice = await decide('bob');
    expect([twice.status, twice.body.code]).toEqual([403, 'SELF_APPROVAL']);
    const byGlass = await glass('POST', `/admin/payout_batches/${batchId}/approve`, {});
    expect([byGlass.status, byGlass.body.code]).toEqual([403, 'NAMED_OPERATOR_REQUIRED']);
    const alone = await approve('cy', ids[1]!);
    expect([alone.status, alone.body.code]).toEqual([409, 'INVALID_STATE']);
    for (const id of ids) expect(await jobsOf(id)).toBe(0);
    const done = await decide('cy');
    expect(done.body).toMatchObject({ approval: 'approved', approvals: 2, approvals_required: 2, payments: 4 });
    for (const id of ids) expect(await jobsOf(id)).toBe(1);
    expect((await auditOf(batchId)).map((r) => [r.actor, r.action, r.outcome])).toEqual([
      [people.get('vic')!.id, 'payout_batch.approve', 'refused:FORBIDDEN'],
      [people.get('vic')!.id, 'payout_batch.approve', 'refused:FORBIDDEN'],
      [people.get('bob')!.id, 'payout_batch.approve', 'ok'],
      [people.get('bob')!.id, 'payout_batch.approve', 'refused:SELF_APPROVAL'],
      ['break-glass', 'payout_batch.approve', 'refused:NAMED_OPERATOR_REQUIRED'],
      [people.get('cy')!.id, 'payout_batch.approve', 'ok'],
    ]);
  });
});
