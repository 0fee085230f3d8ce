// A merchant's webhook receiver written against the spec alone, with node:crypto and no library:
// X-Stableroute-Signature is the lowercase hex HMAC-SHA256 of the exact body bytes, keyed by the merchant's webhook
// secret string as shown by `stableroute merchants create` (the test merchant's: the service's WEBHOOK_SIGNING_SECRET;
// a `whsec_...` secret too: the whole string is the key). After a rotation this header carries the new secret's
// signature only: switch the receiver's secret when the operator rotates it.
//
// That signature covers the body only, no time and no id, so a replay cannot be told by its age. The receiver refuses
// to handle the same signed body twice instead: the signature names the exact bytes, which are the same on every
// retry of an event, and unlike the unsigned webhook-id header nobody can change it without the secret. Two events
// with byte-identical bodies say the same thing, so handling one of them loses nothing. A replay after the memory's
// retention, or after a restart of a receiver without a database, goes unnoticed: when that matters, check
// webhook-signature, which signs a timestamp (standard-webhooks-receiver.ts). For each POST it answers:
//   400  a missing or malformed signature, or one that does not match the body (tampered, or another secret)
//   200  {"duplicate": true} for a body it already handled (the service's retries, replays)
//   200  {"duplicate": false} once `handle` has run; 500 if it threw (the service retries, and the retry is handled)
//
//   WEBHOOK_SIGNING_SECRET=... PORT=4001 node --import tsx examples/webhooks/hex-signature-receiver.ts
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type RequestListener } from 'node:http';
import { answer, header, isMain, readBody, type StablerouteEvent } from './http.js';
import { SeenDeliveries } from './seen-deliveries.js';

export interface HexReceiverOptions {
  /** The service's WEBHOOK_SIGNING_SECRET, exactly as configured there. */
  secret: string;
  /** Your business logic; runs once per distinct signed body. */
  handle: (signature: string, event: StablerouteEvent) => Promise<void> | void;
  nowMs?: () => number;
  /** How long a handled body is remembered. */
  retainSeconds?: number;
}

const HEX_SHA256 = /^[0-9a-f]{64}$/;

/** The spec's check: HMAC-SHA256 of the raw bytes with the secret, compared in constant time. */
export function specSignatureMatches(secret: string, body: Buffer, signatureHex: string): boolean {
  if (!HEX_SHA256.test(signatureHex)) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(signatureHex, 'hex'));
}

export function hexSignatureReceiver(options: HexReceiverOptions): RequestListener {
  const nowMs = options.nowMs ?? Date.now;
  const seen = new SeenDeliveries({ retainMs: (options.retainSeconds ?? 7 * 24 * 3600) * 1000, maxEntries: 100_000 });

  return (request, response) => {
    void (async () => {
      if (request.method !== 'POST') return answer(response, 405, { error: 'POST only' });
      const body = await readBody(request);
      if (body === null) return answer(response, 413, { error: 'body too large' });
      const signature = header(request, 'x-stableroute-signature') ?? '';

      // 1. Authentic: only the secret's holder can produce this digest of these bytes.
      if (!specSignatureMatches(options.secret, body, signature)) return answer(response, 400, { error: 'invalid signature' });

      let event: StablerouteEvent;
      try {
        event = JSON.parse(body.toString('utf8')) as StablerouteEvent;
      } catch {
        return answer(response, 400, { error: 'body is not JSON' });
      }

      // 2. Once: keyed by the signature, i.e. by the signed bytes.
      if (!seen.claim(signature, nowMs())) return answer(response, 200, { received: true, duplicate: true });
      try {
        await options.handle(signature, event);
      } catch {
        seen.release(signature);
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
  const port = Number(process.env.PORT ?? 4001);
  const receiver = hexSignatureReceiver({
    secret,
    handle: (signature, event) => {
      process.stdout.write(`${JSON.stringify({ signature, ...event })}\n`);
    },
  });
  createServer(receiver).listen(port, () => process.stdout.write(`hex-signature receiver on http://localhost:${port}/\n`));
}
