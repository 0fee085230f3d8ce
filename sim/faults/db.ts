// The database's faults, injected on the real pool: the service's code (withTransaction and its retries, group commit's
// outage rule, the HTTP error handler) meets them as it would meet the real ones, because they are the real ones, made
// to happen on a real connection at a moment the seed chooses:
// - an ambiguous commit: COMMIT (or a statement outside a transaction, which commits on its own) applies on the server,
//   then the connection dies before the client hears of it;
// - a serialization failure (40001) or a deadlock (40P01) on a statement of a transaction, which PostgreSQL aborts;
// - a connection lost in the middle of a transaction, which the server rolls back;
// - a pool briefly exhausted: connect() fails as pg-pool's connectionTimeoutMillis makes it fail.
// Faults touch only the connections taken through the wrapper: the raw pool it wraps stays clean for the simulator's
// own reads (its invariants), and pg-boss's own pool is left alone (the jobs the service writes inside its transactions
// go through the wrapper with them).
import type pg from 'pg';
import type { Pool } from '../../src/db/pool.js';
import type { Rng } from '../rng.js';
import type { FaultPlan } from './plan.js';
import { abortStatement, killConnection, poolTimeoutError } from './db-errors.js';

/** How many connect() calls in a row an exhausted pool refuses, at most (itself included). */
export const DB_POOL_EXHAUSTED_CONNECTS_MAX = 3;

type QueryArgs = [config: unknown, values?: unknown, callback?: unknown];

/** A statement of the service that PostgreSQL refused on one of its integrity constraints (SQLSTATE class 23). */
export interface ConstraintRefusal {
  code: string;
  constraint: string | null;
  message: string;
}

const refusalsOf = new WeakMap<object, ConstraintRefusal[]>();

/**
 * The statements of the service on a pool `wrapPool` made that an integrity constraint refused, in order. The faults
 * never make one (they abort with 40001, 40P01, 57P01 or drop the connection): a refusal is the service's own logic
 * asking the database for something its constraints forbid, which the constraint caught instead of the service.
 */
export function constraintRefusals(pool: Pool): readonly ConstraintRefusal[] {
  return refusalsOf.get(pool) ?? [];
}

/**
 * The pool `pool` with the faults `faults` allows (the `db.*` kinds), each decided when its moment comes by a roll of
 * the plan, in the order the service reaches those moments; `rng` picks the details (which error text, which way a
 * connection dies, how long the pool stays exhausted).
 */
