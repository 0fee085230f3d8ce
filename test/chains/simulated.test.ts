// The simulated chain adapter: (a) a run replays: the same SIM_SEED and the same operations give the same outcomes on a
// fresh database, whatever random ids the run generated; (b) it is truthful: it never reports bytes as unable to land
// ('expired' / 'failed') while broadcast() would still take them, including while a send of them is in progress.
import { afterEach, describe, expect, it } from 'vitest';
import type { ChainAdapter, SignedTransfer, TxStatus } from '../../src/chains/port.js';
import { ChainError } from '../../src/chains/port.js';
import { withTransaction } from '../../src/db/pool.js';
import { createPayment, createTestContext, ETH_ADDRESS, KEY, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { waitFor } from '../helpers/process.js';
import { confirm, drainExecution } from '../helpers/workers.js';
import { prepareOne, signTransfer } from '../helpers/sign.js';
import { statusOf } from '../helpers/status.js';

const open: TestContext[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((t) => t.close()));
});

async function context(env: Record<string, string>): Promise<TestContext> {
  const t = await createTestContext({ SIM_TREASURY_USDC: '1000', ...env });
  open.push(t);
  return t;
}

const CANNOT_LAND: TxStatus['state'][] = ['expired', 'failed'];
const LANDED: TxStatus['state'][] = ['pending', 'included', 'final'];

async function isRecorded(t: TestContext, txId: string): Promise<boolean> {
  return ((await t.db.pool.query('SELECT 1 FROM sim_transactions WHERE tx_id = $1', [txId])).rowCount ?? 0) > 0;
}

async function send(adapter: ChainAdapter, signed: SignedTransfer): Promise<ChainError | null> {
  try {
    await adapter.broadcast(signed);
    return null;
  } catch (error) {
    if (error instanceof ChainError) return error;
    throw error;
  }
}

/** Signs `count` transfers per chain outside any payment flow, with fixed intent ids. */
async function signMany(t: TestContext, count: number, prefix: string): Promise<{ adapter: ChainAdapter; signed: SignedTransfer }[]> {
  const signedList: { adapter: ChainAdapter; signed: SignedTransfer }[] = [];
  for (let i = 0; i < count; i++) {
    for (const [adapter, to] of [
      [t.ctx.adapters.ethereum!, ETH_ADDRESS],
      [t.ctx.adapters.solana!, SOL_ADDRESS],
    ] as const) {
      const signed = await signTransfer(adapter, t.db.pool, { paymentIntentId: `pi_${prefix}_${i}`, to, amountMicros: 1_000_000n + BigInt(i) });
      signedList.push({ adapter, signed });
    }
  }
  return signedList;
}

// ---------------------------------------------------------------------------------------------------------------
// (a) replay

const REPLAY_ENV = {
  SIM_FAILURE_RATE: '0.5',
  SIM_STUCK_RATE: '0.3',
  SIM_CONFIRM_SECONDS: '4',
  STUCK_AFTER_SECONDS: '60',
  EXECUTION_RETRY_DELAY_SECONDS: '1',
};
const PAYMENTS = 12;

interface PaymentOutcome {
  status: string;
  history: string[];
  attempts: { status: string; failure_reason: string | null; tries: number | null; fee_native: string | null; will_stick: boolean | null }[];
}

