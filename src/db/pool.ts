import pg from 'pg';
import { collectAfterCommit, endAfterCommit } from './after-commit.js';
import { connectionTarget, type ConnectionTarget } from './connection-target.js';
import { writeBatch, type ItemOutcome } from './group-commit.js';
import { collectNotices, createNoticeSender, endNotices, type NoticeSender } from './notify.js';
import { isDatabaseUnavailable } from './outage.js';
import { tracer } from '../tracing/tracer.js';
import { DB_CONNECT_TIMEOUT_MS, DB_IDLE_IN_TRANSACTION_TIMEOUT_MS, DB_PREPARED_STATEMENTS_MAX, DB_STATEMENT_TIMEOUT_MS, DB_TRANSACTION_TRIES_MAX } from '../bounds.js';

// One pool per process. Queries run either on the pool or on a client inside a transaction; both satisfy Queryable.
export type Queryable = Pick<pg.PoolClient, 'query'>;
/**
 * A pool with the group commit of its transactions' notices (notify.ts), built with it, never looked up by it; and the
 * target its connections reach, for the clients of its own a LISTEN needs.
 */
export type Pool = pg.Pool & { readonly notices: NoticeSender; readonly target: ConnectionTarget };

export function createPool(connectionString: string, max = 10): Pool {
  const target = connectionTarget(connectionString);
  const pool = new pg.Pool({
    ...target.poolOptions,
    max,
    // Bounded waits: a stuck database surfaces as an error instead of a hung request.
    connectionTimeoutMillis: DB_CONNECT_TIMEOUT_MS,
    // The session's timeouts are set by a statement, not as startup parameters, which PgBouncer refuses (decision 194).
    onConnect: (client) => client.query(SESSION_SETTINGS),
    application_name: 'stableroute',
  });
  // An idle client that loses its connection must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    keepErrorsFromCrashing(client);
    prepareStatements(client);
  });
  return Object.assign(pool, { notices: createNoticeSender(pool), target });
}

const SESSION_SETTINGS = `SET statement_timeout = ${DB_STATEMENT_TIMEOUT_MS}; SET idle_in_transaction_session_timeout = ${DB_IDLE_IN_TRANSACTION_TIMEOUT_MS}`;

/**
 * pg-pool listens for a client's errors only while the client sits idle in the pool. A client checked out for a
 * transaction or a session lock whose server goes away (a restart, a failover, pg_terminate_backend) between two of
 * its queries emits 'error' with no listener, and Node ends the process. The error is already reported where it
 * matters: the query in flight, or the next one, fails ("not queryable"), and release() drops the broken client.
 */
function keepErrorsFromCrashing(client: pg.PoolClient): void {
  client.on('error', () => undefined);
}

/**
 * Every parameterised statement of a connection is prepared once, under a name derived from its text, and then only
 * bound and executed: PostgreSQL parses and plans each of our statements once per connection instead of once per
 * call (decision 53). Statements without parameters (BEGIN, COMMIT, multi-statement scripts) go through unchanged.
 */
function prepareStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const names = new Map<string, string>();
  (client as { query: unknown }).query = (config: unknown, values?: unknown, callback?: unknown) => {
    if (typeof config === 'string' && Array.isArray(values) && (names.has(config) || names.size < DB_PREPARED_STATEMENTS_MAX)) {
      let name = names.get(config);
      if (name === undefined) names.set(config, (name = `sr_${names.size}`));
      return query({ name, text: config, values }, callback);
    }
    return query(config, values, callback);
  };
}

const SERIALIZATION_FAILURE = '40001';
const DEADLOCK = '40P01';

/** Runs fn in one transaction; commits on success, rolls back on any error. Retries deadlocks a bounded number of times. */
export async function withTransaction<T>(pool: Pool, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  return tracer().inSpan('db.transaction', TRANSACTION_SPAN, () => transaction(pool, fn));
}

/** What a transaction's span says: the database, never a statement's text or values. */
const TRANSACTION_SPAN = { kind: 'client', attributes: { 'db.system.name': 'postgresql' } } as const;

async function transaction<T>(pool: Pool, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await inTransaction(pool, 'BEGIN', fn);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if ((code === SERIALIZATION_FAILURE || code === DEADLOCK) && attempt < DB_TRANSACTION_TRIES_MAX) continue;
      throw error;
    }
  }
}

/**
 * withTransaction for a batch of independent items: `fn` answers each item of the batch it is given. When the
 * transaction fails because of one of its items (not an outage), each item runs again in a transaction of its own, so
 * that only the culprit fails (writeBatch, group-commit.ts). The workers' steps run their batches through it.
 */
