// Execution jobs pg-boss gave up on: a transfer that may land goes to manual review, where the confirmation worker
// keeps watching it until the chain decides; one mined and reverted fails with the chain's reason; and when nothing
// reached the chain the payment waits in manual review with its funds reserved, for an operator (decision 58).
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainError, type ChainAdapter, type ChainAdapters } from '../../src/chains/port.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { handleDeadExecution } from '../../src/core/payments/execute/abandon.js';
import { resolveManualReview } from '../../src/core/operators/transitions/resolve.js';
import { executeBatch } from '../../src/core/payments/execute/execute.js';
import { runOf } from '../../src/core/payments/execute/run.js';
import { createPayment, createTestContext, KEY, type TestContext } from '../helpers/context.js';
import { confirm, drainExecution, executeAlone } from '../helpers/workers.js';
import { testAudit } from '../helpers/audit.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext({ SIM_TREASURY_USDC: '1000' });
});
afterAll(async () => t.close());

const quiet = pino({ level: 'silent' });
const deps = (adapters: ChainAdapters = t.ctx.adapters) => ({ ...t.ctx, adapters, log: quiet });

/** A payment created through the API. Its queued execution job is left alone: the tests play pg-boss giving up on it. */
const pay = (amount: number) => createPayment(t.app, amount);

/** The simulated Solana network behind a node whose answer to a send is lost; with `deliver` it took the bytes first. */
function answerLost(deliver: boolean): ChainAdapters {
  const solana: ChainAdapter = {
    ...t.ctx.adapters.solana!,
    async broadcast(signed) {
      if (deliver) await t.ctx.adapters.solana!.broadcast(signed);
      throw new ChainError('rpc_timeout', 'unknown', 'simulated answer lost');
    },
  };
  return { ...t.ctx.adapters, solana };
}

/** A node that refuses every send: the bytes can never land. */
function refusing(): ChainAdapters {
  const solana: ChainAdapter = {
    ...t.ctx.adapters.solana!,
    async broadcast() {
      throw new ChainError('insufficient_gas', 'rejected', 'simulated rejection');
    },
  };
  return { ...t.ctx.adapters, solana };
}

