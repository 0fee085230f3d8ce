// The execution worker's decisions when the chain answers badly. The simulated Ethereum adapter does the signing
// and bookkeeping; its broadcast and status answers are scripted per test, so each case is exact.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ChainError, type ChainAdapter, type SignedTransfer, type TxStatus } from '../../src/chains/port.js';
import type { ExecutionJob } from '../../src/jobs/queue.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import type { ExecutionDeps } from '../../src/core/payments/execute/execute.js';
import { createPayment, createTestContext, ETH_ADDRESS, KEY, type TestContext } from '../helpers/context.js';
import { executeAlone } from '../helpers/workers.js';

let t: TestContext;
afterEach(async () => t?.close());

type Broadcast = () => Promise<void>;
const ok: Broadcast = async () => undefined;
const timeout: Broadcast = async () => {
  throw new ChainError('rpc_timeout', 'unknown', 'timed out');
};
const refused: Broadcast = async () => {
  throw new ChainError('insufficient_gas', 'rejected', 'insufficient funds for gas');
};

/** The simulated Ethereum adapter with scripted broadcast results and chain statuses, consumed in order. */
function scripted(real: ChainAdapter, broadcasts: Broadcast[], statuses: TxStatus[], signRefusal?: ChainError): ChainAdapter & { sent: string[] } {
  const sent: string[] = [];
  return {
    ...real,
    sent,
    prepareTransfers: async (requests) => {
      if (signRefusal) throw signRefusal;
      return real.prepareTransfers(requests);
    },
    async broadcast(signed: SignedTransfer) {
      sent.push(signed.txId);
      const next = broadcasts.shift();
      if (!next) throw new Error('unexpected broadcast');
      return next();
    },
    async getStatuses(signed) {
      return signed.map(() => {
        const next = statuses.shift();
        if (!next) throw new Error('unexpected status read');
        return next;
      });
    },
  };
}

async function setup(broadcasts: Broadcast[], statuses: TxStatus[], signRefusal?: ChainError) {
  t = await createTestContext({ SIM_TREASURY_USDC: '1000' });
  const adapter = scripted(t.ctx.adapters.ethereum!, broadcasts, statuses, signRefusal);
  const deps: ExecutionDeps = { ...t.ctx, adapters: { ...t.ctx.adapters, ethereum: adapter }, log: pino({ level: 'silent' }) };
  const id = await createPayment(t.app, 40, { ethereum_address: ETH_ADDRESS });
  const run = (attempt: number) => executeAlone(deps, { payment_intent_id: id, attempt } satisfies ExecutionJob);
  return { id, adapter, run };
}

const failures = async () => (await t.app.inject({ method: 'GET', url: '/admin/failures' })).json();
const read = async (id: string) => (await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json();
const queuedAttempts = async (id: string) =>
  (
    await t.db.pool.query<{ attempt: number }>(
      "SELECT (data->>'attempt')::int AS attempt FROM pgboss.job WHERE name = 'payment-execute' AND data->>'payment_intent_id' = $1 ORDER BY 1",
      [id],
    )
  ).rows.map((r) => r.attempt);

describe('execution worker', () => {
  it('a refused re-send of bytes whose first send timed out does not end them: no second transfer is signed', async () => {
    const { id, adapter, run } = await setup([timeout, refused, refused], [{ state: 'unknown' }, { state: 'unknown' }]);
    await run(1);
    let intent = await read(id);
    expect(intent.status).toBe('retrying');
    expect(intent.attempts).toHaveLength(1);

    await run(2); // the node does not know the bytes; they are sent again and refused
    intent = await read(id);
    expect(intent.status).toBe('retrying');
    expect(intent.attempts).toHaveLength(1);
    expect(intent.attempts[0].status).not.toBe('failed');

    await run(3); // out of attempts, outcome still unknown: watched by the confirmation worker, funds kept
    intent = await read(id);
    expect(intent.status).toBe('broadcasted');
    expect(intent.attempts).toHaveLength(1);
    expect(intent.attempts[0].status).toBe('broadcasted');
    expect(new Set(adapter.sent).size).toBe(1); // the same bytes, three times
    expect(intent.ledger_entries.map((e: { type: string }) => e.type)).toEqual(['reserve', 'debit']);
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
  });

  it('freshly signed bytes the node refuses are over at once, and the retry signs anew', async () => {
    const { id, adapter, run } = await setup([refused, ok], []);
    await run(1);
    t.clock.advance(5_000);
    await run(2);
    const intent = await read(id);
    expect(intent.status).toBe('broadcasted');
    expect(intent.attempts.map((a: { status: string; failure_reason: string | null }) => [a.status, a.failure_reason])).toEqual([
      ['failed', 'insufficient_gas'],
      ['broadcasted', null],
    ]);
    expect(new Set(adapter.sent).size).toBe(2);
  });

  it('a stale re-run of an earlier attempt whose outcome already committed does nothing', async () => {
    const { id, adapter, run } = await setup([refused], []);
    await run(1);
    expect(await queuedAttempts(id)).toEqual([1, 2]);
    await run(1); // pg-boss re-runs job 1 (its completion was lost), while job 2 waits
    const intent = await read(id);
    expect(intent.status).toBe('retrying');
    expect(intent.attempts).toHaveLength(1);
    expect(adapter.sent).toHaveLength(1);
    expect(await queuedAttempts(id)).toEqual([1, 2]);
  });

  it('a transfer found reverted on chain during the claim fails the intent with its fee; nothing is signed anew', async () => {
    const { id, adapter, run } = await setup([timeout], [{ state: 'failed', reason: 'reverted', feeNative: 123_456_789n, details: 'execution reverted' }]);
    await run(1);
    await run(2);
    const intent = await read(id);
    expect(intent.status).toBe('failed');
    expect(intent.attempts).toHaveLength(1);
    expect(intent.attempts[0]).toMatchObject({ status: 'failed', failure_reason: 'reverted', actual_fee_native: 1.23456789e-10 });
    expect(intent.ledger_entries.map((e: { type: string; currency: string }) => [e.type, e.currency])).toEqual([
      ['reserve', 'USDC'],
      ['debit', 'USDC'],
      ['fee', 'ETH'],
      ['release', 'USDC'],
    ]);
    expect(adapter.sent).toHaveLength(1);
    expect(await queuedAttempts(id)).toEqual([1, 2]);
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
  });

  it('a payment whose first send timed out and then went through is not counted as a failure', async () => {
    const { id, run } = await setup([timeout, ok], [{ state: 'unknown' }]);
    await run(1);
    await run(2);
    expect((await read(id)).status).toBe('broadcasted');
    expect(await failures()).toEqual([]);
  });

  it('signatures the chain refuses fail the payment after 3 attempts and show in /admin/failures', async () => {
    const refusal = new ChainError('insufficient_funds', 'rejected', 'the treasury lacks USDC on chain');
    const { id, adapter, run } = await setup([], [], refusal);
    for (const attempt of [1, 2, 3]) await run(attempt);
    const intent = await read(id);
    expect(intent.status).toBe('failed');
    expect(intent.attempts).toEqual([]);
    expect(intent.ledger_entries.map((e: { type: string }) => e.type)).toEqual(['reserve', 'release']);
    expect(adapter.sent).toEqual([]);
    expect(await failures()).toEqual([{ failure_reason: 'insufficient_funds', chain: 'ethereum', count: '3' }]);
  });
});