export async function withBatchTransaction<T, R>(
  pool: Pool,
  items: readonly T[],
  fn: (tx: pg.PoolClient, items: readonly T[]) => Promise<R[]>,
  onSplit?: (error: unknown, items: readonly T[]) => void,
): Promise<ItemOutcome<R>[]> {
  if (items.length === 0) return [];
  return writeBatch(
    items,
    async (batch) => (await withTransaction(pool, (tx) => fn(tx, batch))).map((value) => ({ ok: true as const, value })),
    onSplit,
  );
}

/**
 * Runs fn in one read-only transaction on one snapshot (REPEATABLE READ): reads that must agree with one another,
 * such as the checks of a ledger verification, see the same committed state even while the service writes.
 */
export async function withReadSnapshot<T>(pool: Pool, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  return once(pool, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', fn);
}

/**
 * Runs fn in one transaction that is never retried (fn has an outside effect, such as a POST, that a blind re-run
 * would repeat). The transaction may sit idle while fn waits on the outside world, up to `idleTimeoutMs`.
 */
export async function withTransactionOnce<T>(pool: Pool, options: { idleTimeoutMs: number }, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  // One round trip: the timeout is a whole number of milliseconds, never text from outside.
  return once(pool, `BEGIN; SET LOCAL idle_in_transaction_session_timeout = ${Math.max(0, Math.trunc(options.idleTimeoutMs))}`, fn);
}

/** fn in one transaction opened by `begin` (our own text, never a client's), not retried. */
async function once<T>(pool: Pool, begin: string, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  return tracer().inSpan('db.transaction', TRANSACTION_SPAN, () => inTransaction(pool, begin, fn));
}

/**
 * Every transaction of the pool, once: opened by `begin`, committed when fn succeeds, rolled back otherwise; its
 * notices and after-commit effects go out on commit and are dropped on rollback.
 */
async function inTransaction<T>(pool: Pool, begin: string, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  let committed = false;
  try {
    await client.query(begin);
    collectNotices(client);
    collectAfterCommit(client);
    const result = await fn(client);
    await client.query('COMMIT');
    committed = true;
    return result;
  } catch (error) {
    // A session on a server that went away or turned read-only (a failover) is dropped, never reused; so is one whose
    // ROLLBACK failed, which may still be inside the transaction (decision 219).
    broken = isDatabaseUnavailable(error);
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    endNotices(pool, client, committed);
    const effects = endAfterCommit(client, committed);
    client.release(broken);
    // Committed: the effects are done before the caller learns of the commit (a CLI command may exit right after).
    await effects;
  }
}

/**
 * Runs fn while holding a session-level advisory lock on `key`, if no other session holds it; false (fn not run)
 * otherwise. The lock's connection is held for fn's whole length; fn uses the pool for its own queries.
 */
export async function withSessionLockIfFree(pool: pg.Pool, key: number, fn: () => Promise<void>): Promise<boolean> {
  const client = await pool.connect();
  let broken = false;
  try {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [key]);
    if (!rows[0]?.locked) return false;
    try {
      await fn();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [key]).catch(() => {
        broken = true; // a connection that lost its unlock must not go back to the pool still holding the lock
      });
    }
    return true;
  } finally {
    client.release(broken);
  }
}

/** True when the database answers. */
export async function ping(db: Queryable): Promise<void> {
  await db.query('SELECT 1');
}

/** Takes a transaction-scoped advisory lock if no one holds it; false otherwise. */
export async function tryAdvisoryXactLock(tx: Queryable, key: number): Promise<boolean> {
  const { rows } = await tx.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [key]);
  return rows[0]?.locked === true;
}

/** Waits for a transaction-scoped advisory lock on a text key (e.g. an idempotency key). */
export async function advisoryXactLockText(tx: Queryable, key: string): Promise<void> {
  await advisoryXactLocksText(tx, [key]);
}

/**
 * Waits for the locks of several text keys, taken in one fixed order so that two batches never deadlock; `shared`:
 * locks that only exclude the exclusive holders of the same keys.
 */
export async function advisoryXactLocksText(tx: Queryable, keys: readonly string[], options: { shared?: boolean } = {}): Promise<void> {
  if (keys.length === 0) return;
  const lock = options.shared ? 'pg_advisory_xact_lock_shared' : 'pg_advisory_xact_lock';
  await tx.query(`SELECT ${lock}(h) FROM (SELECT DISTINCT hashtextextended(k, 0) AS h FROM unnest($1::text[]) AS k) s ORDER BY h`, [keys]);
}

export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: string; constraint?: string };
  return e.code === '23505' && (constraint === undefined || e.constraint === constraint);
}
