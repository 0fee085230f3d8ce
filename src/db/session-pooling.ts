// Whether the sessions of a URL are sessions: a pooler in transaction (or statement) mode hands each transaction to
// whichever server connection is free, so what a session keeps (our named prepared statements, LISTEN, session advisory
// locks, SET) lands on a server connection other clients then get (decision 194).
import { connectionTarget } from './connection-target.js';

const BACKEND_SQL = 'SELECT pg_backend_pid() AS pid';

/**
 * True when two statements of one session can run on two server connections. Session A runs a statement, session B
 * opens a transaction, A runs another: behind a transaction pooler B is handed the server connection A just let go
 * (PgBouncer reuses the last one freed), or A's second statement goes to another. Directly, or in session mode, A stays
 * on its own server connection and B never gets it.
 */
export async function sessionsArePooledPerTransaction(url: string): Promise<boolean> {
  const target = connectionTarget(url);
  const [a, b] = [target.client({ application_name: 'stableroute-pooling-check' }), target.client({ application_name: 'stableroute-pooling-check' })];
  a.on('error', () => undefined);
  b.on('error', () => undefined);
  try {
    await a.connect();
    await b.connect();
    const pid = async (client: typeof a) => (await client.query<{ pid: number }>(BACKEND_SQL)).rows[0]!.pid;
    const first = await pid(a);
    await b.query('BEGIN');
    const other = await pid(b);
    const second = await pid(a);
    await b.query('ROLLBACK');
    return first !== second || other === first;
  } finally {
    await Promise.all([a.end().catch(() => undefined), b.end().catch(() => undefined)]);
  }
}
