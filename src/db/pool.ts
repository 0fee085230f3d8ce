import pg from 'pg';

// One pool per process. Queries run either on the pool or on a client inside a transaction; both satisfy Queryable.
export type Queryable = Pick<pg.PoolClient, 'query'>;
export type Pool = pg.Pool;

export function createPool(connectionString: string, max = 10): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    // Bounded waits: a stuck database surfaces as an error instead of a hung request.
    connectionTimeoutMillis: 10_000,
    statement_timeout: 30_000,
    idle_in_transaction_session_timeout: 60_000,
    application_name: 'stableroute',
  });
  // An idle client that loses its connection must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  return pool;
}

const SERIALIZATION_FAILURE = '40001';
const DEADLOCK = '40P01';

/** Runs fn in one transaction; commits on success, rolls back on any error. Retries deadlocks a bounded number of times. */
export async function withTransaction<T>(pool: pg.Pool, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      const code = (error as { code?: string }).code;
      if ((code === SERIALIZATION_FAILURE || code === DEADLOCK) && attempt < 3) continue;
      throw error;
    } finally {
      client.release();
    }
  }
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: string; constraint?: string };
  return e.code === '23505' && (constraint === undefined || e.constraint === constraint);
}