export function wrapPool(pool: Pool, faults: FaultPlan, rng: Rng): Pool {
  let exhaustedConnectsLeft = 0;
  const refusals: ConstraintRefusal[] = [];

  async function connect(): Promise<pg.PoolClient> {
    if (exhaustedConnectsLeft > 0 && !faults.calm) {
      exhaustedConnectsLeft--;
      throw poolTimeoutError();
    }
    exhaustedConnectsLeft = 0;
    if (faults.roll('db.pool_exhausted')) {
      exhaustedConnectsLeft = rng.int(1, DB_POOL_EXHAUSTED_CONNECTS_MAX) - 1;
      throw poolTimeoutError();
    }
    return faultyClient(await pool.connect(), faults, rng, refusals);
  }

  /** pool.query as pg-pool runs it (a connection of its own, released with the query's error), through `connect`. */
  async function query(...[config, values]: QueryArgs): Promise<pg.QueryResult> {
    const client = await connect();
    try {
      const result = await (client.query as (c: unknown, v?: unknown) => Promise<pg.QueryResult>)(config, values);
      client.release();
      return result;
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
  }

  const overrides: Record<PropertyKey, unknown> = {
    connect: (callback?: (error: Error | undefined, client?: pg.PoolClient, done?: (e?: Error) => void) => void) => {
      if (typeof callback !== 'function') return connect();
      connect().then(
        (client) => callback(undefined, client, (e) => client.release(e)),
        (error: Error) => callback(error),
      );
      return undefined;
    },
    query: (...args: QueryArgs) => {
      const callback = typeof args[2] === 'function' ? args[2] : typeof args[1] === 'function' ? args[1] : undefined;
      const run = query(args[0], typeof args[1] === 'function' ? undefined : args[1]);
      if (callback === undefined) return run;
      run.then(
        (result) => (callback as (e: unknown, r?: unknown) => void)(undefined, result),
        (error: unknown) => (callback as (e: unknown) => void)(error),
      );
      return undefined;
    },
  };
  const wrapped = new Proxy(pool, {
    get(target, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property];
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  refusalsOf.set(wrapped, refusals);
  return wrapped;
}

function textOf(config: unknown): string {
  return String(typeof config === 'string' ? config : ((config as { text?: unknown } | null)?.text ?? ''));
}

/** What names a statement for the fault draws: the start of its text (the service's own, never a client's). */
function keyOf(config: unknown): string {
  return textOf(config).trim().slice(0, 120);
}

/** Where a statement stands in the transaction of its connection, read from its text (ours, never a client's). */
function statementKind(config: unknown): 'begin' | 'commit' | 'rollback' | 'other' {
  const head = textOf(config).trimStart().slice(0, 8).toUpperCase();
  if (head.startsWith('BEGIN') || head.startsWith('START')) return 'begin';
  if (head.startsWith('COMMIT') || head.startsWith('END')) return 'commit';
  if (head.startsWith('ROLLBACK') || head.startsWith('ABORT')) return 'rollback';
  return 'other';
}

/**
 * Whether a statement writes or takes locks, so that it can be the victim of a deadlock or a serialization failure: any
 * statement but a plain read (a SELECT or WITH that neither writes, locks rows nor takes an advisory lock).
 */
function mayConflict(config: unknown): boolean {
  const text = textOf(config);
  if (!/^\s*(SELECT|WITH|VALUES|SHOW|SET)\b/i.test(text)) return true;
  return /\b(INSERT|UPDATE|DELETE|FOR\s+(NO\s+KEY\s+)?UPDATE|FOR\s+(KEY\s+)?SHARE|pg_advisory\w*lock\w*|nextval)\b/i.test(text);
}

/** One checkout of a raw client, with the faults of a transaction on its statements. */
function faultyClient(client: pg.PoolClient, faults: FaultPlan, rng: Rng, refusals: ConstraintRefusal[]): pg.PoolClient {
  let inTransaction = false;
  let readOnly = false;
  // The fault draws are keyed by the statement (a COMMIT by its transaction's first statement): see FaultPlan.roll.
  let firstOfTransaction = '';
  const send = client.query.bind(client) as (config: unknown, values?: unknown) => Promise<pg.QueryResult>;
  const raw = (config: unknown, values?: unknown): Promise<pg.QueryResult> =>
    send(config, values).catch((error: unknown) => {
      const { code, constraint, message } = (error ?? {}) as { code?: unknown; constraint?: unknown; message?: unknown };
      if (typeof code === 'string' && code.startsWith('23')) refusals.push({ code, constraint: typeof constraint === 'string' ? constraint : null, message: String(message) });
      throw error;
    });

  async function query(config: unknown, values?: unknown): Promise<pg.QueryResult> {
    const kind = statementKind(config);
    if (kind === 'begin') {
      const result = await raw(config, values);
      inTransaction = true;
      readOnly = /\bREAD ONLY\b/i.test(textOf(config));
      firstOfTransaction = '';
      return result;
    }
    if (!inTransaction) {
      // A statement outside a transaction commits on its own: its answer can be lost as a COMMIT's can.
      const result = await raw(config, values);
      if (kind === 'other' && faults.roll('db.ambiguous_commit', keyOf(config))) throw await killConnection(client, rng.chance(0.5) ? 'terminated' : 'dropped');
      return result;
    }
    if (kind === 'rollback') {
      inTransaction = false;
      return raw(config, values);
    }
    if (kind === 'commit') {
      inTransaction = false;
      const result = await raw(config, values);
      if (faults.roll('db.ambiguous_commit', firstOfTransaction)) throw await killConnection(client, rng.chance(0.5) ? 'terminated' : 'dropped');
      return result;
    }
    const key = keyOf(config);
    firstOfTransaction ||= key;
    if (faults.roll('db.connection_lost', key)) {
      inTransaction = false;
      throw await killConnection(client, rng.chance(0.5) ? 'terminated' : 'dropped');
    }
    // Only a statement that writes or locks can lose a conflict, and never in a read-only transaction (a ledger
    // verification's snapshot): a fault PostgreSQL cannot produce would be a false alarm.
    if (!readOnly && mayConflict(config)) {
      if (faults.roll('db.serialization_failure', key)) return raw(abortStatement('serialization_failure', rng));
      if (faults.roll('db.deadlock', key)) return raw(abortStatement('deadlock', rng));
    }
    return raw(config, values);
  }

  const wrappedQuery = (config: unknown, values?: unknown, callback?: unknown) => {
    const cb = typeof callback === 'function' ? callback : typeof values === 'function' ? values : undefined;
    const run = query(config, typeof values === 'function' ? undefined : values);
    if (cb === undefined) return run;
    run.then(
      (result) => (cb as (e: unknown, r?: unknown) => void)(undefined, result),
      (error: unknown) => (cb as (e: unknown) => void)(error),
    );
    return undefined;
  };
  return new Proxy(client, {
    get(target, property) {
      if (property === 'query') return wrappedQuery;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
