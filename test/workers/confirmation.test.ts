// The confirmation worker under load and contention: a backlog of unresolved transfers does not starve newer ones,
// a poll never waits on an intent someone else holds, and two polls never handle the same attempt.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdapters } from '../../src/chains/factory.js';
import type { TxStatus } from '../../src/chains/port.js';
import { loadConfig } from '../../src/config.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { CONFIRMATION_PAGE_ATTEMPTS } from '../../src/bounds.js';
import { confirmRound } from '../../src/core/payments/confirm/round.js';
import type { SignedTransfer } from '../../src/domain/chain.js';
import { decideConfirmation } from '../../src/domain/confirmation.js';
import { transferVerdict } from '../../src/domain/transfer-verdict.js';
import { createPayment, createTestContext, type TestContext } from '../helpers/context.js';
import { confirm, drainExecution } from '../helpers/workers.js';

let t: TestContext | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

function ctx(): TestContext {
  if (!t) throw new Error('no test context');
  return t;
}

const pay = (amount: number) => createPayment(ctx().app, amount);

const statusOf = async (id: string): Promise<string> =>
  (await ctx().db.pool.query<{ status: string }>('SELECT status FROM payment_intents WHERE id = $1', [id])).rows[0]!.status;
const countWithStatus = async (status: string): Promise<number> =>
  (await ctx().db.pool.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM payment_intents WHERE status = $1', [status])).rows[0]!.n;

/** Resolves to 'blocked' if `work` has not finished after `ms`: a poll must never wait on a lock. */
function orBlocked<T>(work: Promise<T>, ms: number): Promise<T | 'blocked'> {
  let timer: NodeJS.Timeout | undefined;
  const watchdog = new Promise<'blocked'>((resolve) => {
    timer = setTimeout(() => resolve('blocked'), ms);
  });
  return Promise.race([work, watchdog]).finally(() => clearTimeout(timer));
}

describe('decideConfirmation', () => {
  const base = { intentStatus: 'broadcasted' as const, purpose: 'transfer' as const, txPayments: 1, broadcastAt: new Date(0), now: new Date(1_000), stuckAfterSeconds: 600 };
  const expired: TxStatus = { state: 'expired' };

  it('names a transfer that can no longer land in its chain own terms', () => {
    const solana = transferVerdict(expired, { chain: 'solana' });
    const ethereum = transferVerdict(expired, { chain: 'ethereum' });
    expect(decideConfirmation({ ...base, verdict: solana })).toMatchObject({ kind: 'fail', reason: 'blockhash_expired' });
    expect(decideConfirmation({ ...base, verdict: ethereum })).toMatchObject({ kind: 'fail', reason: 'dropped' });
  });
});

describe('the confirmation worker', () => {
  it('one round looks at every open attempt, more than a thousand, in batched status calls', { timeout: 240_000 }, async () => {
    const env = { SIM_TREASURY_USDC: '100000', SIM_STUCK_RATE: '1', STUCK_AFTER_SECONDS: '600' };
    t = await createTestContext(env);
    const stuck = CONFIRMATION_PAGE_ATTEMPTS + 10;
    for (let i = 0; i < stuck; i++) await pay(1);
    await drainExecution(t, 2 * stuck);
    t.clock.advance(601_000);
    // Every stuck transfer reaches manual review in one round, asked about in one status call per page.
    const calls: number[] = [];
    const counting = {
      ...t.ctx.adapters,
      solana: { ...t.ctx.adapters.solana!, getStatuses: (signed: readonly SignedTransfer[]) => (calls.push(signed.length), t!.ctx.adapters.solana!.getStatuses(signed)) },
    };
    const round = await confirmRound({ ...t.ctx, adapters: counting, log: pino({ level: 'silent' }) });
    expect(round).toMatchObject({ seen: stuck, manualReview: stuck });
    expect(calls).toEqual([CONFIRMATION_PAGE_ATTEMPTS, stuck - CONFIRMATION_PAGE_ATTEMPTS]);
    expect(await countWithStatus('manual_review')).toBe(stuck);

    // A healthy transfer, broadcast after the backlog formed (same simulated network, no stuck transactions).
    const healthyConfig = loadConfig({ NODE_ENV: 'test', ...env, SIM_STUCK_RATE: '0', DATABASE_URL: t.db.url });
    const healthy = await createAdapters(healthyConfig, t.db.pool, t.clock, pino({ level: 'silent' }));
    const id = await pay(5);
    await drainExecution({ ...t, ctx: { ...t.ctx, adapters: healthy } });
    expect(await statusOf(id)).toBe('broadcasted');
    t.clock.advance(20_000); // past Solana finality on the simulator

    // The next round reaches it behind the whole backlog, and the backlog is still watched.
    expect(await confirm(t)).toMatchObject({ seen: stuck + 1, settled: 1, manualReview: 0 });
    expect(await statusOf(id)).toBe('settled');
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });

  it('skips an intent another transaction holds instead of waiting, so it never deadlocks with an operator', async () => {
    t = await createTestContext({ SIM_TREASURY_USDC: '1000' });
    const id = await pay(3);
    await drainExecution(t);
    t.clock.advance(20_000);
    const attemptId = (await t.db.pool.query<{ id: string }>('SELECT id FROM payment_attempts WHERE payment_intent_id = $1', [id])).rows[0]!.id;

    // An operator (or the execution worker) holds the intent and will next lock its attempt: the order every writer uses.
    const operator = await t.db.pool.connect();
    let poll: Promise<unknown> | undefined;
    try {
      await operator.query('BEGIN');
      await operator.query('SELECT 1 FROM payment_intents WHERE id = $1 FOR UPDATE', [id]);
      poll = confirm(t);
      const summary = await orBlocked(poll, 3_000);
      expect(summary).not.toBe('blocked');
      expect(summary).toMatchObject({ checked: 0, settled: 0 });
      // The poll holds nothing of this intent: the operator gets the attempt at once.
      await operator.query('SELECT 1 FROM payment_attempts WHERE id = $1 FOR UPDATE NOWAIT', [attemptId]);
    } finally {
      await operator.query('ROLLBACK').catch(() => undefined);
      operator.release();
      await poll?.catch(() => undefined);
    }
    expect(await statusOf(id)).toBe('broadcasted');

    // Once released, the next poll (the attempt stays first in line) settles it.
    expect((await confirm(t)).settled).toBe(1);
    expect(await statusOf(id)).toBe('settled');
  });

  it('one round writes mixed verdicts: settlements, inclusions and a failure in one batch, a held payment skipped', async () => {
    t = await createTestContext({ SIM_TREASURY_USDC: '1000' });
    const [final, included, reverted, held, pending] = [await pay(1), await pay(2), await pay(3), await pay(4), await pay(5)];
    await drainExecution(t);
    const txOf = async (id: string) =>
      (await t!.db.pool.query<{ tx_id: string }>('SELECT tx_id FROM payment_attempts WHERE payment_intent_id = $1', [id])).rows[0]!.tx_id;
    const said = new Map<string, TxStatus>([
      [await txOf(final), { state: 'final', feeNative: 5000n }],
      [await txOf(held), { state: 'final', feeNative: 5000n }],
      [await txOf(included), { state: 'included', confirmations: 1 }],
      [await txOf(reverted), { state: 'failed', reason: 'reverted', feeNative: 4000n }],
      [await txOf(pending), { state: 'pending' }],
    ]);
    const chain = { ...t.ctx.adapters.solana!, getStatuses: async (signed: readonly SignedTransfer[]) => signed.map((s) => said.get(s.txId)!) };
    const operator = await t.db.pool.connect();
    try {
      await operator.query('BEGIN');
      await operator.query('SELECT 1 FROM payment_intents WHERE id = $1 FOR UPDATE', [held]);
      const round = await confirmRound({ ...t.ctx, adapters: { ...t.ctx.adapters, solana: chain }, log: pino({ level: 'silent' }) });
      expect(round).toMatchObject({ seen: 5, settled: 1, failed: 1, checked: 3 });
    } finally {
      await operator.query('ROLLBACK');
      operator.release();
    }
    expect(await Promise.all([final, included, reverted, held, pending].map(statusOf))).toEqual([
      'settled',
      'pending_confirmation',
      'failed',
      'broadcasted',
      'broadcasted',
    ]);
    const { rows: events } = await t.db.pool.query<{ payment_intent_id: string; event_type: string }>(
      "SELECT payment_intent_id, event_type FROM webhook_events WHERE event_type IN ('payment.settled', 'payment.failed') ORDER BY event_type",
    );
    expect(events).toEqual([
      { payment_intent_id: reverted, event_type: 'payment.failed' },
      { payment_intent_id: final, event_type: 'payment.settled' },
    ]);
    const { rows: attempts } = await t.db.pool.query<{ payment_intent_id: string; status: string; included: boolean; fee: string | null }>(
      'SELECT payment_intent_id, status, included_at IS NOT NULL AS included, actual_fee_native::text AS fee FROM payment_attempts WHERE payment_intent_id = ANY($1)',
      [[final, included]],
    );
    expect(attempts.sort((a, b) => (a.payment_intent_id === final ? -1 : b.payment_intent_id === final ? 1 : 0))).toEqual([
      { payment_intent_id: final, status: 'confirmed', included: false, fee: '5000' },
      { payment_intent_id: included, status: 'broadcasted', included: true, fee: null },
    ]);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });

  it('two concurrent polls settle each payment once', async () => {
    t = await createTestContext({ SIM_TREASURY_USDC: '1000' });
    const ids: string[] = [];
    for (let i = 1; i <= 20; i++) ids.push(await pay(i));
    await drainExecution(t);
    t.clock.advance(20_000);
    const [a, b] = await Promise.all([confirm(t), confirm(t)]);
    const settledNow = a.settled + b.settled;
    // A payment one poll skipped (the other held it) is settled by the next poll.
    const again = await confirm(t);
    expect(settledNow + again.settled).toBe(ids.length);
    const settledEvents = await t.db.pool.query<{ payment_intent_id: string; n: number }>(
      "SELECT payment_intent_id, COUNT(*)::int AS n FROM webhook_events WHERE event_type = 'payment.settled' GROUP BY payment_intent_id",
    );
    expect(settledEvents.rows).toHaveLength(ids.length);
    expect(settledEvents.rows.every((r) => r.n === 1)).toBe(true);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });
});
