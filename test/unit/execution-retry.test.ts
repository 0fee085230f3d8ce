// The execution's retry rules (src/domain/execution-retry.ts): the attempt from the payment's history, the next one, the
// budget and the backoff.
import { describe, expect, it } from 'vitest';
import { attemptOf, hasAttemptsLeft, nextAttemptOf, retryDelaySecondsOf } from '../../src/domain/execution-retry.js';

describe('execution retry rules', () => {
  it('a payment is at one attempt more than its moves to retrying, and its retry runs as the one after', () => {
    expect(attemptOf(0)).toBe(1);
    expect(attemptOf(2)).toBe(3);
    // The retry queued with the move to retrying is the attempt that move makes the payment be at.
    for (const retries of [0, 1, 4]) expect(nextAttemptOf(attemptOf(retries))).toBe(attemptOf(retries + 1));
  });

  it('the budget counts every attempt, the first one included', () => {
    expect(hasAttemptsLeft(1, 3)).toBe(true);
    expect(hasAttemptsLeft(2, 3)).toBe(true);
    expect(hasAttemptsLeft(3, 3)).toBe(false);
  });

  it('the retry after attempt n waits the first delay doubled n - 1 times', () => {
    expect([1, 2, 3, 4].map((attempt) => retryDelaySecondsOf(attempt, 5))).toEqual([5, 10, 20, 40]);
  });
});
