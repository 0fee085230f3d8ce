// A primary and a streaming standby of a test's own, for the failover tests: initdb and pg_basebackup from the
// machine's PostgreSQL binaries (Debian's /usr/lib/postgresql/15/bin, or PG_BINDIR), data in a temporary folder, never
// the shared server. Synchronous (synchronous_standby_names names the standby, synchronous_commit on) or asynchronous.
// As root (containers, CI) the servers run as the `postgres` user, as PostgreSQL requires.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, waitFor } from './process.js';

const PG_CTL_TIMEOUT_SECONDS = 60;
const STANDBY_NAME = 'standby1';

export interface Server {
  readonly port: number;
  /** URL of `database` on this server (trust authentication on 127.0.0.1 only). */
  url(database?: string): string;
  /** One statement on `database` of this server, on a connection of its own. */
  query<T extends pg.QueryResultRow>(sql: string, params?: unknown[], database?: string): Promise<T[]>;
}

export interface FailoverPair {
  primary: Server & { stopImmediately(): Promise<void> };
  standby: Server & {
    /** Cuts the stream: the standby receives nothing more from the primary (its WAL receiver is gone). */
    cutReplication(): Promise<void>;
    /** pg_ctl promote: the standby becomes a primary on a new timeline. */
    promote(): Promise<void>;
  };
  /** Waits until the standby has replayed everything the primary has written so far. */
  caughtUp(): Promise<void>;
  remove(): Promise<void>;
}

export function postgresBinDir(): string {
  const dir = process.env.PG_BINDIR ?? '/usr/lib/postgresql/15/bin';
  if (!existsSync(join(dir, 'pg_basebackup'))) throw new Error(`no PostgreSQL binaries in ${dir} (set PG_BINDIR)`);
  return dir;
}

function postgresUser(): { uid: number; gid: number } | Record<string, never> {
  if (process.getuid?.() !== 0) return {};
  return {
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
  };
}

function run(file: string, args: string[], ids: ReturnType<typeof postgresUser>): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const child = spawn(file, args, { ...ids, env: { PATH: process.env.PATH ?? '', LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${file} ${args.join(' ')} exited ${code}: ${output}`))));
  });
}

function server(port: number): Server {
  const url = (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`;
  return {
    port,
    url,
    async query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = [], database = 'postgres') {
      const client = new pg.Client({ connectionString: url(database) });
      client.on('error', () => undefined);
      await client.connect();
      try {
        return (await client.query<T>(sql, params)).rows;
      } finally {
        await client.end().catch(() => undefined);
      }
    },
  };
}

export async function startFailoverPair(options: { synchronous: boolean }): Promise<FailoverPair> {
  const bin = postgresBinDir();
  const ids = postgresUser();
  const root = await mkdtemp(join(tmpdir(), 'stableroute-ha-'));
  if ('uid' in ids) await chown(root, ids.uid, ids.gid);
  const dirs = { primary: join(root, 'primary'), standby: join(root, 'standby') };
  const ports = { primary: await freePort(), standby: await freePort() };
  const ctl = (which: 'primary' | 'standby', args: string[]) =>
    run(join(bin, 'pg_ctl'), ['-D', dirs[which], '-l', join(root, `${which}.log`), '-w', '-t', String(PG_CTL_TIMEOUT_SECONDS), ...args], ids);
  const common = '-c listen_addresses=127.0.0.1 -c unix_socket_directories= -c max_connections=300 -c fsync=off -c wal_level=replica -c max_wal_senders=5';
  const sync = options.synchronous ? `-c synchronous_commit=on -c synchronous_standby_names=${STANDBY_NAME}` : "-c synchronous_standby_names=''";
  const started: ('primary' | 'standby')[] = [];

  try {
    await run(join(bin, 'initdb'), ['-D', dirs.primary, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C'], ids);
    await ctl('primary', ['-o', `-p ${ports.primary} ${common} ${sync}`, 'start']);
    started.push('primary');
    // -R: standby.signal and primary_conninfo; the walreceiver names itself by cluster_name (synchronous_standby_names).
    await run(
      join(bin, 'pg_basebackup'),
      ['-h', '127.0.0.1', '-p', String(ports.primary), '-U', 'postgres', '-D', dirs.standby, '-R', '-X', 'stream', '-c', 'fast'],
      ids,
    );
    await ctl('standby', ['-o', `-p ${ports.standby} ${common} -c hot_standby=on -c cluster_name=${STANDBY_NAME}`, 'start']);
    started.push('standby');
  } catch (error) {
    for (const which of started) await ctl(which, ['-m', 'immediate', 'stop']).catch(() => undefined);
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  const primary = server(ports.primary);
  const standby = server(ports.standby);
  await waitFor(
    'the standby streaming from the primary',
    async () => {
      const rows = await primary.query<{ state: string; sync_state: string }>('SELECT state, sync_state FROM pg_stat_replication');
      return rows.some((r) => r.state === 'streaming' && r.sync_state === (options.synchronous ? 'sync' : 'async'));
    },
    30_000,
  );

  return {
    primary: { ...primary, stopImmediately: () => ctl('primary', ['-m', 'immediate', 'stop']) },
    standby: {
      ...standby,
      async cutReplication() {
        await standby.query("ALTER SYSTEM SET primary_conninfo = ''");
        await standby.query('SELECT pg_reload_conf()');
        await waitFor('the standby WAL receiver gone', async () => (await standby.query('SELECT 1 FROM pg_stat_wal_receiver')).length === 0, 30_000);
      },
      promote: () => ctl('standby', ['promote']),
    },
    async caughtUp() {
      const lsn = (await primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn'))[0]!.lsn;
      await waitFor(
        'the standby caught up',
        async () => (await standby.query<{ ok: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS ok', [lsn]))[0]!.ok,
        30_000,
      );
    },
    async remove() {
      for (const which of ['standby', 'primary'] as const) await ctl(which, ['-m', 'immediate', 'stop']).catch(() => undefined);
      await rm(root, { recursive: true, force: true });
    },
  };
}
