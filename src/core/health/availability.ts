// What the edge tells a caller about the database: whether it answers (GET /health's readiness), and what a request
// that met an outage answers: 503 SERVICE_UNAVAILABLE, which a client retries, not the 500 of a bug. The signs of an
// outage are the database layer's (src/db/outage.ts).
import { isDatabaseUnavailable } from '../../db/outage.js';
import { ping, type Queryable } from '../../db/pool.js';
import { AppError } from '../../domain/errors.js';

/** Whether the database answers now. */
export async function databaseAnswers(db: Queryable): Promise<boolean> {
  try {
    await ping(db);
    return true;
  } catch {
    return false;
  }
}

/** The answer to a request that failed on a database outage (the outage kept as its cause), or null for any other error. */
export function outageError(error: unknown): AppError | null {
  if (!isDatabaseUnavailable(error)) return null;
  return new AppError('SERVICE_UNAVAILABLE', 'The database is unavailable; retry shortly', { cause: error });
}
