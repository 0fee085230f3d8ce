// Rate-limit counters (rate_limit_windows), shared by every api process on the database.
import type { Queryable } from '../pool.js';

/**
 * Counts one request against `key` in its current window of `windowMs`, opening a new window at `at` when the last
 * one has ended. One statement: concurrent requests of one key queue on its row and each sees its own count.
 */
export async function upsertRateLimitHit(db: Queryable, key: string, at: Date, windowMs: number): Promise<{ hits: number; windowStart: Date }> {
  const { rows } = await db.query<{ hits: number; window_start: Date }>(
    `INSERT INTO rate_limit_windows AS w (key, window_start, hits) VALUES ($1, $2, 1)
     ON CONFLICT (key) DO UPDATE SET
       hits = CASE WHEN w.window_start <= $2::timestamptz - make_interval(secs => $3::double precision / 1000) THEN 1 ELSE w.hits + 1 END,
       window_start = CASE WHEN w.window_start <= $2::timestamptz - make_interval(secs => $3::double precision / 1000) THEN $2 ELSE w.window_start END
     RETURNING hits, window_start`,
    [key, at, windowMs],
  );
  return { hits: rows[0]!.hits, windowStart: rows[0]!.window_start };
}
