// A run that stalls (sim/process/stall.ts, process.worker_stalls) and carries on after another process took its
// payment over: at each point of its run, its late steps must write nothing of the payment while the run that took it
// over holds the lease (decision 57), and the payment is paid once.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeBatch } from '../../src/core/payments/execute/execute.js';
import { fetchRuns, type FetchedRun } from '../../src/core/payments/execute/fetch.js';
import { resumeExpiredExecutions } from '../../src/core/payments/execute/recover.js';
import { EXECUTION_QUEUE } from '../../src/jobs/queue.js';
import { settleJobs } from '../../src/workers/execution.js';
import { stateOf, takenOver } from '../../sim/ops/stall.js';
import { gatedProcess, STALL_POINTS, stallingProcess } from '../../sim/process/stall.js';
import { createPayment, createTestContext, secondProcess, type TestContext } from '../helpers/context.js';

const quiet = pino({ level: 'silent' });
let t: TestContext;

describe('a stalled execution run released after its payment was taken over', () => {
  beforeAll(async () => {
    t = await createTestContext({ SIM_TREASURY_USDC: '100000' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each(STALL_POINTS)('stalled at %s: its late steps write nothing of the payment', { timeout: 60_000 }, async (point) => {
    const id = await createPayment(t.app, 5);
    const stalling = stallingProcess(t.ctx, point, t.db.url);
    let fetched: FetchedRun[] = [];
    const running = (async () => {
      const deps = { ...stalling.process, log: quiet };
      fetched = await fetchRuns(deps, 10);
      await settleJobs(deps.boss, EXECUTION_QUEUE, fetched.map((f) => f.job), await executeBatch(deps, fetched.map((f) => f.run)));
    })();
    try {
      await stalling.reached;
      expect(stalling.at).toBe(point);
      // Its lease runs out on the database's clock (its heartbeat's renewals are held back with its statements).
      await t.db.pool.query("UPDATE execution_leases SET expires_at = now() - interval '1 second'");
      const seen: { taken: string[]; before: Map<string, string>; after: Map<string, string> }[] = [];
      const taker = gatedProcess(secondProcess(t.ctx, {}), async () => {
        const taken = await takenOver(t.db.pool, fetched);
        const before = await stateOf(t.db.pool, taken);
        stalling.release();
        await running;
        seen.push({ taken, before, after: await stateOf(t.db.pool, taken) });
      });
      expect(await resumeExpiredExecutions({ ...taker.process, log: quiet })).toEqual({ resumed: 1, abandoned: 0 });
      expect(seen).toHaveLength(1);
      expect(seen[0]!.taken).toEqual([id]);
      expect(seen[0]!.after).toEqual(seen[0]!.before);
    } finally {
      stalling.release();
      await running.catch(() => undefined);
      await stalling.close();
    }
    // The run that took it over sent it; one transfer was signed for it, whatever the stale run had done.
    const { rows } = await t.db.pool.query<{ status: string; txs: number }>(
      `SELECT i.status, (SELECT COUNT(DISTINCT a.tx_id)::int FROM payment_attempts a WHERE a.payment_intent_id = i.id) AS txs
         FROM payment_intents i WHERE i.id = $1`,
      [id],
    );
    expect(rows[0]).toEqual({ status: 'broadcasted', txs: 1 });
  });
});
