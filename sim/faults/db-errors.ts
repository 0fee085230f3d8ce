// The database's failures as the service meets them, made by the server and by pg themselves wherever they can be: a
// statement that PostgreSQL fails with a serialization failure or a deadlock (raised on the server, so the transaction
// really is aborted), a backend terminated under its client (the server's own FATAL 57P01), a connection that drops
// (pg's own "Connection terminated unexpectedly"), and the wait for a connection that pg-pool gives up on.
import type pg from 'pg';
import type { Rng } from '../rng.js';

/** pg-pool's words when connectionTimeoutMillis passes with every connection taken (pg-pool/index.js). */
export const POOL_TIMEOUT_MESSAGE = 'timeout exceeded when trying to connect';

export function poolTimeoutError(): Error {
  return new Error(POOL_TIMEOUT_MESSAGE);
}

/**
 * The texts PostgreSQL gives each failure (src/backend/storage/lmgr/deadlock.c, predicate.c, heapam.c). Raised by a
 * statement of ours on the server, the error is a real pg DatabaseError with the real code, and the transaction enters
 * the aborted state exactly as after the real failure.
 */
export function abortStatement(kind: 'serialization_failure' | 'deadlock', rng: Rng): string {
  if (kind === 'deadlock') {
    const [a, b] = [rng.int(1000, 99999), rng.int(1000, 99999)];
    const [x, y] = [rng.int(1000, 999999), rng.int(1000, 999999)];
    return raise('40P01', 'deadlock detected', {
      detail: `Process ${a} waits for ShareLock on transaction ${x}; blocked by process ${b}.\nProcess ${b} waits for ShareLock on transaction ${y}; blocked by process ${a}.`,
      hint: 'See server log for query details.',
    });
  }
  return rng.chance(0.5)
    ? raise('40001', 'could not serialize access due to concurrent update', {})
    : raise('40001', 'could not serialize access due to read/write dependencies among transactions', {
        detail: 'Reason code: Canceled on identification as a pivot, during write.',
        hint: 'The transaction might succeed if retried.',
      });
}

function raise(code: string, message: string, extra: { detail?: string; hint?: string }): string {
  const options = [`ERRCODE = ${literal(code)}`, `MESSAGE = ${literal(message)}`];
  if (extra.detail !== undefined) options.push(`DETAIL = ${literal(extra.detail)}`);
  if (extra.hint !== undefined) options.push(`HINT = ${literal(extra.hint)}`);
  return `DO $sim$ BEGIN RAISE EXCEPTION USING ${options.join(', ')}; END $sim$`;
}

function literal(text: string): string {
  return `E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''").replace(/\n/g, '\\n')}'`;
}

/** The raw client under the pool's wrapper: its socket, and its state as pg-pool reads it on release. */
interface RawClient {
  connection: { stream: { destroy(): void } };
  _ending?: boolean;
  _ended?: boolean;
}

/**
 * Kills the client's connection, as `how` says, and answers the error its client reports, once pg has taken the
 * client as broken (not queryable, so that pg-pool discards it on release whatever the caller says).
 * - 'terminated': the backend ends itself (pg_terminate_backend, as an operator, a failover or the OOM killer would):
 *   PostgreSQL rolls back what was open and says FATAL 57P01.
 * - 'dropped': the network drops the connection; pg says "Connection terminated unexpectedly"; the server rolls back
 *   what was open when it reads the end of the stream.
 */
export async function killConnection(client: pg.PoolClient, how: 'terminated' | 'dropped'): Promise<Error> {
  const raw = client as unknown as RawClient;
  let reported: Error | undefined;
  const onError = (error: Error) => (reported ??= error);
  client.on('error', onError);
  const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
  try {
    if (how === 'terminated') {
      // The server's FATAL comes back as this statement's error (a row first, on a slow signal: then as an event).
      await client.query('SELECT pg_terminate_backend(pg_backend_pid())').then(
        () => undefined,
        (error: Error) => (reported = error),
      );
    } else {
      raw.connection.stream.destroy();
    }
    await ended;
  } finally {
    client.removeListener('error', onError);
  }
  return reported ?? new Error('Connection terminated unexpectedly');
}