const read = async (id: string) => (await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json();
const eventTypes = async (id: string) =>
  (await t.db.pool.query<{ event_type: string }>('SELECT event_type FROM webhook_events WHERE payment_intent_id = $1 ORDER BY seq', [id])).rows.map(
    (r) => r.event_type,
  );
const entryTypes = (intent: { ledger_entries: { type: string }[] }) => intent.ledger_entries.map((e) => e.type);
const solanaReserved = async () =>
  (await t.app.inject({ method: 'GET', url: '/admin/overview' })).json().treasury_balances.find((b: { chain: string }) => b.chain === 'solana')
    .reserved_balance as number;

describe('handleDeadExecution, nothing reached the chain', () => {
  it('a job that died before signing leaves the payment in manual_review with its funds reserved, never failed', async () => {
    const id = await pay(11);
    await handleDeadExecution(deps(), { payment_intent_id: id, attempt: 1 });
    const intent = await read(id);
    expect(intent.status).toBe('manual_review');
    expect(intent.attempts).toEqual([]);
    expect(entryTypes(intent)).toEqual(['reserve']);
    expect((await eventTypes(id)).at(-1)).toBe('payment.manual_review');
    expect(await solanaReserved()).toBe(11);
    const { rows } = await t.db.pool.query('SELECT to_status, reason FROM payment_intent_transitions WHERE payment_intent_id = $1 ORDER BY id DESC LIMIT 1', [id]);
    expect(rows[0]).toEqual({ to_status: 'manual_review', reason: 'execution_abandoned' });

    // An operator says what happens: one more execution attempt pays it out.
    expect(await resolveManualReview(deps(), id, 'retry', { audit: testAudit() })).toEqual({ payment_intent_id: id, status: 'retrying', tx_id: null });
    await drainExecution(t);
    expect((await read(id)).status).toBe('broadcasted');
    t.clock.advance(20_000);
    await confirm(t);
    expect((await read(id)).status).toBe('settled');
    expect(await solanaReserved()).toBe(0);
  });

  it('an operator fails it instead: funds released, payment.failed', async () => {
    const id = await pay(10);
    await handleDeadExecution(deps(), { payment_intent_id: id, attempt: 1 });
    expect(await resolveManualReview(deps(), id, 'failed', { audit: testAudit() })).toMatchObject({ status: 'failed' });
    const intent = await read(id);
    expect(entryTypes(intent)).toEqual(['reserve', 'release']);
    expect((await eventTypes(id)).at(-1)).toBe('payment.failed');
    expect(await solanaReserved()).toBe(0);
  });

  it('a transfer the node refused for good (nothing on chain): manual_review, funds reserved', async () => {
    const id = await pay(12);
    await executeAlone(deps(refusing()), { payment_intent_id: id, attempt: 1 });
    expect((await read(id)).status).toBe('retrying');
    // The retry's job (attempt 2) is the one pg-boss gave up on.
    await handleDeadExecution(deps(), { payment_intent_id: id, attempt: 2 });
    const intent = await read(id);
    expect(intent.status).toBe('manual_review');
    expect(intent.attempts.map((a: { status: string }) => a.status)).toEqual(['failed']);
    expect(entryTypes(intent)).toEqual(['reserve', 'debit']);
    expect(await solanaReserved()).toBe(12);
    // --retry is refused while a transfer might land; there is none here.
    expect(await resolveManualReview(deps(), id, 'failed', { audit: testAudit() })).toMatchObject({ status: 'failed' });
    expect(await solanaReserved()).toBe(0);
  });

  it('a dead job of an earlier attempt changes nothing: the current attempt is alive', async () => {
    const id = await pay(17);
    await executeAlone(deps(refusing()), { payment_intent_id: id, attempt: 1 });
    await handleDeadExecution(deps(), { payment_intent_id: id, attempt: 1 });
    expect((await read(id)).status).toBe('retrying');
    // (Leave the books as the next tests expect them: the retry's job is abandoned too, and an operator fails it.)
    await handleDeadExecution(deps(), { payment_intent_id: id, attempt: 2 });
    await resolveManualReview(deps(), id, 'failed', { audit: testAudit() });
    expect(await solanaReserved()).toBe(0);
  });
});

describe('handleDeadExecution, a transfer failed on chain', () => {
  it('fails an intent whose transfer the chain reports reverted, with the chain\'s reason and the fee it spent', async () => {
    const id = await pay(16);
    await executeAlone(deps(answerLost(false)), { payment_intent_id: id, attempt: 1 });
    const reverted: ChainAdapters = {
      ...t.ctx.adapters,
      solana: { ...t.ctx.adapters.solana!, getStatuses: async () => [{ state: 'failed', reason: 'reverted', feeNative: 5_000n }] },
    };
    await handleDeadExecution(deps(reverted), { payment_intent_id: id, attempt: 2 });
    const intent = await read(id);
    expect(intent.status).toBe('failed');
    expect(intent.attempts).toMatchObject([{ status: 'failed', failure_reason: 'reverted', actual_fee_native: 0.000005 }]);
    expect(entryTypes(intent)).toEqual(['reserve', 'debit', 'fee', 'release']);
    expect(await solanaReserved()).toBe(0);
  });

  it('retries alone a payment of a reverted on-chain batch, as every other path does: its share of the fee booked, its funds in flight', async () => {
    const ids = [await pay(21), await pay(22)];
    // One execution batch pays both in one Solana transaction; the node's answer to the send is lost.
    for (const outcome of await executeBatch(deps(answerLost(false)), ids.map((id) => runOf({ payment_intent_id: id, attempt: 1 })))) expect(outcome.ok).toBe(true);
    const shared = await t.db.pool.query<{ tx_id: string; tx_payments: number }>('SELECT tx_id, tx_payments FROM payment_attempts WHERE payment_intent_id = ANY($1)', [ids]);
    expect(shared.rows.map((a) => a.tx_payments)).toEqual([2, 2]);
    expect(new Set(shared.rows.map((a) => a.tx_id)).size).toBe(1);
    const attempt = (await t.db.pool.query<{ n: number }>("SELECT 1 + COUNT(*)::int AS n FROM payment_intent_transitions WHERE payment_intent_id = $1 AND to_status = 'retrying'", [ids[0]])).rows[0]!.n;

    // pg-boss gives up on both jobs; the chain says the batch was mined and reverted.
    const reverted: ChainAdapters = {
      ...t.ctx.adapters,
      solana: { ...t.ctx.adapters.solana!, getStatuses: async (signed) => signed.map(() => ({ state: 'failed', reason: 'reverted', feeNative: 10_000n }) as const) },
    };
    for (const id of ids) await handleDeadExecution(deps(reverted), { payment_intent_id: id, attempt });
    for (const id of ids) {
      const intent = await read(id);
      expect(intent.status).toBe('retrying');
      expect(intent.attempts).toMatchObject([{ status: 'failed', failure_reason: 'reverted', actual_fee_native: 0.000005 }]);
      expect(entryTypes(intent)).toEqual(['reserve', 'debit', 'fee']);
      expect(await eventTypes(id)).not.toContain('payment.failed');
    }

    // Their next runs go out alone, each in a transaction of its own, and settle.
    await drainExecution(t, 1000, { together: true });
    t.clock.advance(20_000);
    await confirm(t);
    for (const id of ids) {
      const intent = await read(id);
      expect(intent.status).toBe('settled');
      expect(intent.attempts.map((a: { status: string }) => a.status).sort()).toEqual(['confirmed', 'failed']);
    }
    const alone = await t.db.pool.query<{ tx_payments: number }>("SELECT tx_payments FROM payment_attempts WHERE payment_intent_id = ANY($1) AND status = 'confirmed'", [ids]);
    expect(alone.rows.map((a) => a.tx_payments)).toEqual([1, 1]);
    expect(await solanaReserved()).toBe(0);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });
});

describe('handleDeadExecution, a transfer may land', () => {
  it('moves the intent to manual_review, and the confirmation worker settles it once the transfer is final', async () => {
    const id = await pay(13);
    // The node took the bytes but the answer was lost; then the job was abandoned.
    await executeAlone(deps(answerLost(true)), { payment_intent_id: id, attempt: 1 });
    await handleDeadExecution(deps(), { payment_intent_id: id, attempt: 2 });
    let intent = await read(id);
    expect(intent.status).toBe('manual_review');
    expect(await solanaReserved()).toBe(13); // never released while the transfer might land
    expect((await eventTypes(id)).at(-1)).toBe('payment.manual_review');

    t.clock.advance(20_000); // past Solana finality on the simulator
    await confirm(t);
    intent = await read(id);
    expect(intent.status).toBe('settled');
    expect(intent.attempts).toHaveLength(1);
    expect(intent.attempts[0]).toMatchObject({ status: 'confirmed' });
    expect(entryTypes(intent)).toEqual(['reserve', 'debit', 'fee']);
    expect((await eventTypes(id)).at(-1)).toBe('payment.settled');
    expect(await solanaReserved()).toBe(0);
  });

  it('re-sends a transfer the chain never got, then settles it', async () => {
    const id = await pay(14);
    await executeAlone(deps(answerLost(false)), { payment_intent_id: id, attempt: 1 });
    await handleDeadExecution(deps(), { payment_intent_id: id, attempt: 2 });
    expect((await read(id)).status).toBe('manual_review');

    await confirm(t); // the chain does not know the bytes: the same bytes go out again
    t.clock.advance(20_000);
    await confirm(t);
    const intent = await read(id);
    expect(intent.status).toBe('settled');
    expect(intent.attempts).toHaveLength(1);
    expect((await eventTypes(id)).at(-1)).toBe('payment.settled');
  });

  it('a late execution job changes nothing, and the books balance', async () => {
    const id = await pay(15);
    await executeAlone(deps(answerLost(true)), { payment_intent_id: id, attempt: 1 });
    await handleDeadExecution(deps(), { payment_intent_id: id, attempt: 2 });
    await drainExecution(t); // every job still queued (this retry included) finds its intent past execution
    const intent = await read(id);
    expect(intent.status).toBe('manual_review');
    expect(intent.attempts).toHaveLength(1);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });
});