/** Drives PAYMENTS payments one after the other through the API and the workers; returns what happened to each. */
async function run(seed: string): Promise<PaymentOutcome[]> {
  const t = await context({ ...REPLAY_ENV, SIM_SEED: seed });
  const ids: string[] = [];
  for (let i = 0; i < PAYMENTS; i++) {
    const destination = i % 2 ? { solana_address: SOL_ADDRESS } : { ethereum_address: ETH_ADDRESS };
    const quote = await t.app.inject({ method: 'POST', url: '/quotes', headers: KEY, payload: { amount_usd: 5 + i, destination, priority: 'fast' } });
    const created = await t.app.inject({
      method: 'POST',
      url: '/payment_intents',
      headers: KEY,
      payload: { quote_id: quote.json().quote_id, idempotency_key: `replay-${i}` },
    });
    expect(created.statusCode).toBe(201);
    ids.push(created.json().payment_intent_id);
    await drainExecution(t);
    for (let poll = 0; poll < 3; poll++) {
      t.clock.advance(2_000);
      await confirm(t);
    }
  }
  t.clock.advance(61_000); // past STUCK_AFTER_SECONDS: whatever still hangs goes to manual review
  await confirm(t);

  const outcomes: PaymentOutcome[] = [];
  for (const id of ids) {
    const intent = await t.db.pool.query<{ status: string }>('SELECT status FROM payment_intents WHERE id = $1', [id]);
    const history = await t.db.pool.query<{ to_status: string }>(
      'SELECT to_status FROM payment_intent_transitions WHERE payment_intent_id = $1 ORDER BY id',
      [id],
    );
    // Attempts of one intent may share created_at (manual clock): order them by their place in the chain's sequence.
    const attempts = await t.db.pool.query<PaymentOutcome['attempts'][number]>(
      `SELECT a.status, a.failure_reason, b.tries, s.fee_native::text AS fee_native, s.will_stick
         FROM payment_attempts a
         LEFT JOIN sim_broadcast_tries b ON b.tx_id = a.tx_id
         LEFT JOIN sim_transactions s ON s.tx_id = a.tx_id
        WHERE a.payment_intent_id = $1
        ORDER BY a.created_at, (a.signed_tx::jsonb->>'chain_sequence')::int NULLS LAST, a.id`,
      [id],
    );
    outcomes.push({ status: intent.rows[0]!.status, history: history.rows.map((r) => r.to_status), attempts: attempts.rows });
  }
  return outcomes;
}

