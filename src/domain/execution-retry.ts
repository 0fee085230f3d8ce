// The retry rules of an execution, in one place: the attempt a payment is at, the attempt its retry runs as, whether an
// attempt may be retried, and how long the retry waits. The attempt comes from the payment's history (its moves to
// retrying), never from a job's word: a job whose run crashed after its outcome committed must find itself stale.

/** The attempt a payment is at: one more than its moves to retrying. */
export function attemptOf(retries: number): number {
  return 1 + retries;
}

/**
 * The attempt a retry of attempt `attempt` runs as, queued with the payment's move to retrying: that move counts one
 * more retry, so this is attemptOf(retries after the move) without reading them again.
 */
export function nextAttemptOf(attempt: number): number {
  return attempt + 1;
}

/** Whether a failed attempt may be retried: the budget counts every attempt, the first one included. */
export function hasAttemptsLeft(attempt: number, attemptsMax: number): boolean {
  return attempt < attemptsMax;
}

/** How long the retry after a failed `attempt` waits: the first retry's delay (a setting), doubled with each attempt. */
export function retryDelaySecondsOf(attempt: number, firstDelaySeconds: number): number {
  return firstDelaySeconds * 2 ** (attempt - 1);
}
