// GET /admin/events: server-sent events fed by PostgreSQL NOTIFY from the transactions that create or move a payment,
// heard only once (and only if) they commit; streams end when the app closes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/pool.js';
import { readIntent } from '../../src/db/queries/intents.js';
import { updateStatuses } from '../../src/db/queries/transitions.js';
import { createPayment, createTestContext, type TestContext } from '../helpers/context.js';
import { waitFor } from '../helpers/process.js';
import { drainExecution } from '../helpers/workers.js';

interface Sse {
  events: { event: string; data: Record<string, unknown> }[];
  ended: Promise<void>;
  cancel(): Promise<void>;
}

/** Reads an event stream the way the console does: fetch and a stream reader, so headers could be sent too. */
async function openStream(url: string): Promise<Sse> {
  const response = await fetch(url, { headers: { accept: 'text/event-stream' } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const sse: Sse = { events: [], ended: Promise.resolve(), cancel: () => reader.cancel() };
  sse.ended = (async () => {
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      buffer += value;
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event && data) sse.events.push({ event, data: JSON.parse(data) });
      }
    }
  })();
  return sse;
}

let t: TestContext;
let base: string;
beforeAll(async () => {
  t = await createTestContext();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => t.close());

describe('GET /admin/events', () => {
  it('streams a payment as it is created and each status it moves to', async () => {
    const sse = await openStream(`${base}/admin/events`);
    await waitFor('ready', async () => sse.events.some((e) => e.event === 'ready'), 10_000, 20);
    const id = await createPayment(t.app, 5);
    await waitFor('created event', async () => sse.events.some((e) => e.data.id === id), 10_000, 20);
    await drainExecution(t);
    await waitFor('broadcasted event', async () => sse.events.some((e) => e.data.id === id && e.data.status === 'broadcasted'), 10_000, 20);
    const mine = sse.events.filter((e) => e.data.id === id);
    expect(mine.map((e) => [e.event, e.data.from, e.data.status])).toEqual([
      ['payment', null, 'route_selected'],
      ['payment', 'route_selected', 'broadcasting'],
      ['payment', 'broadcasting', 'broadcasted'],
    ]);
    expect(mine[0]!.data).toMatchObject({ chain: 'solana', merchant_id: 'mer_test', at: expect.stringMatching(/Z$/) });
    await sse.cancel();
  });

  it('says nothing about a change that rolled back', async () => {
    const sse = await openStream(`${base}/admin/events`);
    await waitFor('ready', async () => sse.events.some((e) => e.event === 'ready'), 10_000, 20);
    const rolledBack = await createPayment(t.app, 6);
    const committed = await createPayment(t.app, 7);
    await waitFor('both created', async () => sse.events.filter((e) => e.data.status === 'route_selected').length === 2, 10_000, 20);
    await withTransaction(t.db.pool, async (tx) => {
      await updateStatuses(tx, [{ intent: (await readIntent(tx, rolledBack))!, to: 'cancelled' }], t.clock.now());
      throw new Error('roll back');
    }).catch(() => undefined);
    await updateStatuses(t.db.pool, [{ intent: (await readIntent(t.db.pool, committed))!, to: 'cancelled' }], t.clock.now());
    // Notifications arrive in commit order: once the committed change is heard, the rolled-back one never will be.
    await waitFor('committed change', async () => sse.events.some((e) => e.data.id === committed && e.data.status === 'cancelled'), 10_000, 20);
    expect(sse.events.filter((e) => e.data.id === rolledBack).map((e) => e.data.status)).toEqual(['route_selected']);
    await sse.cancel();
  });

  it('ends open streams when the app closes, so a shutdown never waits on a console', async () => {
    const sse = await openStream(`${base}/admin/events`);
    await waitFor('ready', async () => sse.events.some((e) => e.event === 'ready'), 10_000, 20);
    await t.app.close();
    await sse.ended;
  });
});
