// A primary and a streaming standby of a test's own, for failover tests: the machine's Debian PostgreSQL binaries
// (initdb, pg_basebackup -R, pg_ctl), data in a temporary folder, never the shared server of the rest of the suite.
// As root (containers, CI) both servers run as the `postgres` user, as PostgreSQL requires (private-postgres.ts).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, waitFor } from './process.js';

export type ShutdownMode = 'fast' | 'immediate';

export interface ReplicationOptions {
  /**
   * true: the primary waits for the standby to flush each commit before answering it (`synchronous_commit=on` with
   * `synchronous_standby_names`), so a promoted standby has every acknowledged commit. false: asynchronous, the
   * default of PostgreSQL and Patroni, where a promoted standby may lack the last commits.
   */
  synchronous: boolean;
}

export interface ReplicatedPostgres {
  /** Superuser URLs of the `postgres` database (trust authentication on 127.0.0.1 only). */
  readonly urls: {
    readonly primary: string;
    readonly standby: string;
    /** Both servers, primary first, as libpq takes several hosts: `target_session_attrs=read-write`. */
    readonly failover: string;
  };
  /** `pg_ctl stop -m <mode>` of the primary: immediate is a crash, as a lost machine. */
  stopPrimary(mode: ShutdownMode): Promise<void>;
  /** `pg_ctl stop -m <mode>` of the standby (a lost replica). */
  stopStandby(mode: ShutdownMode): Promise<void>;
  /** `pg_ctl promote` of the standby; resolves once it accepts writes. */
  promoteStandby(): Promise<void>;
  /** Waits until the standby has replayed everything the primary has written so far. */
  waitStandbyCaughtUp(): Promise<void>;
  /**
   * Stops the standby's streaming (an empty primary_conninfo): the primary's later commits never reach it, as a standby
   * that fell behind. Asynchronous pairs only (a synchronous primary would wait for it forever).
   */
  detachStandby(): Promise<void>;
  /** Stops both servers (immediate) and removes their folder. */
  remove(): Promise<void>;
}

