// One webhook POST: the exact body bytes, the signed headers, and a bounded wait. No retries here; the caller
// records the outcome and the schedule decides what happens next (src/domain/webhook-delivery.ts).
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { PostOutcome } from '../domain/webhook-delivery.js';
import { parseWebhookUrl } from '../domain/webhook-url.js';
import {
  DestinationRefusedError,
  resolveDestination,
  systemResolver,
  type DestinationPolicy,
  type ResolvedAddress,
  type Resolver,
} from './destination-guard.js';
import { signingKeys, type SigningSecret } from './secret.js';
import { signBody, signStandardWebhook } from './signature.js';

export const USER_AGENT = 'stableroute-webhooks/0.1';
const ERROR_TEXT_MAX_CHARS = 500;
const CAUSE_DEPTH_MAX = 4;
/** A receiver's answer body is read (for the connection's sake) up to this size; past it the connection is dropped. */
const ANSWER_BODY_MAX_BYTES = 64 * 1024;

/**
 * Connections kept open between attempts (decision 74). A pool holds connections to one checked address (the request
 * names the address, not the host, and for https the server name is part of the pool's key too). Every attempt still
 * resolves and checks its destination first, so a connection is only reused for an address this attempt checked.
 * Idle connections close after 4 s, before the common 5 s server keep-alive limit.
 */
const KEEP_ALIVE = { keepAlive: true, timeout: 4_000, maxSockets: 16, maxFreeSockets: 16, scheduling: 'lifo' } as const;
const agents = { http: new HttpAgent(KEEP_ALIVE), https: new HttpsAgent(KEEP_ALIVE) };

export interface WebhookMessage {
  id: string;
  eventType: string;
  paymentIntentId: string | null;
  merchantId: string;
  payload: unknown;
}

/** The body the spec describes, in this key order. Both signatures cover exactly these bytes. */
export function buildWebhookBody(message: WebhookMessage): string {
  return JSON.stringify({
    event_type: message.eventType,
    payment_intent_id: message.paymentIntentId,
    merchant_id: message.merchantId,
    payload: message.payload,
  });
}

/**
 * The signed headers of one attempt. `secrets` are the merchant's secrets still valid, the current one first (more
 * than one during a rotation's overlap): the spec's hex signature is the current one's; `webhook-signature` carries an
 * entry for each, so a receiver holding either secret verifies. secret.ts says which key signs what.
 */
export function buildWebhookHeaders(
  secrets: string | readonly [SigningSecret, ...SigningSecret[]],
  eventId: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  const all = typeof secrets === 'string' ? [{ secret: secrets, issued: false }] : secrets;
  const keys = all.map(({ secret, issued }) => signingKeys(secret, { issued }));
  const signature = signBody(keys[0]!.spec, body);
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-stableroute-signature': signature,
    // The same value under the header names most receivers already look for; the spec leaves the name open.
    'x-webhook-signature': signature,
    'x-signature': signature,
    'webhook-id': eventId,
    'webhook-timestamp': String(timestampSeconds),
    // Space-separated entries, as Standard Webhooks defines for several keys; a verifier accepts any match.
    'webhook-signature': keys
      .flatMap((k) => k.standard)
      .map((key) => signStandardWebhook(key, eventId, timestampSeconds, body))
      .join(' '),
  };
}

export type { PostOutcome };

export function truncateError(text: string): string {
  return text.length <= ERROR_TEXT_MAX_CHARS ? text : `${text.slice(0, ERROR_TEXT_MAX_CHARS - 3)}...`;
}

function describeFailure(error: unknown, timeoutMs: number): string {
  if ((error as { name?: unknown } | null)?.name === 'TimeoutError') return `timeout: no response within ${timeoutMs} ms`;
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < CAUSE_DEPTH_MAX && current !== undefined && current !== null; depth++) {
    const e = current as { message?: unknown; code?: unknown; cause?: unknown };
    const text = typeof e.message === 'string' && e.message !== '' ? e.message : typeof e.code === 'string' ? e.code : String(current);
    if (!parts.includes(text)) parts.push(text);
    current = e.cause;
  }
  return truncateError(parts.join(': '));
}

