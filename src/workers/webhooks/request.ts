// One webhook POST: the exact body bytes, the signed headers, and a bounded wait. No retries here; the caller
// records the outcome and the schedule decides what happens next (decide.ts).
import { performance } from 'node:perf_hooks';
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

export function buildWebhookHeaders(
  secret: string,
  eventId: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  const signature = signBody(secret, body);
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-stableroute-signature': signature,
    // The same value under the header names most receivers already look for; the spec leaves the name open.
    'x-webhook-signature': signature,
    'x-signature': signature,
    'webhook-id': eventId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signStandardWebhook(secret, eventId, timestampSeconds, body),
  };
}

export interface PostOutcome {
  /** HTTP status of the response, or null when none arrived (connection error, timeout, bad URL). */
  statusCode: number | null;
  latencyMs: number;
  /** Why the attempt did not succeed; null on a 2xx. */
  error: string | null;
}

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

/**
 * POSTs once. Redirects are not followed (a 3xx is reported as a failure): the signed body must reach the URL the
 * merchant registered, not wherever it points us. The timeout covers connecting, sending and receiving the status.
 */
export async function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<PostOutcome> {
  const started = performance.now();
  const latency = () => Math.max(0, Math.round(performance.now() - started));
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const latencyMs = latency();
    // The response body is never read; cancelling it frees the connection.
    await response.body?.cancel().catch(() => undefined);
    const ok = response.status >= 200 && response.status <= 299;
    return { statusCode: response.status, latencyMs, error: ok ? null : `HTTP ${response.status}` };
  } catch (error) {
    return { statusCode: null, latencyMs: latency(), error: describeFailure(error, timeoutMs) };
  }
}
