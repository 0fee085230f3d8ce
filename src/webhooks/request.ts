// One webhook POST: the exact body bytes, the signed headers, and a bounded wait. No retries here; the caller
// records the outcome and the schedule decides what happens next (src/domain/webhook-delivery.ts).
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
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
 * certificate checks. Resolves with the status code as soon as the status line arrives; the body is never read.
 */
function send(url: URL, target: ResolvedAddress, body: string, headers: Record<string, string>): { status: Promise<number>; abort(): void } {
  const secure = url.protocol === 'https:';
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const request = (secure ? httpsRequest : httpRequest)({
    host: target.address,
    family: target.family,
    port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
    path: `${url.pathname}${url.search}`,
    method: 'POST',
    headers: { ...headers, host: url.host, 'content-length': String(Buffer.byteLength(body)) },
    // One connection per attempt: a pooled socket could outlive the address check it was made under.
    agent: false,
    ...(secure && isIP(hostname) === 0 ? { servername: hostname } : {}),
  });
  const status = new Promise<number>((resolve, reject) => {
    request.once('response', (response) => {
      resolve(response.statusCode ?? 0);
      response.destroy(); // frees the connection; the body is not ours to read
    });
    request.once('error', reject);
  });
  request.end(body);
  return { status, abort: () => request.destroy() };
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
    attempt = send(parsed.url, target, body, headers);
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