/** A request that ran out of WEBHOOK_TIMEOUT_SECONDS, whatever it was waiting for (DNS, connect, the status line). */
class WebhookTimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/**
 * Sends the request to `target` (the checked address) with the URL's Host and, for https, its server name for SNI and
 * certificate checks. Resolves with the status code as soon as the status line arrives. The answer's body is then
 * read and dropped, so the connection can serve the next attempt; one that is too long, or slower than `timeoutMs`,
 * costs the connection instead. A kept-alive connection that the receiver closed as it was being reused is reset
 * before anything was answered: the request is sent once more, on a new connection (delivery is at least once, and
 * receivers deduplicate on webhook-id). `abort()` ends the attempt for good: destroying the request resets its socket
 * too, and that reset, ours, must never pass for the receiver's and be resent (decision 74).
 */
function send(
  url: URL,
  target: ResolvedAddress,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): { status: Promise<number>; abort(): void } {
  const secure = url.protocol === 'https:';
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  let answered = false;
  let aborted = false;
  let current: ReturnType<typeof httpRequest> | undefined;
  const attempt = (retryOnStaleConnection: boolean) =>
    new Promise<number>((resolve, reject) => {
      const request = (secure ? httpsRequest : httpRequest)({
        host: target.address,
        family: target.family,
        port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { ...headers, host: url.host, 'content-length': String(Buffer.byteLength(body)) },
        agent: secure ? agents.https : agents.http,
        ...(secure && isIP(hostname) === 0 ? { servername: hostname } : {}),
      });
      current = request;
      request.once('response', (response) => {
        answered = true;
        resolve(response.statusCode ?? 0);
        drainAnswer(response, timeoutMs);
      });
      request.once('error', (error: NodeJS.ErrnoException) => {
        const stale = retryOnStaleConnection && !aborted && !answered && request.reusedSocket && error.code === 'ECONNRESET';
        if (stale) resolve(attempt(false));
        else reject(error);
      });
      request.end(body);
    });
  const abort = () => {
    aborted = true;
    if (!answered) current?.destroy();
  };
  return { status: attempt(true), abort };
}

/** Reads an answer's body to its end and drops it; a body too long or too slow costs its connection. */
function drainAnswer(response: IncomingMessage, timeoutMs: number): void {
  let bytes = 0;
  const timer = setTimeout(() => response.destroy(), timeoutMs);
  timer.unref();
  response.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > ANSWER_BODY_MAX_BYTES) response.destroy();
  });
  response.once('close', () => clearTimeout(timer));
  response.on('error', () => undefined); // a destroyed answer is not an error of the attempt, which already has its status
}

/**
 * POSTs once. Redirects are not followed (a 3xx is reported as a failure): the signed body must reach the URL the
 * merchant registered, not wherever it points us. The destination is resolved and checked first (the SSRF guard,
 * destination-guard.ts) and the connection goes to the checked address only. The timeout covers resolving,
 * connecting, sending and receiving the status. A refused destination is reported with `refused: true` and no
 * request at all.
 */
export async function postWebhook(
  rawUrl: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  policy: DestinationPolicy,
  resolver: Resolver = systemResolver,
): Promise<PostOutcome> {
  const started = performance.now();
  const latency = () => Math.max(0, Math.round(performance.now() - started));
  const parsed = parseWebhookUrl(rawUrl);
  if (!parsed.ok) return { statusCode: null, latencyMs: latency(), error: `refused: webhook_url ${parsed.problem}`, refused: true };
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new WebhookTimeoutError()), timeoutMs);
  });
  timedOut.catch(() => undefined); // observed by the races below; never an unhandled rejection
  let attempt: ReturnType<typeof send> | undefined;
  try {
    const target = await Promise.race([resolveDestination(parsed.url, policy, resolver), timedOut]);
    attempt = send(parsed.url, target, body, headers, timeoutMs);
    const statusCode = await Promise.race([attempt.status, timedOut]);
    const ok = statusCode >= 200 && statusCode <= 299;
    return { statusCode, latencyMs: latency(), error: ok ? null : `HTTP ${statusCode}` };
  } catch (error) {
    if (error instanceof DestinationRefusedError) return { statusCode: null, latencyMs: latency(), error: `refused: ${error.message}`, refused: true };
    return { statusCode: null, latencyMs: latency(), error: describeFailure(error, timeoutMs) };
  } finally {
    clearTimeout(timer);
    attempt?.abort();
  }
}
