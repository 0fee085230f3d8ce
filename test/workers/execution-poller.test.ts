// Execution jobs run in batches: a run that fails fails its own job alone (retried later), the batch's other jobs
// complete; and a backlog drains through the poller, several jobs at a time.
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EXECUTION_BATCH_JOBS_MAX } from '../../src/bounds.js';
import type { ChainAdapter } from '../../src/chains/port.js';
import { executeBatch } from '../../src/core/payments/execute/execute.js';
import { runOf } from '../../src/core/payments/execute/run.js';
import { EXECUTION_QUEUE, type ExecutionJob } from '../../src/jobs/queue.js';
import { settleJobs, startQueuePoller } from '../../src/workers/execution.js';
import { createPayment, createTestContext, type TestContext } from '../helpers/context.js';

let t: TestContext | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const states = async (ids: string[]) =>
  (await t!.db.pool.query<{ id: string; state: string }>('SELECT id, state FROM pgboss.job WHERE id = ANY($1::uuid[])', [ids])).rows.reduce<
    Record<string, string>
  >((acc, r) => ({ ...acc, [r.id]: r.state }), {});

describe('execution batches', () => {
  it('a run that throws fails its job alone; the others complete', async () => {
    t = await createTestContext({ SIM_TREASURY_USDC: '1000' });
    const payments = [await createPayment(t.app, 1), await createPayment(t.app, 2), await createPayment(t.app, 3)];
    const real = t.ctx.adapters.solana!;
    const solana: ChainAdapter = {
      ...real,
      prepareTransfers: async (requests) => {
        if (requests.some((request) => request.paymentIntentId === payments[1])) throw new Error('node unreachable');
        return real.prepareTransfers(requests);
      },
    };
    const deps = { ...t.ctx, adapters: { ...t.ctx.adapters, solana }, log: pino({ level: 'silent' }) };
    const jobs = await t.boss.fetch<ExecutionJob>(EXECUTION_QUEUE, { batchSize: 3 });
    expect(jobs).toHaveLength(3);
    await settleJobs(t.boss, EXECUTION_QUEUE, jobs, await executeBatch(deps, jobs.map((job) => runOf(job.data))));
    const ids = payments.map((p) => jobs.find((job) => job.data.payment_intent_id === p)!.id);
    const after = await states(ids);
    expect(after[ids[0]!]).toBe('completed');
    expect(after[ids[2]!]).toBe('completed');
    expect(after[ids[1]!]).toBe('retry');
  });

  it('drains a backlog several batches long, each job once, several at a time', { timeout: 60_000 }, async () => {
    t = await createTestContext();
    const total = EXECUTION_BATCH_JOBS_MAX * 3 + 5;
    await t.boss.insert(Array.from({ length: total }, (_, n) => ({ name: EXECUTION_QUEUE, data: { payment_intent_id: `pi_${n}`, attempt: 1 } })));
    const poller = startQueuePoller({ ...t.ctx, log: pino({ level: 'silent' }) }, EXECUTION_QUEUE, 5_000);
    const jobs = async () =>
      (
        await t!.db.pool.query<{ state: string; retry_count: number; started_on: Date }>('SELECT state, retry_count, started_on FROM pgboss.job WHERE name = $1', [
          EXECUTION_QUEUE,
        ])
      ).rows;
    await vi.waitFor(async () => expect((await jobs()).filter((j) => j.state === 'completed')).toHaveLength(total), { timeout: 30_000, interval: 50 });
    await poller.stop();
    const done = await jobs();
    // Each job once: none was fetched a second time.
    expect(done.every((j) => j.retry_count === 0)).toBe(true);
    // Several at a time: the jobs of one fetch share its start time.
    const perFetch = new Map<number, number>();
    for (const j of done) perFetch.set(j.started_on.getTime(), (perFetch.get(j.started_on.getTime()) ?? 0) + 1);
    expect(Math.max(...perFetch.values())).toBeGreaterThan(1);
    const left = await t.db.pool.query("SELECT COUNT(*)::int AS n FROM pgboss.job WHERE name = $1 AND state <> 'completed'", [EXECUTION_QUEUE]);
    expect(left.rows[0].n).toBe(0);
  });
});
