// Operator approval above a threshold, end to end: the payment is reserved but nothing reaches the chain until an
// operator approves it (then it settles as usual); a rejection fails it with its funds released and payment.failed
// (approval_rejected); a cancelled one no longer waits; every decision is taken once; the ledger verifies throughout.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant } from '../../src/core/merchants/merchants.js';
import { cancelPayment } from '../../src/core/operators/transitions/cancel.js';
import { updateMerchantPolicy } from '../../src/core/merchants/policies.js';
import { enqueueExecutions } from '../../src/jobs/queue.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createTestContext, KEY, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { confirm, drainExecution } from '../helpers/workers.js';
import { testAudit } from '../helpers/audit.js';

let t: TestContext;
beforeAll(async () => {
  // Service default: payments above 100 USD wait for an operator.
  t = await createTestContext({ SIM_TREASURY_USDC: '10000', POLICY_APPROVAL_ABOVE_USD: '100' });
});
afterAll(async () => t.close());

let keys = 0;
async function create(amount: number, headers: Record<string, string> = KEY, key = `appr-${++keys}`) {
  const quote = await t.app.inject({ method: 'POST', url: '/quotes', headers, payload: { amount_usd: amount, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' } });
  expect(quote.statusCode, quote.body).toBe(201);
  const res = await t.app.inject({ method: 'POST', url: '/payment_intents', headers, payload: { quote_id: quote.json().quote_id, idempotency_key: key } });
  expect(res.statusCode, res.body).toBe(201);
  return res;
}

const read = async (id: string) => (await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json();
const decide = (id: string, action: 'approve' | 'reject', payload?: object) =>
  t.app.inject({ method: 'POST', url: `/admin/payment_intents/${id}/${action}`, ...(payload ? { payload } : {}) });
const waiting = async () => (await t.app.inject({ method: 'GET', url: '/admin/approvals' })).json() as { payment_intent_id: string }[];

async function jobsOf(id: string): Promise<number> {
  const { rows } = await t.db.pool.query("SELECT COUNT(*)::int AS n FROM pgboss.job WHERE name = 'payment-execute' AND data->>'payment_intent_id' = $1", [id]);
  return rows[0].n;
}
async function eventsOf(id: string) {
  return (await t.db.pool.query('SELECT event_type, payload FROM webhook_events WHERE payment_intent_id = $1 ORDER BY seq', [id])).rows;
}
async function onChain(): Promise<number> {
  return (await t.db.pool.query("SELECT COUNT(*)::int AS n FROM sim_payouts WHERE chain = 'solana'")).rows[0].n;
}
async function solana() {
  const b = (await t.app.inject({ method: 'GET', url: '/admin/overview' })).json().treasury_balances.find((x: { chain: string }) => x.chain === 'solana');
  return { available: b.available_balance as number, reserved: b.reserved_balance as number };
}

describe('payments at or under the threshold', () => {
  it('are queued at once as always, with no approval field', async () => {
    const res = await create(100);
    expect(res.json()).not.toHaveProperty('approval');
    const id = res.json().payment_intent_id;
    expect(await jobsOf(id)).toBe(1);
    expect(await read(id)).not.toHaveProperty('approval');
    await drainExecution(t);
    expect((await read(id)).status).toBe('broadcasted');
  });
});

describe('payments above the threshold', () => {
  it('are reserved but never broadcast before approval; approval queues them and they settle', async () => {
    await drainExecution(t);
    const sentBefore = await onChain();
    const balance = await solana();
    const res = await create(150);
    const id = res.json().payment_intent_id as string;
    expect(res.json()).toMatchObject({ status: 'route_selected', approval: { status: 'pending', requested_at: t.clock.now().toISOString(), decided_at: null } });
    expect(await solana()).toEqual({ available: balance.available - 150, reserved: balance.reserved + 150 });
    expect(await jobsOf(id)).toBe(0);
    expect((await eventsOf(id)).map((e) => [e.event_type, e.payload.approval])).toEqual([['payment.created', { status: 'pending' }]]);
    expect(await waiting()).toEqual([
      {
        payment_intent_id: id,
        kind: 'payout',
        requested_by: null,
        first_approved_by: null,
        approvals: 0,
        approvals_required: 1,
        merchant_id: 'mer_test',
        amount_usd: 150,
        selected_chain: 'solana',
        destination_address: SOL_ADDRESS,
        approval_above_usd: 100,
        requested_at: t.clock.now().toISOString(),
        payout_batch_id: null,
        payments: 1,
        requested_action: 'send',
      },
    ]);

    // Workers run: nothing moves.
    await drainExecution(t);
    t.clock.advance(60_000);
    await confirm(t);
    expect(await read(id)).toMatchObject({ status: 'route_selected', attempts: [], approval: { status: 'pending' } });
    expect(await onChain()).toBe(sentBefore);

    // Its idempotent replay still says it waits.
    const replay = await t.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: (await read(id)).quote_id, idempotency_key: `appr-${keys}` } });
    expect(replay.json()).toMatchObject({ payment_intent_id: id, approval: { status: 'pending' } });

    const approved = await decide(id, 'approve', { reason: 'called the merchant' });
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toEqual({ payment_intent_id: id, status: 'route_selected', approval: 'approved', approvals: 1, approvals_required: 1 });
    expect(await jobsOf(id)).toBe(1);
    expect(await waiting()).toEqual([]);
    const row = (await t.db.pool.query('SELECT status, decided_via, reason FROM payment_approvals WHERE payment_intent_id = $1', [id])).rows[0];
    expect(row).toEqual({ status: 'approved', decided_via: 'admin_api', reason: 'called the merchant' });

    await drainExecution(t);
    expect((await read(id)).status).toBe('broadcasted');
    expect(await onChain()).toBe(sentBefore + 1);
    t.clock.advance(60_000);
    await confirm(t);
    const settled = await read(id);
    expect(settled).toMatchObject({ status: 'settled', approval: { status: 'approved', decided_at: expect.any(String) } });
    expect(settled.ledger_entries.map((e: { type: string }) => e.type)).toEqual(['reserve', 'debit', 'fee']);

    // Decided once.
    const again = await decide(id, 'approve');
    expect([again.statusCode, again.json().code]).toEqual([409, 'INVALID_STATE']);
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
  });

  it('a rejection fails the payment, releases its funds and tells the merchant (approval_rejected); nothing is sent', async () => {
    const balance = await solana();
    const sentBefore = await onChain();
    const id = (await create(250)).json().payment_intent_id as string;
    const rejected = await decide(id, 'reject');
    expect(rejected.statusCode, rejected.body).toBe(200);
    expect(rejected.json()).toEqual({ payment_intent_id: id, status: 'failed', approval: 'rejected', approvals: 0, approvals_required: 1 });

    const intent = await read(id);
    expect(intent).toMatchObject({ status: 'failed', attempts: [], approval: { status: 'rejected' } });
    expect(intent.ledger_entries.map((e: { type: string }) => e.type)).toEqual(['reserve', 'release']);
    expect(await solana()).toEqual(balance);
    const events = await eventsOf(id);
    expect(events.map((e) => e.event_type)).toEqual(['payment.created', 'payment.failed']);
    expect(events[1]!.payload).toMatchObject({ status: 'failed', failure_reason: 'approval_rejected', amount_usd: 250 });

    await drainExecution(t);
    expect(await onChain()).toBe(sentBefore);
    for (const action of ['approve', 'reject'] as const) {
      const late = await decide(id, action);
      expect([late.statusCode, late.json().code]).toEqual([409, 'INVALID_STATE']);
    }
    expect(await waiting()).toEqual([]);
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
  });

  it('a stray execution job does not send a payment that waits', async () => {
    const id = (await create(300)).json().payment_intent_id as string;
    await enqueueExecutions(t.boss, t.db.pool, [{ payment_intent_id: id, attempt: 1 }]);
    await drainExecution(t);
    expect(await read(id)).toMatchObject({ status: 'route_selected', attempts: [], approval: { status: 'pending' } });
    expect((await decide(id, 'reject')).statusCode).toBe(200);
  });

  it('a cancelled payment no longer waits and can no longer be approved', async () => {
    const id = (await create(120)).json().payment_intent_id as string;
    await cancelPayment(t.ctx, id, testAudit());
    expect(await waiting()).toEqual([]);
    expect(await read(id)).toMatchObject({ status: 'cancelled', approval: { status: 'cancelled' } });
    const late = await decide(id, 'approve');
    expect([late.statusCode, late.json().code]).toEqual([409, 'INVALID_STATE']);
    expect(await jobsOf(id)).toBe(0);
  });

  it('a merchant whose override lifts the threshold is not held; one with a lower threshold is', async () => {
    const make = async (approvalAboveMicros: bigint | null) => {
      const { merchant, apiKey } = await createMerchant(t.db.pool, t.ctx.config, { name: 'm', webhookUrl: null }, t.clock.now(), testAudit());
      await updateMerchantPolicy(t.db.pool, t.ctx.config, merchant.id, { approvalAboveMicros }, t.clock.now(), testAudit());
      return { 'x-api-key': apiKey };
    };
    expect((await create(500, await make(null))).json()).not.toHaveProperty('approval');
    expect((await create(20, await make(10_000_000n))).json().approval).toEqual(expect.objectContaining({ status: 'pending' }));
  });
});

describe('admin approve/reject errors', () => {
  it('404 for an unknown payment, 409 for one that needs no approval', async () => {
    const unknown = await decide('pi_doesnotexist', 'approve');
    expect([unknown.statusCode, unknown.json().code]).toEqual([404, 'PAYMENT_INTENT_NOT_FOUND']);
    const plain = (await create(5)).json().payment_intent_id;
    const res = await decide(plain, 'reject');
    expect([res.statusCode, res.json().code]).toEqual([409, 'INVALID_STATE']);
    expect((await read(plain)).status).toBe('route_selected');
  });
});
