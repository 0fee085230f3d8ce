import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEvents } from '../../src/db/queries/outbox.js';
import { deliverDueEvents } from '../../src/core/webhooks/delivery.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { freePort } from '../helpers/process.js';

let t: TestContext;
beforeAll(async () => {
  // Nothing listens on this port: every delivery fails at once.
  t = await createTestContext({ DEV_MERCHANT_WEBHOOK_URL: `http://127.0.0.1:${await freePort()}/hooks`, WEBHOOK_RETRY_DELAY_SECONDS: '1' });
});
afterAll(async () => t.close());

describe('GET /admin/webhook-events and redelivery', () => {
  it('shows events whose delivery failed for good, and queues them again on request', async () => {
    const id = await insertEvents(t.db.pool, [{ merchantId: 'mer_test', paymentIntentId: null, type: 'webhook.test', payload: { n: 1 }, at: t.clock.now() }]).then(([id]) => id!);
    const deps = { pool: t.db.pool, clock: t.clock, config: t.ctx.config, log: pino({ level: 'silent' }) };
    for (let i = 0; i < 6; i++) {
      await deliverDueEvents(deps);
      t.clock.advance(3_600_000); // the longest wait of the schedule at a 1 s delay
    }
    const failed = (await t.app.inject({ method: 'GET', url: '/admin/webhook-events' })).json();
    expect(failed).toEqual([expect.objectContaining({ id, status: 'failed', attempts: 6, last_error: expect.any(String) })]);

    const again = await t.app.inject({ method: 'POST', url: `/admin/webhook-events/${id}/redeliver` });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ id, status: 'pending' });
    const pending = (await t.app.inject({ method: 'GET', url: '/admin/webhook-events?status=pending' })).json();
    expect(pending.map((e: { id: string }) => e.id)).toContain(id);

    const twice = await t.app.inject({ method: 'POST', url: `/admin/webhook-events/${id}/redeliver` });
    expect(twice.statusCode).toBe(409);
    expect(twice.json().code).toBe('INVALID_STATE');
    const unknown = await t.app.inject({ method: 'POST', url: '/admin/webhook-events/evt_nope/redeliver' });
    expect(unknown.statusCode).toBe(404);
    const bad = await t.app.inject({ method: 'GET', url: '/admin/webhook-events?status=lost' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('INVALID_REQUEST');
  });
});
