// On-chain batches on the simulated chains (issue 28): the payments of one chain that an execution batch prepares
// together go out in one chain transaction, signed once and sent once. Each payment keeps its own attempt (they share
// the tx id), its own status changes and webhooks, and books its own share of the transaction's fee: the shares add up
// to exactly what the chain charged.
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SIMULATED_BATCH_TRANSFERS_MAX } from '../../src/bounds.js';
import { executeBatch } from '../../src/core/payments/execute/execute.js';
import { runOf } from '../../src/core/payments/execute/run.js';
import { ChainError, type ChainAdapter } from '../../src/chains/port.js';
import { reconcile } from '../../src/core/treasury/reconcile.js';
import { EXECUTION_QUEUE, type ExecutionJob } from '../../src/jobs/queue.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createPayment, createTestContext, ETH_ADDRESS, KEY, type TestContext } from '../helpers/context.js';
import { confirm, drainExecution } from '../helpers/workers.js';

const quiet = pino({ level: 'silent' });
let t: TestContext;
afterEach(async () => t?.close());

/** Every queued execution job, run as one execution batch (as one poll of the worker fetches them). */
async function executeQueued(adapters = t.ctx.adapters): Promise<void> {
  const jobs = await t.boss.fetch<ExecutionJob>(EXECUTION_QUEUE, { batchSize: 16 });
  const outcomes = await executeBatch({ ...t.ctx, adapters, log: quiet }, jobs.map((job) => runOf(job.data)));
  for (const [k, outcome] of outcomes.entries()) {
    if (!outcome.ok) throw outcome.error;
    await t.boss.complete(EXECUTION_QUEUE, jobs[k]!.id);
  }
}

interface AttemptFacts {
  payment_intent_id: string;
  tx_id: string;
  status: string;
  tx_payments: number;
  tx_payment_index: number;
  actual_fee_native: string | null;
}

async function attemptsOf(ids: string[]): Promise<AttemptFacts[]> {
  const { rows } = await t.db.pool.query<AttemptFacts>(
    `SELECT payment_intent_id, tx_id, status, tx_payments, tx_payment_index, actual_fee_native::text
       FROM payment_attempts WHERE payment_intent_id = ANY($1) ORDER BY tx_payment_index`,
    [ids],
  );
  return rows;
}

/** The fee each payment booked in the ledger, in the chain's smallest unit. */
async function feesBooked(ids: string[]): Promise<Map<string, bigint>> {
  const { rows } = await t.db.pool.query<{ intent: string; amount: string }>(
    `SELECT t.payment_intent_id AS intent, SUM(p.amount)::text AS amount
       FROM ledger_transactions t JOIN ledger_postings p ON p.transaction_id = t.id JOIN ledger_accounts a ON a.id = p.account_id
      WHERE t.type = 'fee' AND t.payment_intent_id = ANY($1) AND p.amount > 0 GROUP BY 1`,
    [ids],
  );
  return new Map(rows.map((r) => [r.intent, BigInt(r.amount)]));
}

