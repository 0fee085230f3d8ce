// Execution jobs run in batches: a run that throws fails its own job alone (retried later), the batch's other jobs
// complete; and a backlog drains through the poller, several jobs at a time.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EXECUTION_QUEUE, type ExecutionJob } from '../../src/jobs/queue.js';
import { EXECUTION_BATCH_JOBS_MAX, EXECUTION_IDLE_POLL_SECONDS } from '../../src/bounds.js';
import { runBatch, startQueuePoller } from '../../src/workers/execution/poller.js';
import { createTestContext, type TestContext } from '../helpers/context.js';

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
    t = await createTestContext();
    const ids: string[] = [];
    for (const n of [1, 2, 3]) ids.push((await t.boss.send(EXECUTION_QUEUE, { payment_intent_id: `pi_${n}`, attempt: 1 } satisfies ExecutionJob))!);
    const jobs = await t.boss.fetch<ExecutionJob>(EXECUTION_QUEUE, { batchSize: 3 });
    expect(jobs).toHaveLength(3);
    await runBatch(t.boss, EXECUTION_QUEUE, jobs, async (job) => {
      if (job.payment_intent_id === 'pi_2') throw new Error('node unreachable');
    });
    const after = await states(ids);
    expect(after[ids[0]!]).toBe('completed');
    expect(after[ids[2]!]).toBe('completed');
    expect(after[ids[1]!]).toBe('retry');
  });

  it('drains a backlog several batches long, each job once, several at a time', { timeout: 60_000 }, async () => {
    t = await createTestContext();
    const total = EXECUTION_BATCH_JOBS_MAX * 3 + 5;
    await t.boss.insert(Array.from({ length: total }, (_, n) => ({ name: EXECUTION_QUEUE, data: { payment_intent_id: `pi_${n}`, attempt: 1 } })));
    const seen = new Map<string, number>();
    let running = 0;
    let mostAtOnce = 0;
    const options = { batchSize: EXECUTION_BATCH_JOBS_MAX, pollSeconds: EXECUTION_IDLE_POLL_SECONDS, stopTimeoutMs: 5_000 };
    const poller = startQueuePoller(
      t.boss,
      EXECUTION_QUEUE,
      options,
      async (job) => {
        running++;
        mostAtOnce = Math.max(mostAtOnce, running);
        await new Promise((resolve) => setImmediate(resolve));
        seen.set(job.payment_intent_id, (seen.get(job.payment_intent_id) ?? 0) + 1);
        running--;
      },
      t.ctx.log,
    );
    await vi.waitFor(() => expect(seen.size).toBe(total), { timeout: 30_000, interval: 50 });
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
    expect(mostAtOnce).toBeGreaterThan(1);
    await poller.stop();
    const left = await t.db.pool.query("SELECT COUNT(*)::int AS n FROM pgboss.job WHERE name = $1 AND state <> 'completed'", [EXECUTION_QUEUE]);
    expect(left.rows[0].n).toBe(0);
  });
});
