// Request counts for the API's rate limits (decisions 93, 217): one fixed window per key, counted in PostgreSQL so that
// every api process on the database shares it, on the injected clock.
import type { AppContext } from './context.js';
import { upsertRateLimitHit } from '../db/queries/rate-limits.js';

export interface WindowCount {
  /** Requests counted in the key's current window, this one included. */
  hits: number;
  /** Milliseconds until the window ends (at least 1). */
  ttlMs: number;
}

/** Counts one request against `key` in its window of `windowMs`, opening a new one when the last has ended. */
export async function countRequest(ctx: Pick<AppContext, 'pool' | 'clock'>, key: string, windowMs: number): Promise<WindowCount> {
  const now = ctx.clock.now();
  const { hits, windowStart } = await upsertRateLimitHit(ctx.pool, key, now, windowMs);
  return { hits, ttlMs: Math.max(1, windowStart.getTime() + windowMs - now.getTime()) };
}
