import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, KEY, type TestContext } from '../helpers/context.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const SECRET = 'route-secret';
let receiver: Receiver;
let t: TestContext;
let bare: TestContext;
beforeAll(async () => {
  receiver = await startReceiver(SECRET);
  t = await createTestContext({ DEV_MERCHANT_WEBHOOK_URL: receiver.url, WEBHOOK_SIGNING_SECRET: SECRET });
  bare = await createTestContext();
});
afterAll(async () => {
  await Promise.all([t.close(), bare.close()]);
  await receiver.close();
});

describe('POST /webhooks/test', () => {
  it('200: sends a signed webhook.test event to the merchant now and reports the outcome', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/webhooks/test', headers: KEY });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ event_id: expect.stringMatching(/^evt_/), delivered: true, url: receiver.url, status_code: 204, error: null });
    expect(receiver.badSignatures).toBe(0);
    expect(receiver.events.at(-1)).toMatchObject({ event_type: 'webhook.test', merchant_id: 'mer_test', payment_intent_id: null });
    // An empty body with a JSON content type is "no body", not malformed JSON.
    const empty = await t.app.inject({ method: 'POST', url: '/webhooks/test', headers: { ...KEY, 'content-type': 'application/json' }, payload: '' });
    expect(empty.statusCode).toBe(200);
  });

  it('422 WEBHOOK_URL_NOT_CONFIGURED without a webhook_url; 401 without a key', async () => {
    const res = await bare.app.inject({ method: 'POST', url: '/webhooks/test', headers: KEY });
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('WEBHOOK_URL_NOT_CONFIGURED');
    expect((await bare.app.inject({ method: 'POST', url: '/webhooks/test' })).statusCode).toBe(401);
  });
});
