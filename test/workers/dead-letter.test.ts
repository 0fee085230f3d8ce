// Execution jobs pg-boss gave up on: the intent fails when no transfer can land, and goes to manual review when one
// might, where the confirmation worker keeps watching the transfer until the chain decides.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainError, type ChainAdapter, type ChainAdapters } from '../../src/chains/port.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { handleDeadExecution } from '../../src/workers/execution/dead-letter.js';
import { executePayment, type ExecutionDeps } from '../../src/workers/execution/execute.js';
import { createPayment, createTestContext, KEY, type TestContext } from '../helpers/context.js';
import { confirm, drainExecution } from '../helpers/workers.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext({ SIM_TREASURY_USDC: '1000' });
});
afterAll(async () => t.close());

const quiet = pino({ level: 'silent' });
const deps = (adapters: ChainAdapters = t.ctx.adapters): ExecutionDeps => ({ ...t.ctx, adapters, log: quiet });

/** A payment created through the API. Its queued execution job is left alone: the tests play pg-boss giving up on it. */
const pay = (amount: number) => createPayment(t.app, amount);

/** The simulated Solana network behind a node whose answer to a send is lost; with `deliver` it took the bytes first. */
function answerLost(deliver: boolean): ChainAdapters {
  const solana: ChainAdapter = {
    ...t.ctx.adapters.solana,
    async broadcast(signed) {
      if (deliver) await t.ctx.adapters.solana.broadcast(signed);
      throw new ChainError('rpc_timeout', 'unknown', 'simulated answer lost');
    },
  };
  return { ...t.ctx.adapters, solana };
}

/** A node that refuses every send: the bytes can never land. */
function refusing(): ChainAdapters {
  const solana: ChainAdapter = {
    ...t.ctx.adapters.solana,
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

describe('handleDeadExecution, no transfer can land', () => {
  it('fails an intent whose job died before signing: funds released, payment.failed', async () => {
    const id = await pay(11);
    await handleDeadExecution(deps(), { payment_intent_id: id, attempt: 1 });
    const intent = await read(id);
    expect(intent.status).toBe('failed');
    expect(intent.attempts).toEqual([]);
    expect(entryTypes(intent)).toEqual(['reserve', 'release']);
    expect((await eventTypes(id)).at(-1)).toBe('payment.failed');
    expect(await solanaReserved()).toBe(0);
  });

  it('fails an intent whose only transfer the node refused: funds released, payment.failed', async () => {
    const id = await pay(12);
    await executePayment(deps(refusing()), { payment_intent_id: id, attempt: 1 });
    expect((await read(id)).status).toBe('retrying');
    await handleDeadExecution(deps(), { payment_intent_id: id, attempt: 1 });
    const intent = await read(id);
    expect(intent.status).toBe('failed');
    expect(intent.attempts.map((a: { status: string }) => a.status)).toEqual(['failed']);
    expect(entryTypes(intent)).toEqual(['reserve', 'debit', 'release']);
    expect((await eventTypes(id)).at(-1)).toBe('payment.failed');
    expect(await solanaReserved()).toBe(0);
  });

  it('fails an intent whose transfer the chain reports reverted, with the chain\'s reason and the fee it spent', async () => {
    const id = await pay(16);
    await executePayment(deps(answerLost(false)), { payment_intent_id: id, attempt: 1 });
    const reverted: ChainAdapters = {
      ...t.ctx.adapters,
      solana: { ...t.ctx.adapters.solana, getStatus: async () => ({ state: 'failed', reason: 'reverted', feeNative: 5_000n }) },
    };
    await handleDeadExecution(deps(reverted), { payment_intent_id: id, attempt: 1 });
    const intent = await read(id);
    expect(intent.status).toBe('failed');
    expect(intent.attempts).toMatchObject([{ status: 'failed', failure_reason: 'reverted', actual_fee_native: 0.000005 }]);
    expect(entryTypes(intent)).toEqual(['reserve', 'debit', 'fee', 'release']);
    expect(await solanaReserved()).toBe(0);
  });
});

describe('handleDeadExecution, a transfer may land', () => {
  it('moves the intent to manual_review, and the confirmation worker settles it once the transfer is final', async () => {
    const id = await pay(13);
    // The node took the bytes but the answer was lost; then the job was abandoned.
    await executePayment(deps(answerLost(true)), { payment_intent_id: id, attempt: 1 });
    await handleDeadExecution(deps(), { payment_intent_id: id, attempt: 1 });
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
    await executePayment(deps(answerLost(false)), { payment_intent_id: id, attempt: 1 });
    await handleDeadExecution(deps(), { payment_intent_id: id, attempt: 1 });
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
    await executePayment(deps(answerLost(true)), { payment_intent_id: id, attempt: 1 });
    await handleDeadExecution(deps(), { payment_intent_id: id, attempt: 1 });
    await drainExecution(t); // every job still queued (this retry included) finds its intent past execution
    const intent = await read(id);
    expect(intent.status).toBe('manual_review');
    expect(intent.attempts).toHaveLength(1);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });
});
