// A merchant's webhook receiver that checks the Standard Webhooks signature (`webhook-signature`) with the reference
// library, `standardwebhooks` (the code Svix ships). Give it the merchant's webhook secret as shown by
// `stableroute merchants create` (the built-in test merchant's is the service's WEBHOOK_SIGNING_SECRET). During a
// secret rotation the service signs with both secrets, so a receiver holding either one verifies. For each POST it answers:
//   400  the signature does not cover this body, webhook-id and webhook-timestamp (tampered, or another secret)
//   400  webhook-timestamp is more than `toleranceSeconds` (5 minutes) away from now: a replay of an old capture
//   200  {"duplicate": true} for a webhook-id it already handled: the service's own retries and a replay inside
//        those 5 minutes are acknowledged, not handled twice
//   200  {"duplicate": false} once `handle` has run; 500 if it threw (the service retries, and the retry is handled)
//
//   WEBHOOK_SIGNING_SECRET=whsec_... PORT=4000 node --import tsx examples/webhooks/standard-webhooks-receiver.ts
import { createServer, type RequestListener } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { answer, header, isMain, readBody, type StablerouteEvent } from './http.js';
import { SeenDeliveries } from './seen-deliveries.js';

export interface StandardReceiverOptions {
  /** The merchant's webhook secret (the test merchant's: the service's WEBHOOK_SIGNING_SECRET), as shown there. */
  secret: string;
  /** Your business logic; runs once per event. */
  handle: (webhookId: string, event: StablerouteEvent) => Promise<void> | void;
  /** Unix milliseconds now; tests move it. */
  nowMs?: () => number;
  /** Oldest (and furthest in the future) webhook-timestamp accepted. */
  toleranceSeconds?: number;
  /** How long a handled webhook-id is remembered (longer than the service retries: about 7.5 hours). */
  retainSeconds?: number;
}

/**
 * The key a Standard Webhooks library needs for the service's secret. A `whsec_` secret is used as is. Any other
 * secret keys the service's HMAC with its UTF-8 bytes, which a library takes as "whsec_" + base64 of them.
 */
export function librarySecret(configured: string): string {
  return configured.startsWith('whsec_') ? configured : `whsec_${Buffer.from(configured, 'utf8').toString('base64')}`;
}

export function standardWebhooksReceiver(options: StandardReceiverOptions): RequestListener {
  const webhook = new Webhook(librarySecret(options.secret));
  const nowMs = options.nowMs ?? Date.now;
  const toleranceSeconds = options.toleranceSeconds ?? 5 * 60;
  const seen = new SeenDeliveries({ retainMs: (options.retainSeconds ?? 24 * 3600) * 1000, maxEntries: 100_000 });

  return (request, response) => {
    void (async () => {
      if (request.method !== 'POST') return answer(response, 405, { error: 'POST only' });
      const body = await readBody(request);
      if (body === null) return answer(response, 413, { error: 'body too large' });
      const id = header(request, 'webhook-id') ?? '';
      const timestamp = header(request, 'webhook-timestamp') ?? '';
      const signature = header(request, 'webhook-signature') ?? '';

      // 1. Authentic: the signature covers id, timestamp and body as received. (The library also applies its own
      //    5-minute window against the system clock.)
      let event: StablerouteEvent;
      try {
        event = webhook.verify(body.toString('utf8'), {
          'webhook-id': id,
          'webhook-timestamp': timestamp,
          'webhook-signature': signature,
        }) as StablerouteEvent;
      } catch {
        return answer(response, 400, { error: 'invalid signature' });
      }

      // 2. Fresh: a genuine delivery signed long ago is a replay. The timestamp is signed, so it cannot be redated.
      const now = nowMs();
      if (!/^\d+$/.test(timestamp) || Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds) {
        return answer(response, 400, { error: 'stale or future webhook-timestamp' });
      }

      // 3. Once: webhook-id is the event's id, the same on every retry, and signed.
      if (!seen.claim(id, now)) return answer(response, 200, { received: true, duplicate: true });
      try {
        await options.handle(id, event);
      } catch {
        seen.release(id);
        return answer(response, 500, { error: 'handler failed; retry' });
      }
      return answer(response, 200, { received: true, duplicate: false });
    })().catch(() => {
      if (!response.headersSent) answer(response, 500, { error: 'receiver failed' });
    });
  };
}

if (isMain(import.meta.url)) {
  const secret = process.env.WEBHOOK_SIGNING_SECRET;
  if (!secret) throw new Error('set WEBHOOK_SIGNING_SECRET to the service’s secret');
  const port = Number(process.env.PORT ?? 4000);
  const receiver = standardWebhooksReceiver({
    secret,
    handle: (id, event) => {
      process.stdout.write(`${JSON.stringify({ webhook_id: id, ...event })}\n`);
    },
  });
  createServer(receiver).listen(port, () => process.stdout.write(`Standard Webhooks receiver on http://localhost:${port}/\n`));
}
