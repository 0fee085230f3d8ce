// What happens to an event after one POST. Pure: no I/O, no clock; the caller passes the attempt time.
import { addSeconds } from '../../clock.js';
import type { PostOutcome } from './request.js';

/** The initial attempt plus the 5 retries the spec allows. */
export const MAX_ATTEMPTS = 6;

/** The receiver says the endpoint is gone for good: retrying cannot help, so the event fails at once. */
export const HTTP_GONE = 410;

export type DeliveryDecision =
  | { status: 'delivered'; attempts: number; deliveredAt: Date }
  | { status: 'pending'; attempts: number; nextAttemptAt: Date; lastError: string }
  | { status: 'failed'; attempts: number; lastError: string };

export function isSuccess(outcome: PostOutcome): boolean {
  return outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode <= 299;
}

/** Wait after the n-th failed attempt: delay, 2x delay, 4x delay, ... (n counts from 1). */
export function retryDelaySeconds(failedAttempts: number, firstDelaySeconds: number): number {
  return firstDelaySeconds * 2 ** Math.max(0, failedAttempts - 1);
}

export function decideAfterAttempt(input: {
  attemptsBefore: number;
  outcome: PostOutcome;
  attemptedAt: Date;
  firstRetryDelaySeconds: number;
}): DeliveryDecision {
  const attempts = input.attemptsBefore + 1;
  if (isSuccess(input.outcome)) return { status: 'delivered', attempts, deliveredAt: input.attemptedAt };
  const lastError = input.outcome.error ?? `HTTP ${input.outcome.statusCode ?? 'no response'}`;
  if (input.outcome.statusCode === HTTP_GONE) return { status: 'failed', attempts, lastError: `${lastError} (gone: not retried)` };
  if (attempts >= MAX_ATTEMPTS) return { status: 'failed', attempts, lastError };
  const nextAttemptAt = addSeconds(input.attemptedAt, retryDelaySeconds(attempts, input.firstRetryDelaySeconds));
  return { status: 'pending', attempts, nextAttemptAt, lastError };
}
