import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import type { ChainAdapters } from '../chains/port.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { NoticeCache } from '../db/notice-cache.js';
import type { Pool } from '../db/pool.js';
import type { Metrics } from '../metrics/registry.js';

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
  /** The api's cache of quote facts (decision 136); without one, every quote reads them from the database. */
  facts?: NoticeCache;
}