/** The newest Debian PostgreSQL with pg_basebackup (.ci/run installs one when missing); none is a loud failure. */
const BIN = (() => {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'pg_basebackup'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (newest === undefined) throw new Error(`no PostgreSQL server binaries with pg_basebackup under ${root}: apt-get install postgresql`);
  return join(root, newest, 'bin');
})();
const PG_CTL_TIMEOUT_SECONDS = 60;
const STANDBY_NAME = 'standby';

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
    const child = spawn(join(BIN, file), args, { ...ids, env: { PATH: process.env.PATH ?? '', LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${file} ${args.join(' ')} exited ${code}: ${output}`))));
  });
}

async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

/**
 * A pair on free ports. A port found free may be taken by another test's server before ours binds it (the suite runs
 * files side by side); such a start is tried again on new ports.
 */
export async function startReplicatedPostgres(options: ReplicationOptions): Promise<ReplicatedPostgres> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startPair(options);
    } catch (error) {
      if (attempt === 3 || !/could not bind|Address already in use/.test((error as Error).message)) throw error;
    }
  }
}

async function startPair(options: ReplicationOptions): Promise<ReplicatedPostgres> {
  const ids = postgresUser();
  const root = await mkdtemp(join(tmpdir(), 'stableroute-pg-pair-'));
  if ('uid' in ids) await chown(root, ids.uid, ids.gid);
  const primaryData = join(root, 'primary');
  const standbyData = join(root, 'standby');
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  const common = '-c listen_addresses=127.0.0.1 -c unix_socket_directories= -c max_connections=300 -c fsync=off -c wal_level=replica';
  const sync = options.synchronous ? ` -c synchronous_commit=on -c synchronous_standby_names=${STANDBY_NAME}` : '';
  const primaryOptions = `-p ${primaryPort} ${common}${sync}`;
  // cluster_name names the standby's WAL receiver (its application_name), which synchronous_standby_names lists.
  const standbyOptions = `-p ${standbyPort} ${common} -c cluster_name=${STANDBY_NAME} -c hot_standby=on`;
  const ctl = (data: string, log: string, args: string[]) => run('pg_ctl', ['-D', data, '-l', join(root, log), '-w', '-t', String(PG_CTL_TIMEOUT_SECONDS), ...args], ids);
  const url = (port: number) => `postgres://postgres@127.0.0.1:${port}/postgres`;
  const urls = {
    primary: url(primaryPort),
    standby: url(standbyPort),
    failover: `postgres://postgres@127.0.0.1:${primaryPort},127.0.0.1:${standbyPort}/postgres?target_session_attrs=read-write`,
  };
  const stopBoth = async () => {
    await ctl(primaryData, 'primary.log', ['-m', 'immediate', 'stop']).catch(() => undefined);
    await ctl(standbyData, 'standby.log', ['-m', 'immediate', 'stop']).catch(() => undefined);
  };
  try {
    await run('initdb', ['-D', primaryData, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C'], ids);
    await ctl(primaryData, 'primary.log', ['-o', primaryOptions, 'start']);
    // -R writes standby.signal and primary_conninfo; -X stream copies the WAL written during the copy.
    await run('pg_basebackup', ['-D', standbyData, '-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-R', '-X', 'stream', '-c', 'fast'], ids);
    await ctl(standbyData, 'standby.log', ['-o', standbyOptions, 'start']);
    await waitFor(
      'the standby streaming from the primary',
      async () => {
        const rows = await query<{ sync_state: string }>(urls.primary, `SELECT sync_state FROM pg_stat_replication WHERE state = 'streaming'`);
        return rows.some((r) => r.sync_state === (options.synchronous ? 'sync' : 'async'));
      },
      60_000,
    );
  } catch (error) {
    await stopBoth();
    // The servers' own words on why they stopped, before their folder goes.
    const logs = await Promise.all(['primary.log', 'standby.log'].map(async (log) => `${log}:\n${(await readFile(join(root, log), 'utf8').catch(() => '')).slice(-2_000)}`));
    await rm(root, { recursive: true, force: true });
    throw new Error(`${(error as Error).message}\n${logs.join('\n')}`, { cause: error });
  }

  return {
    urls,
    stopPrimary: (mode) => ctl(primaryData, 'primary.log', ['-m', mode, 'stop']),
    stopStandby: (mode) => ctl(standbyData, 'standby.log', ['-m', mode, 'stop']),
    async promoteStandby() {
      await ctl(standbyData, 'standby.log', ['promote']);
      await waitFor('the promoted standby writable', async () => (await query<{ writable: boolean }>(urls.standby, 'SELECT NOT pg_is_in_recovery() AS writable'))[0]?.writable === true, 30_000);
    },
    async waitStandbyCaughtUp() {
      const [{ lsn }] = (await query<{ lsn: string }>(urls.primary, 'SELECT pg_current_wal_lsn()::text AS lsn')) as [{ lsn: string }];
      await waitFor(
        `the standby replayed up to ${lsn}`,
        async () => (await query<{ done: boolean }>(urls.standby, `SELECT pg_last_wal_replay_lsn() >= '${lsn}'::pg_lsn AS done`))[0]?.done === true,
        30_000,
      );
    },
    async detachStandby() {
      if (options.synchronous) throw new Error('detachStandby: a synchronous primary would wait for the standby forever');
      await query(urls.standby, "ALTER SYSTEM SET primary_conninfo = ''");
      await query(urls.standby, 'SELECT pg_reload_conf()');
      await waitFor('the standby no longer streaming', async () => (await query(urls.primary, 'SELECT 1 FROM pg_stat_replication')).length === 0, 30_000);
    },
    async remove() {
      await stopBoth();
      await rm(root, { recursive: true, force: true });
    },
  };
}
