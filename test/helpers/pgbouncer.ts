// A PgBouncer of a test's own (Debian's /usr/sbin/pgbouncer) in front of a test's own PostgreSQL, on a free port.
// PgBouncer refuses to run as root: as root (containers, CI) it runs as the `postgres` user, like the servers.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, waitFor } from './process.js';

export const PGBOUNCER = '/usr/sbin/pgbouncer';
export type PoolMode = 'session' | 'transaction';

export interface PgBouncer {
  /** A URL of `database` through the pooler (any user name: auth_type any, the server is reached as postgres). */
  url(database: string): string;
  /** Client connections PgBouncer holds now (its admin console's SHOW CLIENTS). */
  clients(): Promise<number>;
  /** Stops PgBouncer and removes its folder. */
  remove(): Promise<void>;
}

function postgresUser(): { uid: number; gid: number } | Record<string, never> {
  if (process.getuid?.() !== 0) return {};
  return {
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
  };
}

/** PgBouncer in `poolMode` in front of the server of `serverUrl` (trust authentication on 127.0.0.1). */
export async function startPgBouncer(serverUrl: string, poolMode: PoolMode): Promise<PgBouncer> {
  const server = new URL(serverUrl);
  const ids = postgresUser();
  const root = await mkdtemp(join(tmpdir(), 'stableroute-pgbouncer-'));
  if ('uid' in ids) await chown(root, ids.uid, ids.gid);
  const port = await freePort();
  const ini = join(root, 'pgbouncer.ini');
  await writeFile(
    ini,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port} user=postgres`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = any',
      'admin_users = postgres',
      `pool_mode = ${poolMode}`,
      'max_client_conn = 1000',
      'default_pool_size = 100',
      `logfile = ${join(root, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
  );
  if ('uid' in ids) await chown(ini, ids.uid, ids.gid);
  let output = '';
  const child: ChildProcess = spawn(PGBOUNCER, [ini], { ...ids, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (c) => (output += c));
  child.stderr!.on('data', (c) => (output += c));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const admin = async <T extends pg.QueryResultRow>(text: string) => {
    const client = new pg.Client({ connectionString: url('pgbouncer'), connectionTimeoutMillis: 5_000 });
    await client.connect();
    try {
      return (await client.query<T>(text)).rows;
    } finally {
      await client.end();
    }
  };
  const remove = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    await rm(root, { recursive: true, force: true });
  };
  try {
    await waitFor(`pgbouncer listening (${output})`, async () => {
      if (child.exitCode !== null) throw new Error(`pgbouncer exited: ${output}`);
      return (await admin('SHOW VERSION')).length > 0;
    });
  } catch (error) {
    await remove();
    throw error;
  }
  return {
    url,
    // The admin console's own connection is one of them.
    clients: async () => (await admin<{ database: string }>('SHOW CLIENTS')).filter((c) => c.database !== 'pgbouncer').length,
    remove,
  };
}
