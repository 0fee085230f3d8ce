// A stale execution run whose claim had to wait for the intent's row lock. In READ COMMITTED, a statement that waited
// for a row lock re-reads that row but sees every other table as it was before the wait, so the claim must read the
// intent's history (the attempt number) in a statement of its own, after the lock (decision 140). Here the attempt-1
// run records a retry while the stale job of attempt 1 waits (in its claim batch's lock, claim.ts): the stale run must
// then do nothing.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readIntent, lockIntents } from '../../src/db/queries/intents.js';
import { updateStatuses } from '../../src/db/queries/transitions.js';
import { createPayment, createTestContext, type TestContext } from '../helpers/context.js';
import { waitFor } from '../helpers/process.js';
import { executeAlone } from '../helpers/workers.js';

let t: TestContext;
beforeEach(async () => {
  t = await createTestContext();
});
afterEach(async () => t.close());

describe('an execution claim that waited for the intent lock', () => {
  it('sees the retry committed while it waited, and a stale job of the earlier attempt does nothing', async () => {
    const id = await createPayment(t.app, 4);
    const now = t.clock.now();
    const holder = await t.db.pool.connect();
    let stale: Promise<void> | null = null;
    try {
      await holder.query('BEGIN');
      const intent = (await lockIntents(holder, [id])).get(id)!;
      await updateStatuses(holder, [{ intent, to: 'broadcasting' }], now);
      intent.status = 'broadcasting';
      await updateStatuses(holder, [{ intent, to: 'retrying', reason: 'rpc_error' }], now);
      stale = executeAlone(t.ctx, { payment_intent_id: id, attempt: 1 });
      await waitFor(
        'the stale claim waiting for the intent lock',
        async () => {
          const { rows } = await t.db.pool.query(
            "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FROM payment_intents WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE%'",
          );
          return rows.length > 0;
        },
        10_000,
        10,
      );
      await holder.query('COMMIT');
    } finally {
      holder.release();
    }
    await stale;
    const attempts = await t.db.pool.query('SELECT id FROM payment_attempts WHERE payment_intent_id = $1', [id]);
    expect(attempts.rows).toEqual([]);
    expect((await readIntent(t.db.pool, id))?.status).toBe('retrying');
  });
});
