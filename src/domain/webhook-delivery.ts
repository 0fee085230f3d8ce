// What happens to an event after one POST. Pure: no I/O, no clock; the caller passes the attempt time.
import { addSeconds } from '../clock.js';
import { WEBHOOK_ATTEMPTS_MAX } from '../bounds.js';

/** Where a webhook event stands: waiting for its next POST, delivered, out of tries, or held for a disabled endpoint. */
export const WEBHOOK_EVENT_STATUSES = ['pending', 'delivered', 'failed', 'stored'] as const;
export type WebhookEventStatus = (typeof WEBHOOK_EVENT_STATUSES)[number];

/** What one POST to a receiver came to. */
export interface PostOutcome {
  /** HTTP status of the response, or null when none arrived (connection error, timeout, refused destination). */
  statusCode: number | null;
  latencyMs: number;
  /** Why the attempt did not succeed; null on a 2xx. */
  error: string | null;
  /**
   * The destination was refused before anything was sent (the SSRF guard: a private or loopback address, a URL with
   * credentials, plain http in production). Retrying cannot help until an operator or the merchant changes something.
   */
  refused?: boolean;
}

/** The receiver says the endpoint is gone for good: the event fails at once and the endpoint is disabled. */
export const HTTP_GONE = 410;

/**
 * Waits after the 1st..5th failed attempt, in units of WEBHOOK_RETRY_DELAY_SECONDS (default 5 s): 5 s, 5 min, 30 min,
 * 2 h, 5 h, the first five steps of Svix's schedule. The last retry comes about 7 h 35 min after the first attempt,
 * so a receiver that is down for an afternoon still gets the event, while a blip is retried within seconds.
 */
export const RETRY_SCHEDULE_UNITS: readonly number[] = [1, 60, 360, 1_440, 3_600];

export type DeliveryDecision =
  | { status: 'delivered'; attempts: number; deliveredAt: Date }
  | { status: 'pending'; attempts: number; nextAttemptAt: Date; lastError: string }
  | { status: 'failed'; attempts: number; lastError: string; disableEndpoint: boolean };

export function isSuccess(outcome: PostOutcome): boolean {
  return outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode <= 299;
}

/** Wait after the n-th failed attempt (n counts from 1), scaled by the configured first delay. */
export function retryDelaySeconds(failedAttempts: number, firstDelaySeconds: number): number {
  const step = Math.min(Math.max(1, failedAttempts), RETRY_SCHEDULE_UNITS.length) - 1;
  return firstDelaySeconds * RETRY_SCHEDULE_UNITS[step]!;
}

export function decideAfterDelivery(input: {
  attemptsBefore: number;
  outcome: PostOutcome;
  attemptedAt: Date;
  firstRetryDelaySeconds: number;
}): DeliveryDecision {
  const attempts = input.attemptsBefore + 1;
  if (isSuccess(input.outcome)) return { status: 'delivered', attempts, deliveredAt: input.attemptedAt };
  const lastError = input.outcome.error ?? `HTTP ${input.outcome.statusCode ?? 'no response'}`;
  if (input.outcome.statusCode === HTTP_GONE) {
    return { status: 'failed', attempts, lastError: `${lastError} (gone: endpoint disabled, not retried)`, disableEndpoint: true };
  }
  if (input.outcome.refused) return { status: 'failed', attempts, lastError: `${lastError} (not retried)`, disableEndpoint: false };
  if (attempts >= WEBHOOK_ATTEMPTS_MAX) return { status: 'failed', attempts, lastError, disableEndpoint: false };
  const nextAttemptAt = addSeconds(input.attemptedAt, retryDelaySeconds(attempts, input.firstRetryDelaySeconds));
  return { status: 'pending', attempts, nextAttemptAt, lastError };
}