describe('a simulated run replays', () => {
  it('the same seed and the same payments give the same failures, stuck transfers and fees; another seed does not', async () => {
    const first = await run('replay-seed');
    const second = await run('replay-seed');
    expect(second).toEqual(first);

    // The scenario exercises what it claims to replay: failed sends, stuck transfers, settled fees.
    const attempts = first.flatMap((p) => p.attempts);
    expect(attempts.some((a) => a.failure_reason !== null)).toBe(true);
    expect(attempts.some((a) => a.will_stick === true)).toBe(true);
    expect(first.some((p) => p.status === 'settled')).toBe(true);

    const other = await run('another-seed');
    expect(other).not.toEqual(first);
  });

  it('a signature rolled back with its caller gives its number back', async () => {
    const t = await context({ SIM_SEED: 'sequence' });
    const adapter = t.ctx.adapters.ethereum!;
    const request = { paymentIntentId: 'pi_seq', to: ETH_ADDRESS, amountMicros: 1n };
    const sequenceOf = (signed: SignedTransfer) => (JSON.parse(signed.rawTx) as { chain_sequence: number }).chain_sequence;

    const kept = await signTransfer(adapter, t.db.pool, request);
    await expect(
      withTransaction(t.db.pool, async (tx) => {
        await signTransfer(adapter, tx, request);
        throw new Error('the caller rolls back');
      }),
    ).rejects.toThrow('the caller rolls back');
    const next = await signTransfer(adapter, t.db.pool, request);
    const solana = await signTransfer(t.ctx.adapters.solana!, t.db.pool, { ...request, to: SOL_ADDRESS });

    expect(sequenceOf(next)).toBe(sequenceOf(kept) + 1);
    expect(sequenceOf(solana)).toBe(1); // one sequence per chain
    expect(new Set([kept.txId, next.txId]).size).toBe(2); // the same request signed twice: two distinct transactions
  });

  it('two identical payouts (recipient, amount, time) are two transactions: both go out on the first try and settle', async () => {
    const t = await context({ SIM_SEED: 'identical', SIM_FAILURE_RATE: '0', SIM_STUCK_RATE: '0', SIM_CONFIRM_SECONDS: '4' });
    const ids = [await createPayment(t.app, 7, { solana_address: SOL_ADDRESS }), await createPayment(t.app, 7, { solana_address: SOL_ADDRESS })];
    await drainExecution(t);
    const { rows } = await t.db.pool.query('SELECT DISTINCT tx_id FROM payment_attempts WHERE payment_intent_id = ANY($1)', [ids]);
    expect(rows).toHaveLength(2);
    t.clock.advance(5_000);
    await confirm(t);
    const statuses = await t.db.pool.query('SELECT status FROM payment_intents WHERE id = ANY($1)', [ids]);
    expect(statuses.rows.map((r) => r.status)).toEqual(['settled', 'settled']);
  });

  it('signs a batch in order, numbered as one-by-one signatures would be, and a rolled-back batch gives its numbers back', async () => {
    const t = await context({ SIM_SEED: 'batch' });
    const adapter = t.ctx.adapters.solana!;
    // Each transaction's number in the chain's sequence, and the payments it pays.
    const sequenceOf = (signed: SignedTransfer) => {
      const body = JSON.parse(signed.rawTx) as { chain_sequence: number; transfers: { ref: string }[] };
      return { chain_sequence: body.chain_sequence, ref: body.transfers.map((transfer) => transfer.ref).join(',') };
    };
    const prepare = (ref: string) => prepareOne(adapter, { paymentIntentId: ref, to: SOL_ADDRESS, amountMicros: 5n });

    const first = await signTransfer(adapter, t.db.pool, { paymentIntentId: 'pi_one', to: SOL_ADDRESS, amountMicros: 5n });
    await expect(
      withTransaction(t.db.pool, async (tx) => {
        await adapter.signAll!(tx, [await prepare('pi_lost_a'), await prepare('pi_lost_b')]);
        throw new Error('the caller rolls back');
      }),
    ).rejects.toThrow('the caller rolls back');
    const batch = await withTransaction(t.db.pool, async (tx) => adapter.signAll!(tx, [await prepare('pi_a'), await prepare('pi_b'), await prepare('pi_c')]));
    const after = await signTransfer(adapter, t.db.pool, { paymentIntentId: 'pi_after', to: SOL_ADDRESS, amountMicros: 5n });

    expect([first, ...batch, after].map(sequenceOf)).toEqual([
      { chain_sequence: 1, ref: 'pi_one' },
      { chain_sequence: 2, ref: 'pi_a' },
      { chain_sequence: 3, ref: 'pi_b' },
      { chain_sequence: 4, ref: 'pi_c' },
      { chain_sequence: 5, ref: 'pi_after' },
    ]);
    // A batch signs what a one-by-one signature at the same number would: the same bytes.
    const alone = await withTransaction(t.db.pool, async (tx) => {
      await tx.query('UPDATE sim_wallets SET last_sequence = 1 WHERE chain = $1', ['solana']);
      return (await prepare('pi_a')).sign(tx, null);
    });
    expect(alone).toEqual(batch[0]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// (b) truthfulness

describe('the simulated node is truthful about bytes it does not hold', () => {
  it('after a refused or timed-out send, it reports bytes as unable to land only once broadcast() refuses them for good', async () => {
    const t = await context({ SIM_SEED: 'truth', SIM_FAILURE_RATE: '0.6' });
    let refusals = 0;
    let lostTimeouts = 0;
    let landedOnResend = 0;
    for (const { adapter, signed } of await signMany(t, 15, 'truth')) {
      let claimedDead = false;
      let lostBefore = false;
      for (let round = 0; round < 6; round++) {
        const error = await send(adapter, signed);
        const recorded = await isRecorded(t, signed.txId);
        const status = await statusOf(adapter, signed);
        if (claimedDead) {
          // Once reported unable to land, the node must never take those bytes.
          expect(error?.outcome, `${signed.txId} round ${round}`).toBe('rejected');
          expect(recorded).toBe(false);
        }
        if (recorded) {
          expect(LANDED).toContain(status.state);
          if (lostBefore) landedOnResend++;
          break;
        }
        if (error?.outcome === 'rejected') {
          refusals++;
          // A refusal means the bytes can never land (the port's promise), and the node says so.
          expect(status.state).toBe('expired');
        } else {
          // A timeout the node never recorded: the bytes may still land if sent again.
          expect(error?.outcome).toBe('unknown');
          expect(status.state).toBe('unknown');
          lostTimeouts++;
          lostBefore = true;
        }
        if (CANNOT_LAND.includes(status.state)) claimedDead = true;
      }
    }
    expect(refusals).toBeGreaterThan(0);
    expect(lostTimeouts).toBeGreaterThan(0);
    expect(landedOnResend).toBeGreaterThan(0);
  });

  it('concurrent sends of the same bytes never see one refused and another taken', async () => {
    const t = await context({ SIM_SEED: 'concurrent', SIM_FAILURE_RATE: '0.5' });
    let refused = 0;
    for (const { adapter, signed } of await signMany(t, 15, 'concurrent')) {
      const errors = await Promise.all([send(adapter, signed), send(adapter, signed), send(adapter, signed)]);
      const rejected = errors.some((e) => e?.outcome === 'rejected');
      if (rejected) refused++;
      expect(rejected && (await isRecorded(t, signed.txId)), signed.txId).toBe(false);
    }
    expect(refused).toBeGreaterThan(0);
  });

  it('a send in progress reads as unknown, never as unable to land', async () => {
    const t = await context({ SIM_SEED: 'in-progress', SIM_FAILURE_RATE: '0' });
    const adapter = t.ctx.adapters.solana!;
    const signed = await signTransfer(adapter, t.db.pool, { paymentIntentId: 'pi_in_progress', to: SOL_ADDRESS, amountMicros: 5n });

    // Hold the send between its decision and its commit: an uncommitted row with the same tx id makes the node's
    // record wait on this transaction.
    const blocker = await t.db.pool.connect();
    try {
      const holder = (await blocker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await blocker.query('BEGIN');
      await blocker.query(
        `INSERT INTO sim_transactions (tx_id, chain, raw_tx, to_address, amount_micros, fee_native, will_stick, submitted_at, included_at, final_at)
         VALUES ($1, 'solana', '{}', 'x', 0, 0, false, now(), now(), now())`,
        [signed.txId],
      );
      const sending = adapter.broadcast(signed);
      await waitForLockWait(t, holder);

      // Run B of an overlapping job asks the node now: these bytes must not read as unable to land.
      expect((await statusOf(adapter, signed)).state).toBe('unknown');
      const resending = adapter.broadcast(signed);

      await blocker.query('ROLLBACK');
      await Promise.all([sending, resending]);
    } finally {
      blocker.release();
    }
    expect(LANDED).toContain((await statusOf(adapter, signed)).state);
    const rows = await t.db.pool.query('SELECT 1 FROM sim_transactions WHERE tx_id = $1', [signed.txId]);
    expect(rows.rowCount).toBe(1);
  });
});

/** Waits (bounded) until some backend of this database waits on a lock held by `holderPid`. */
async function waitForLockWait(t: TestContext, holderPid: number): Promise<void> {
  await waitFor(
    'the send to reach the blocked insert',
    async () => {
      const { rows } = await t.db.pool.query<{ n: number }>(
        `SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND $1::int = ANY(pg_blocking_pids(pid))`,
        [holderPid],
      );
      return rows[0]!.n > 0;
    },
    5_000,
    10,
  );
}

// ---------------------------------------------------------------------------------------------------------------
// (c) tokens (issue 40)

describe('a simulated chain pays each configured token', () => {
  it('a transaction moves one token: USDT and USDC requests prepared together go out apart, each balance per token', async () => {
    const t = await context({ ETHEREUM_TOKENS: 'usdc,usdt', SIM_CONFIRM_SECONDS: '4' });
    const adapter = t.ctx.adapters.ethereum!;
    const requests = [
      { paymentIntentId: 'pi_tok_a', to: ETH_ADDRESS, amountMicros: 1_000_000n, token: 'usdt' as const },
      { paymentIntentId: 'pi_tok_b', to: ETH_ADDRESS, amountMicros: 2_000_000n },
      { paymentIntentId: 'pi_tok_c', to: ETH_ADDRESS, amountMicros: 3_000_000n, token: 'usdt' as const },
    ];
    const prepared = await adapter.prepareTransfers(requests);
    expect(prepared[0]).toBe(prepared[2]);
    expect(prepared[1]).not.toBe(prepared[0]);
    // Tether's transfer costs more gas than Circle's: so do its fees.
    expect((await adapter.estimateFee('usdt')).feeNative).toBeGreaterThan((await adapter.estimateFee()).feeNative);
    const once = [prepared[0], prepared[1]].map((p) => {
      if (p === undefined || p instanceof ChainError) throw new Error('the simulated chain refused to prepare');
      return p;
    });
    const signed = await withTransaction(t.db.pool, async (tx) => adapter.signAll!(tx, once));
    for (const s of signed) expect(await send(adapter, s)).toBeNull();
    expect(JSON.parse(signed[0]!.rawTx)).toMatchObject({ token: 'usdt' });
    expect(JSON.parse(signed[1]!.rawTx)).not.toHaveProperty('token');
    t.clock.advance(10_000);
    expect(await adapter.getStatuses(signed)).toMatchObject([{ state: 'final' }, { state: 'final' }]);
    // Every token opens with SIM_TREASURY_USDC (decision 236).
    expect(await adapter.treasuryTokenBalance('usdt')).toBe(1000_000_000n - 4_000_000n);
    expect(await adapter.treasuryTokenBalance('usdc')).toBe(1000_000_000n - 2_000_000n);
  });
});
