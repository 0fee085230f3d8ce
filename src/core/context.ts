import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import type { ChainAdapters } from '../chains/port.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { NoticeCache } from '../db/notice-cache.js';
import type { Pool, Queryable } from '../db/pool.js';
import type { ReadPool } from '../db/read-pool.js';
import type { Metrics } from '../metrics/registry.js';
import type { GroupCommits } from './group-commits.js';
import type { Screener } from './screening/screener.js';

/** Everything a use case needs, passed in: no module reads the environment, the wall clock or globals. */
export interface AppContext {
  config: Config;
  pool: Pool;
  clock: Clock;
  log: Logger;
  adapters: ChainAdapters;
  boss: PgBoss;
  /** This process's Prometheus registry and metrics (one per process, never a module global). */
  metrics: Metrics;
  /** The group commits where this process's HTTP requests meet (group-commits.ts), built once by the runtime. */
  groupCommits: GroupCommits;
  /** Sanctions screening of recipients (its list kept fresh in this process), built once by the runtime. */
  screener: Screener;
  /** The api's cache of quote facts (decision 136); without one, every quote reads them from the database. */
  facts?: NoticeCache;
  /** DATABASE_READ_URL's connections, for reads that decide nothing (decision 195); without one, those read the primary. */
  reads?: ReadPool;
}

/** Where a read that decides nothing (a console list, an export page, a metrics gauge) goes: the read server if any. */
export function readsOf(ctx: Pick<AppContext, 'pool' | 'reads'>): Queryable {
  return ctx.reads ?? ctx.pool;
}

/** What the payment lifecycle's use cases (execution, confirmation, operator transitions) need of the context. */
export interface LifecycleDeps {
  pool: Pool;
  boss: PgBoss;
  clock: Clock;
  adapters: ChainAdapters;
  config: Pick<Config, 'executionRetryDelaySeconds' | 'stuckAfterSeconds' | 'executionLeaseSeconds' | 'chains' | 'audit'>;
  log: Logger;
}
