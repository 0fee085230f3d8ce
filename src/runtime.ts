// Assembles a process: database (embedded or DATABASE_URL), migrations, queue, chain adapters, treasuries, then the
// HTTP listeners and/or the workers, and a graceful stop in the reverse order.
import type { FastifyInstance } from 'fastify';
import type PgBoss from 'pg-boss';
import pino, { type Logger } from 'pino';
import { logFormatOf, prettyStream } from './log-format.js';
import { buildApp } from './api/app.js';
import type { Readiness } from './api/routes/health.js';
import { createAdapters } from './chains/factory.js';
import { systemClock, type Clock } from './clock.js';
import { ConfigError, type Config } from './config.js';
import type { AppContext } from './core/context.js';
import { createGroupCommits } from './core/group-commits.js';
import { createScreener } from './core/screening/screener.js';
import { checkAnchorFile } from './core/operators/audit-anchor.js';
import { auditMigrationSteps } from './core/operators/audit.js';
import { ensureTestMerchant } from './core/merchants/merchants.js';
import { ensureTreasuries, refuseRemovedChains } from './core/treasury/treasury.js';
import { observeHistory } from './core/treasury/books/history.js';
import { checkReplication } from './core/treasury/books/replication.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.js';
import { ensureDatabase } from './db/ensure-database.js';
import { applyMigrations, withStartupLock } from './db/migrate.js';
import { NoticeCache } from './db/notice-cache.js';
import { createPool, type Pool } from './db/pool.js';
import { createReadPool } from './db/read-pool.js';
import { sessionsArePooledPerTransaction } from './db/session-pooling.js';
import { createMetrics } from './metrics/registry.js';
import { startQueue } from './jobs/queue.js';
import { startWorkers, type Workers } from './workers/runner.js';
import { startTracing } from './tracing/start.js';
import { DB_POOL_CONNECTIONS, DB_SERVE_API_POOL_CONNECTIONS, DB_SERVE_WORKER_POOL_CONNECTIONS, QUEUE_STOP_TIMEOUT_MS } from './bounds.js';

export interface Roles {
  api: boolean;
  workers: boolean;
}

export interface Runtime {
  ctx: AppContext;
  /** The connection pools: one shared by both in a process with one role, apart in `serve` (decision 143). */
  pools: { api: Pool; workers: Pool };
  /** Bound addresses, e.g. { public: 'http://127.0.0.1:3000', admin: ... }. */
  addresses: { public?: string; admin?: string };
  stop(): Promise<void>;
}

const SECRET_NAMES = [
  'treasuryKey',
  'secretKey',
  'privateKey',
  'apiKeySalt',
  'webhookSigningSecret',
  'operatorWebhookSecret',
  'screeningSecret',
  'pin',
  'adminToken',
  'webhookSecret',
  'webhook_secret',
  'ADMIN_TOKEN',
  'ETHEREUM_TREASURY_KEY',
  'SOLANA_TREASURY_KEY',
  'API_KEY_SALT',
  'WEBHOOK_SIGNING_SECRET',
  'OPERATOR_WEBHOOK_SECRET',
  'SCREENING_SECRET',
  'AUDIT_KEY',
];
const SECRET_PATHS = SECRET_NAMES.flatMap((name) => [name, `*.${name}`, `*.*.${name}`, `*.*.*.${name}`]);

/** Where an operator points a browser and Prometheus: the console and /metrics on the admin listener, /docs on the public one. */
export function operatorUrls(addresses: Runtime['addresses']): { console?: string; metrics?: string; docs?: string } {
  const admin = addresses.admin ?? addresses.public;
  return admin ? { console: `${admin}/console`, metrics: `${admin}/metrics`, docs: `${addresses.public}/docs` } : {};
}

export interface LoggerOutput {
  /** Whether stdout is a terminal (default: ask it). */
  terminal?: boolean;
  /** Where records go (default: stdout). */
  destination?: NodeJS.WritableStream;
}

/** `logFormat` and `production` absent: JSON lines, as a CLI command or a test child process has always logged. */
export function createLogger(
  config: Pick<Config, 'logLevel'> & Partial<Pick<Config, 'logFormat' | 'production'>>,
  output: LoggerOutput = {},
): Logger {
  const options = {
    level: config.logLevel,
    // Keys and secrets never reach the logs, whatever an error object carries. Paths are fixed depths (there is no
    // recursive wildcard): a secret on its own, in an options object, in a config (config.apiKeySalt), in a config
    // section (config.solana.treasuryKey) or in a context's config (ctx.config.ethereum.treasuryKey). Config also
    // hides the treasury keys from any serialisation (src/config.ts).
    redact: { paths: [...SECRET_PATHS, 'req.headers["x-api-key"]', 'req.headers.authorization', '*.apiKey', 'apiKey', 'api_key'], censor: '[redacted]' },
  };
  const terminal = output.terminal ?? process.stdout.isTTY === true;
  const format = config.production === undefined ? 'json' : logFormatOf(config.logFormat ?? null, config.production, terminal);
  if (format === 'pretty') return pino(options, prettyStream(output.destination ?? 1, terminal));
  return output.destination === undefined ? pino(options) : pino(options, output.destination);
}

