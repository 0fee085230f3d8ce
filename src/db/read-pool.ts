// Reads that decide nothing, off the primary (decision 195): DATABASE_READ_URL's server, a standby that may lag behind.
// The type keeps it out of every transaction: a ReadPool has no connect(), so withTransaction and the locks cannot take
// it, and only the reads that ask for it by name (console lists, exports, metrics gauges) get it.
import { createPool, type Queryable } from './pool.js';
import { DB_READ_POOL_CONNECTIONS } from '../bounds.js';

export interface ReadPool extends Queryable {
  end(): Promise<void>;
}

export function createReadPool(url: string): ReadPool {
  const pool = createPool(url, DB_READ_POOL_CONNECTIONS);
  return { query: pool.query.bind(pool) as Queryable['query'], end: () => pool.end() };
}

export interface ReplicaState {
  /** The server is in recovery (a standby); false: DATABASE_READ_URL reaches a primary, which never lags. */
  standby: boolean;
  /**
   * How far its data is behind the primary's, in seconds: 0 while it streams and has replayed all it received; else
   * the age of the last transaction it replayed (a standby cut off from its primary falls further behind each second).
   */
  lagSeconds: number;
}

/** What the read server says of its own lag (pg_stat_wal_receiver shows its status to pg_monitor members). */
export async function replicaState(db: Queryable): Promise<ReplicaState> {
  const { rows } = await db.query<{ standby: boolean; lag: number | null }>(
    `SELECT pg_is_in_recovery() AS standby,
            CASE WHEN NOT pg_is_in_recovery() THEN 0
                 WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn()
                      AND EXISTS (SELECT 1 FROM pg_stat_wal_receiver WHERE status = 'streaming') THEN 0
                 ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp())::float8, 0) END AS lag`,
  );
  return { standby: rows[0]!.standby, lagSeconds: Math.max(0, rows[0]!.lag ?? 0) };
}
