// What the lifecycle use cases need, passed in (AppContext satisfies it): no module reads the environment or the
// wall clock.
import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import type { ChainAdapters } from '../../chains/port.js';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import type { Pool } from '../../db/pool.js';

export interface LifecycleDeps {
  pool: Pool;
  boss: PgBoss;
  clock: Clock;
  adapters: ChainAdapters;
  config: Pick<Config, 'executionRetryDelaySeconds' | 'stuckAfterSeconds' | 'executionLeaseSeconds'>;
  log: Logger;
}

/** Returned from a locked re-check whose facts changed since the chain was asked: start over. */
export const CHANGED = Symbol('changed');
