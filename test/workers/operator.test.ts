import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvePayment, rejectPayment } from '../../src/core/operators/transitions/approve.js';
import { resolveManualReview } from '../../src/core/operators/transitions/resolve.js';
import { reconcile } from '../../src/core/treasury/reconcile.js';
import { AppError } from '../../src/domain/errors.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createTestContext, KEY, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { confirm, drainExecution } from '../helpers/workers.js';
import { testAudit } from '../helpers/audit.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext({ SIM_TREASURY_USDC: '500', SIM_STUCK_RATE: '1', STUCK_AFTER_SECONDS: '60' });
});
afterAll(async () => t.close());

async function stuckIntent(amount: number): Promise<string> {
  const quote = await t.app.inject({ method: 'POST', url: '/quotes', headers: KEY, payload: { amount_usd: amount, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' } });
  const res = await t.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: quote.json().quote_id, idempotency_key: `op-${amount}` } });
  const id = res.json().payment_intent_id as string;
  await drainExecution(t);
  t.clock.advance(61_000);
  await confirm(t);
  return id;
}

const status = async (id: string) => (await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json();

const ADA = testAudit('payment.resolve', { id: 'op_ada', role: 'operator', peer: null });
const BOB = testAudit('payment.approve', { id: 'op_bob', role: 'approver', peer: null });

/** A failure forced over a transfer that may still land: requested by one operator, approved by another (decision 181). */
async function forceFail(id: string) {
  expect(await resolveManualReview(t.ctx, id, 'failed', { force: true, audit: ADA })).toMatchObject({ status: 'manual_review', approval: 'pending' });
  return approvePayment(t.ctx, id, { audit: BOB });
}

describe('operator resolution of manual review', () => {
  it('failed: refused while the chain reports the transfer pending; forced, releases the funds and tells the merchant', async () => {
    const id = await stuckIntent(20);
    expect((await status(id)).status).toBe('manual_review');
    await expect(resolveManualReview(t.ctx, id, 'failed', { audit: testAudit() })).rejects.toMatchObject({ code: 'INVALID_STATE' });
    expect((await status(id)).status).toBe('manual_review');
    expect((await status(id)).ledger_entries.map((e: { type: string }) => e.type)).toEqual(['reserve', 'debit']);
    const result = await forceFail(id);
    expect(result.status).toBe('failed');
    const intent = await status(id);
    expect(intent.ledger_entries.map((e: { type: string }) => e.type)).toEqual(['reserve', 'debit', 'release']);
    expect(intent.attempts[0].failure_reason).toBe('operator_failed');
  });

  it('settled: books the payout after an outside check', async () => {
    const id = await stuckIntent(30);
    await resolveManualReview(t.ctx, id, 'settled', { audit: testAudit() });
    const intent = await status(id);
    expect(intent.status).toBe('settled');
    expect(intent.attempts[0].status).toBe('confirmed');
  });

  it('refuses actions that do not apply', async () => {
    const id = await stuckIntent(40);
    await expect(resolveManualReview(t.ctx, id, 'replace', { audit: testAudit() })).rejects.toMatchObject({ code: 'INVALID_STATE' });
    await forceFail(id);
    await expect(resolveManualReview(t.ctx, id, 'settled', { audit: testAudit() })).rejects.toBeInstanceOf(AppError);
    await expect(resolveManualReview(t.ctx, 'pi_missing', 'failed', { audit: testAudit() })).rejects.toMatchObject({ code: 'PAYMENT_INTENT_NOT_FOUND' });
  });

  it('checks the chain: settled refused for a transfer that can no longer land, failed allowed; failed refused when the chain is unreachable', async () => {
    const solana = t.ctx.adapters.solana!;
    const answering = (getStatuses: typeof solana.getStatuses) => ({ ...t.ctx, adapters: { ...t.ctx.adapters, solana: { ...solana, getStatuses } } });
    const expired = answering(async () => [{ state: 'expired' }]);
    const unreachable = answering(async () => {
      throw new Error('connect ECONNREFUSED');
    });
    const id = await stuckIntent(7);
    await expect(resolveManualReview(expired, id, 'settled', { audit: testAudit() })).rejects.toMatchObject({ code: 'INVALID_STATE' });
    await expect(resolveManualReview(unreachable, id, 'failed', { audit: testAudit() })).rejects.toMatchObject({ code: 'INVALID_STATE' });
    expect((await status(id)).status).toBe('manual_review');
    expect((await resolveManualReview(expired, id, 'failed', { audit: testAudit() })).status).toBe('failed');
  });

  it('the ledger verifies and the simulated wallets reconcile', async () => {
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
    const report = await reconcile(t.db.pool, t.ctx.adapters);
    const eth = report.find((r) => r.chain === 'ethereum')!;
    expect(eth.status).toBe('ok');
    // The stuck Solana transfers never land on the simulated chain; the one settled by an operator's outside check
    // is therefore a visible mismatch, which is exactly what reconciliation is for.
    const sol = report.find((r) => r.chain === 'solana')!;
    expect(sol.difference_usdc).toBe('30');
    const admin = await t.app.inject({ method: 'GET', url: '/admin/reconciliation' });
    expect(admin.json()).toHaveLength(2);
  });
});

describe('operator cancellation', () => {
  it('cancels a payment not yet on chain and releases its funds; refuses one that may land', async () => {
    const { cancelPayment } = await import('../../src/core/operators/transitions/cancel.js');
    const quote = await t.app.inject({ method: 'POST', url: '/quotes', headers: KEY, payload: { amount_usd: 9, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' } });
    const created = await t.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: quote.json().quote_id, idempotency_key: 'cancel-1' } });
    const id = created.json().payment_intent_id;
    const result = await cancelPayment(t.ctx, id, testAudit());
    expect(result.status).toBe('cancelled');
    const intent = await status(id);
    expect(intent.ledger_entries.map((e: { type: string }) => e.type)).toEqual(['reserve', 'release']);
    // The queued execution job finds nothing to do.
    await drainExecution(t);
    expect((await status(id)).attempts).toEqual([]);
    await expect(cancelPayment(t.ctx, id, testAudit())).rejects.toMatchObject({ code: 'INVALID_STATE' });
    const stuck = await stuckIntent(11);
    await expect(cancelPayment(t.ctx, stuck, testAudit())).rejects.toMatchObject({ code: 'INVALID_STATE' });
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });
});

// Issue 35: forcing a payment to failed while its transfer may still land is a four-eyes action. The request changes
// nothing (manual_review, funds in flight) and shows in GET /admin/approvals; another operator approves it as a held
// payment is approved, or rejects it (the payment stays in manual_review); a transfer that lands meanwhile is never
// failed.
describe('a forced failure waits for a second operator', () => {
  const approvals = async () => (await t.app.inject({ method: 'GET', url: '/admin/approvals' })).json() as Record<string, unknown>[];
  const entries = (id: string) => t.db.pool.query('SELECT type FROM ledger_transactions WHERE payment_intent_id = $1 ORDER BY id', [id]).then((r) => r.rows.map((x) => x.type));
  const land = (id: string) => t.db.pool.query('UPDATE sim_transactions SET will_stick = false WHERE tx_id IN (SELECT tx_id FROM payment_attempts WHERE payment_intent_id = $1)', [id]);

  it('is only requested: nothing moves, it is listed; the requester may not approve it, another operator may', async () => {
    const id = await stuckIntent(21);
    const requested = await resolveManualReview(t.ctx, id, 'failed', { force: true, audit: ADA });
    expect(requested).toMatchObject({ payment_intent_id: id, status: 'manual_review', approval: 'pending' });
    expect((await status(id)).status).toBe('manual_review');
    expect(await entries(id)).toEqual(['reserve', 'debit']);
    expect(await approvals()).toContainEqual(
      expect.objectContaining({ payment_intent_id: id, requested_action: 'force_fail', requested_by: 'op_ada', approvals: 0, approvals_required: 1, amount_usd: 21 }),
    );
    await expect(approvePayment(t.ctx, id, { audit: testAudit('payment.approve', { id: 'op_ada', role: 'admin', peer: null }) })).rejects.toMatchObject({ code: 'SELF_APPROVAL' });
    expect((await status(id)).status).toBe('manual_review');

    const approved = await approvePayment(t.ctx, id, { audit: BOB });
    expect(approved).toMatchObject({ payment_intent_id: id, status: 'failed', approval: 'approved', requested_action: 'force_fail' });
    const intent = await status(id);
    expect(intent.status).toBe('failed');
    expect(intent.attempts[0].failure_reason).toBe('operator_failed');
    expect(await entries(id)).toEqual(['reserve', 'debit', 'release']);
    expect((await approvals()).map((a) => a.payment_intent_id)).not.toContain(id);
  });

  it('a rejection drops the request: the payment stays in manual review, and may be requested again', async () => {
    const id = await stuckIntent(22);
    await resolveManualReview(t.ctx, id, 'failed', { force: true, audit: ADA });
    const rejected = await rejectPayment(t.ctx, id, { audit: BOB, reason: 'it may still land' });
    expect(rejected).toMatchObject({ status: 'manual_review', approval: 'rejected', requested_action: 'force_fail' });
    expect((await status(id)).status).toBe('manual_review');
    expect(await entries(id)).toEqual(['reserve', 'debit']);
    expect((await approvals()).map((a) => a.payment_intent_id)).not.toContain(id);
    await expect(approvePayment(t.ctx, id, { audit: BOB })).rejects.toMatchObject({ code: 'INVALID_STATE' });
    expect((await forceFail(id)).status).toBe('failed');
  });

  it('a payment whose transfer settled meanwhile is not failed by the approval', async () => {
    const id = await stuckIntent(23);
    await resolveManualReview(t.ctx, id, 'failed', { force: true, audit: ADA });
    await land(id);
    // Landed, the confirmation worker not there yet: the chain says final, so the approval refuses.
    await expect(approvePayment(t.ctx, id, { audit: BOB })).rejects.toMatchObject({ code: 'INVALID_STATE' });
    expect((await status(id)).status).toBe('manual_review');
    t.clock.advance(120_000);
    await confirm(t);
    expect((await status(id)).status).toBe('settled');
    await expect(approvePayment(t.ctx, id, { audit: BOB })).rejects.toMatchObject({ code: 'INVALID_STATE' });
    expect((await status(id)).status).toBe('settled');
    expect(await entries(id)).toEqual(['reserve', 'debit', 'settle', 'fee']);
  });

  it('a request that finds its payment settled under the lock voids itself', async () => {
    const id = await stuckIntent(24);
    await resolveManualReview(t.ctx, id, 'failed', { force: true, audit: ADA });
    await land(id);
    t.clock.advance(120_000);
    await confirm(t);
    expect((await status(id)).status).toBe('settled');
    await expect(approvePayment(t.ctx, id, { audit: BOB })).rejects.toMatchObject({ code: 'INVALID_STATE' });
    const { rows } = await t.db.pool.query('SELECT status FROM forced_failures WHERE payment_intent_id = $1', [id]);
    expect(rows).toEqual([{ status: 'void' }]);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });
});