const TRANSACTION_POOLING =
  'it reaches PostgreSQL through a pooler in transaction or statement mode (two statements of one session ran on two server ' +
  'connections); stableroute keeps session state (named prepared statements, LISTEN, session advisory locks, session ' +
  'settings): use pool_mode = session in PgBouncer, or connect to PostgreSQL directly (decision 194)';

/** Database, migrations and the pieces every role needs. */
export async function openDatabase(config: Config, log: Logger): Promise<{ url: string; embedded: EmbeddedDatabase | null }> {
  if (config.databaseUrl) {
    await ensureDatabase(config.databaseUrl);
    if (await sessionsArePooledPerTransaction(config.databaseUrl)) throw new ConfigError('DATABASE_URL', TRANSACTION_POOLING);
    return { url: config.databaseUrl, embedded: null };
  }
  const embedded = await startEmbeddedPostgres(config.dataDir, log);
  return { url: embedded.url, embedded };
}

/**
 * Migrations, then the job queue and its queues, under one start-up lock: processes started at once on a fresh
 * database take turns instead of racing in CREATE TABLE or pg-boss's create_queue (decision 50).
 */
export async function prepareDatabase(
  pool: Pool,
  config: Config,
  url: string,
  options: { supervise: boolean },
): Promise<{ applied: string[]; boss: PgBoss }> {
  return withStartupLock(pool, async (client) => {
    const applied = await applyMigrations(client, auditMigrationSteps(config));
    const boss = await startQueue({
      connectionString: url,
      jobTimeoutSeconds: config.executionJobTimeoutSeconds,
      retryDelaySeconds: config.executionRetryDelaySeconds,
      maintenanceIntervalSeconds: Math.min(30, config.executionJobTimeoutSeconds),
      supervise: options.supervise,
    });
    return { applied, boss };
  });
}