describe('on-chain batches on the simulated chain', () => {
  it('pays the payments of one chain in one transaction; each settles on its own with its share of the fee', async () => {
    t = await createTestContext({ SIM_TREASURY_USDC: '1000' });
    const solana: string[] = [];
    for (let i = 1; i <= 5; i++) solana.push(await createPayment(t.app, i));
    const ethereum = await createPayment(t.app, 7, { ethereum_address: ETH_ADDRESS });
    await executeQueued();

    // One Solana transaction paying the five, each payout once; Ethereum's payment in a transaction of its own.
    const payouts = await t.db.pool.query<{ tx_id: string; ref: string; amount_micros: string }>('SELECT tx_id, ref, amount_micros::text FROM sim_payouts');
    const solanaTx = new Set(payouts.rows.filter((p) => solana.includes(p.ref)).map((p) => p.tx_id));
    expect(solanaTx.size).toBe(1);
    expect(payouts.rows.map((p) => p.ref).sort()).toEqual([...solana, ethereum].sort());
    const [txId] = [...solanaTx];
    expect((await t.db.pool.query('SELECT COUNT(*)::int AS n FROM sim_transactions')).rows[0].n).toBe(2);

    const attempts = await attemptsOf(solana);
    expect(attempts.map((a) => [a.tx_id, a.status, a.tx_payments, a.tx_payment_index])).toEqual(
      [0, 1, 2, 3, 4].map((index) => [txId, 'broadcasted', 5, index]),
    );
    for (const id of solana) {
      const intent = (await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json();
      expect(intent.status).toBe('broadcasted');
    }

    t.clock.advance(1_200_000); // past both simulated chains' finality
    await confirm(t);

    // Each payment settled, its own webhook naming the shared transaction and its own share of the fee.
    const { rows: chainFee } = await t.db.pool.query<{ fee: string }>('SELECT fee_native::text AS fee FROM sim_transactions WHERE tx_id = $1', [txId]);
    const fee = BigInt(chainFee[0]!.fee);
    const settled = await attemptsOf(solana);
    expect(settled.every((a) => a.status === 'confirmed')).toBe(true);
    const shares = settled.map((a) => BigInt(a.actual_fee_native!));
    expect(shares.reduce((a, b) => a + b, 0n)).toBe(fee);
    expect(shares[0]! - shares[4]!).toBeLessThanOrEqual(1n);
    const booked = await feesBooked(solana);
    expect(settled.map((a) => booked.get(a.payment_intent_id))).toEqual(shares);

    const { rows: events } = await t.db.pool.query<{ payment_intent_id: string; payload: { tx_id: string } }>(
      "SELECT payment_intent_id, payload FROM webhook_events WHERE event_type = 'payment.settled' AND payment_intent_id = ANY($1)",
      [solana],
    );
    expect(events).toHaveLength(5);
    for (const event of events) expect(event.payload.tx_id).toBe(txId);
    for (const id of [...solana, ethereum]) {
      const intent = (await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json();
      expect(intent.status).toBe('settled');
    }

    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
    for (const report of await reconcile(t.db.pool, t.ctx.adapters)) expect(report.status, JSON.stringify(report)).toBe('ok');
  });

  it(`goes out in transactions of at most ${SIMULATED_BATCH_TRANSFERS_MAX} payments, sent once each`, async () => {
    t = await createTestContext({ SIM_TREASURY_USDC: '1000' });
    const ids: string[] = [];
    for (let i = 0; i < SIMULATED_BATCH_TRANSFERS_MAX + 2; i++) ids.push(await createPayment(t.app, 1));
    const real = t.ctx.adapters.solana!;
    const sent: string[] = [];
    const solana: ChainAdapter = { ...real, broadcast: async (signed) => (sent.push(signed.txId), real.broadcast(signed)) };
    // Two polls: the first takes 16 jobs (one transaction), the second the 2 left (another).
    await executeQueued({ ...t.ctx.adapters, solana });
    await executeQueued({ ...t.ctx.adapters, solana });
    const attempts = await attemptsOf(ids);
    const byTx = new Map<string, number>();
    for (const a of attempts) byTx.set(a.tx_id, (byTx.get(a.tx_id) ?? 0) + 1);
    expect([...byTx.values()].sort((a, b) => b - a)).toEqual([16, 2]);
    expect(sent.sort()).toEqual([...byTx.keys()].sort());
  });

  it('a recipient screened out right before signing fails alone; the others go out in one transaction without it', async () => {
    t = await createTestContext({ SIM_TREASURY_USDC: '1000' });
    const ids = [await createPayment(t.app, 1), await createPayment(t.app, 2), await createPayment(t.app, 3)];
    const refused = ids[1]!;
    const screener = t.ctx.screener;
    const screening: typeof screener = {
      ...screener,
      screen: async (recipients) => (await screener.screen(recipients)).map((verdict, k) => (recipients[k]!.amountMicros === 2_000_000n ? { hit: true, by: 'list', source: 'test' } : verdict)),
    };
    const jobs = await t.boss.fetch<ExecutionJob>(EXECUTION_QUEUE, { batchSize: 16 });
    const outcomes = await executeBatch({ ...t.ctx, screener: screening, log: quiet }, jobs.map((job) => runOf(job.data)));
    expect(outcomes.every((o) => o.ok)).toBe(true);

    const intent = (await t.app.inject({ method: 'GET', url: `/payment_intents/${refused}`, headers: KEY })).json();
    expect(intent.status).toBe('failed');
    const { rows: failed } = await t.db.pool.query("SELECT payload FROM webhook_events WHERE event_type = 'payment.failed' AND payment_intent_id = $1", [refused]);
    expect(failed.map((e) => e.payload.failure_reason)).toEqual(['screening_hit']);
    const attempts = await attemptsOf(ids);
    expect(attempts.map((a) => a.payment_intent_id).sort()).toEqual([ids[0], ids[2]].sort());
    expect(new Set(attempts.map((a) => a.tx_id)).size).toBe(1);
    expect(attempts.map((a) => a.tx_payments)).toEqual([2, 2]);
    const payouts = await t.db.pool.query<{ ref: string }>('SELECT ref FROM sim_payouts');
    expect(payouts.rows.map((p) => p.ref).sort()).toEqual([ids[0], ids[2]].sort());
  });

  it('a batch the node refuses because of one payment is split: each is retried alone, the guilty one fails alone', async () => {
    t = await createTestContext({ SIM_TREASURY_USDC: '1000' });
    const ids = [await createPayment(t.app, 1), await createPayment(t.app, 2), await createPayment(t.app, 3)];
    const guilty = ids[1]!;
    // A node that refuses any transaction paying the guilty payment (a recipient the token refuses, say).
    const real = t.ctx.adapters.solana!;
    const refusing: ChainAdapter = {
      ...real,
      broadcast: async (signed) => {
        const paid = (JSON.parse(signed.rawTx) as { transfers: { ref: string }[] }).transfers.map((p) => p.ref);
        if (paid.includes(guilty)) throw new ChainError('reverted', 'rejected', 'simulated node rejected the transaction: reverted', { details: `pays ${guilty}` });
        return real.broadcast(signed);
      },
    };
    const adapters = { ...t.ctx.adapters, solana: refusing };
    await executeQueued(adapters);
    // The three went out together and were refused together: each is retrying, none failed for it.
    const first = await attemptsOf(ids);
    expect(first.map((a) => [a.status, a.tx_payments])).toEqual([['failed', 3], ['failed', 3], ['failed', 3]]);
    for (const id of ids) expect((await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json().status).toBe('retrying');

    // Their next runs, in one batch, prepare each alone: the two others go out, each in a transaction of its own. The
    // payment's failed batch attempt says so, not its job: the runs are built from the bare job, as an operator's retry
    // or a lease sweep builds them.
    const retries = await t.boss.fetch<ExecutionJob>(EXECUTION_QUEUE, { batchSize: 16, ignoreStartAfter: true });
    expect(retries).toHaveLength(3);
    const bare = retries.map((job) => runOf({ payment_intent_id: job.data.payment_intent_id, attempt: job.data.attempt }));
    for (const outcome of await executeBatch({ ...t.ctx, adapters, log: quiet }, bare)) expect(outcome.ok).toBe(true);
    for (const job of retries) await t.boss.complete(EXECUTION_QUEUE, job.id);
    expect((await attemptsOf(ids)).filter((a) => a.tx_payments > 1)).toHaveLength(3); // the first batch's, no other
    await drainExecution({ ...t, ctx: { ...t.ctx, adapters } }, 1000, { together: true });
    t.clock.advance(1_200_000);
    await confirm(t);
    const status = async (id: string) => (await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json().status;
    expect(await status(ids[0]!)).toBe('settled');
    expect(await status(ids[2]!)).toBe('settled');
    expect(await status(guilty)).toBe('failed');
    const { rows: failed } = await t.db.pool.query("SELECT payload FROM webhook_events WHERE event_type = 'payment.failed' AND payment_intent_id = ANY($1)", [ids]);
    expect(failed.map((e) => e.payload.failure_reason)).toEqual(['reverted']);
    const settled = (await attemptsOf([ids[0]!, ids[2]!])).filter((a) => a.status === 'confirmed');
    expect(settled.map((a) => a.tx_payments)).toEqual([1, 1]);
    expect(new Set(settled.map((a) => a.tx_id)).size).toBe(2);
    // Each paid once.
    const payouts = await t.db.pool.query<{ ref: string }>('SELECT ref FROM sim_payouts');
    expect(payouts.rows.map((p) => p.ref).sort()).toEqual([ids[0], ids[2]].sort());
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
    for (const report of await reconcile(t.db.pool, t.ctx.adapters)) expect(report.status, JSON.stringify(report)).toBe('ok');
  });
});