export async function startRuntime(config: Config, roles: Roles, options: { clock?: Clock; log?: Logger } = {}): Promise<Runtime> {
  const log = options.log ?? createLogger(config);
  const clock = options.clock ?? systemClock;
  // First, before the database is touched: a list file that cannot be read refuses the start; after that, its changes
  // are picked up while running.
  const screener = await createScreener(config, clock, log);
  // An anchor file this process cannot append to would leave its records unanchored: refuse the start instead.
  if (config.audit.anchorFile !== null) {
    try {
      await checkAnchorFile(config.audit.anchorFile);
    } catch (error) {
      await screener.close();
      throw new ConfigError('AUDIT_ANCHOR_FILE', `cannot append to ${config.audit.anchorFile} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
    }
  }
  let database: Awaited<ReturnType<typeof openDatabase>>;
  try {
    database = await openDatabase(config, log);
  } catch (error) {
    await screener.close();
    throw error;
  }
  const { url, embedded } = database;
  // Traces only when configured: the SDK is imported here, or never (decision 212). Stopped last, with what is pending.
  const tracing = await startTracing(config.traces, log).catch(async (error: unknown) => {
    await screener.close();
    await embedded?.stop();
    throw error;
  });
  // `serve` runs the api and the workers in one process; each gets connections of its own (decision 143), so a request
  // never queues for a connection behind a backlog of executions and webhook POSTs.
  const bothRoles = roles.api && roles.workers;
  const pool = createPool(url, bothRoles ? DB_SERVE_API_POOL_CONNECTIONS : DB_POOL_CONNECTIONS);
  const workerPool = bothRoles ? createPool(url, DB_SERVE_WORKER_POOL_CONNECTIONS) : pool;
  // Run in order at stop; later set-up steps unshift theirs, so teardown is the reverse of start-up.
  const closers: (() => Promise<void>)[] = [async () => screener.close(), async () => pool.end(), async () => embedded?.stop(), async () => tracing?.stop()];
  if (workerPool !== pool) closers.unshift(async () => workerPool.end());
  try {
    // Reads that decide nothing (console lists, exports, metrics gauges) go to DATABASE_READ_URL's server (decision
    // 195). One that does not answer now does not stop the start (those reads answer 503 until it does); one behind a
    // transaction pooler does, as DATABASE_URL's.
    if (config.databaseReadUrl !== null && (await sessionsArePooledPerTransaction(config.databaseReadUrl).catch(() => false))) {
      throw new ConfigError('DATABASE_READ_URL', TRANSACTION_POOLING);
    }
    const reads = config.databaseReadUrl === null ? undefined : createReadPool(config.databaseReadUrl);
    if (reads) closers.unshift(async () => reads.end());
    const { applied, boss } = await prepareDatabase(pool, config, url, { supervise: roles.workers });
    if (applied.length) log.info({ applied }, 'migrations applied');
    // From here on, a refused reload of the screening list raises its operator alert (decision 182).
    screener.reportListTo({ pool, clock, log, config });
    closers.unshift(async () => boss.stop({ graceful: true, wait: true, timeout: QUEUE_STOP_TIMEOUT_MS }));
    // Before any adapter starts: a chain dropped from CHAINS with money or payments on it stops start-up.
    for (const left of await refuseRemovedChains(pool, config.chainNames)) {
      log.warn({ chain: left.chain, nativeUnits: left.nativeUnits.toString() }, 'a chain left CHAINS with gas on its books: move it out with the treasury key');
    }
    const metrics = createMetrics();
    const adapters = await createAdapters(config, workerPool, clock, log, metrics);
    closers.unshift(async () => {
      await Promise.all(Object.values(adapters).map((a) => a.close?.()));
    });
    const groupCommits = createGroupCommits({ pool, clock, boss, log, config });
    const ctx: AppContext = { config, pool, clock, log, adapters, boss, metrics, groupCommits, screener, ...(reads && { reads }) };
    await ensureTreasuries(pool, adapters, clock.now(), (chain) => config.chains[chain]?.tokens.map((t) => t.token) ?? []);
    // Before anything signs: a database on another history than the books (a failover, a restore) holds every chain's
    // signing until its treasury is checked against the books (decisions 198, 199).
    await observeHistory({ pool, clock, log, config });
    if (config.production) {
      const reason = await checkReplication({ pool, clock, log, config });
      if (reason !== null) {
        log.warn({ reason }, `the database has no synchronous standby (${reason}): a failover can lose acknowledged commits; raised the operator alert database_not_synchronous`);
      }
    }
    if (!config.production) await ensureTestMerchant(pool, config.devMerchantWebhookUrl, clock.now());

    // Workers start before the listeners: a listener that cannot bind (a port in use) must stop them too, or their
    // loops would keep the process alive on a closed pool.
    if (roles.workers) {
      const workers: Workers = await startWorkers(workerPool === pool ? ctx : { ...ctx, pool: workerPool });
      closers.unshift(async () => workers.stop());
    }
    const readiness: Readiness = { ready: false };
    const addresses: Runtime['addresses'] = {};
    const serve = async (app: FastifyInstance, port: number, host: string) => {
      closers.unshift(async () => app.close());
      return app.listen({ port, host });
    };
    if (roles.api) {
      // Quote facts cached until a NOTIFY says they changed (decision 136); closed after the listeners stop.
      const facts = new NoticeCache(pool, { log });
      closers.unshift(async () => facts.close());
      ctx.facts = facts;
      const separateAdmin = config.adminPort !== null;
      const publicApp = await buildApp(ctx, { merchant: true, admin: !separateAdmin, readiness });
      addresses.public = await serve(publicApp, config.port, config.host);
      if (separateAdmin) {
        const adminApp = await buildApp(ctx, { merchant: false, admin: true, readiness });
        addresses.admin = await serve(adminApp, config.adminPort!, config.adminHost);
      }
    }
    readiness.ready = true;
    const urls = operatorUrls(addresses);
    log.info(
      { ...addresses, ...urls, roles, database: embedded ? 'embedded' : 'external' },
      urls.console ? `stableroute ready: console at ${urls.console}` : 'stableroute ready',
    );

    let stopping: Promise<void> | null = null;
    return {
      ctx,
      pools: { api: pool, workers: workerPool },
      addresses,
      stop: () =>
        (stopping ??= (async () => {
          readiness.ready = false;
          // In reverse order of start-up: 1. stop intake (in-flight requests finish)  2. workers finish or abandon
          // their step (resumed later)  3. adapters, queue, pool, embedded database.
          for (const close of closers) await close().catch((error: unknown) => log.error({ err: error }, 'shutdown step failed'));
          log.info('stopped');
        })()),
    };
  } catch (error) {
    for (const close of closers) await close().catch(() => undefined);
    throw error;
  }
}
