// Whether the database the service writes to keeps every acknowledged commit through a failover (issue 36): only with
// a synchronous standby. In production a process says so at start-up (a warning) and the workers keep the operator
// alert `database_not_synchronous` (chain null) raised while it lasts, resolved once the database is synchronous. The
// check at signing (decision 199) keeps an unsafe failover from paying twice; this tells the operator it can happen.
import type { Logger } from 'pino';
import type { Clock } from '../../../clock.js';
import type { Config } from '../../../config.js';
import { withTransaction, type Pool } from '../../../db/pool.js';
import { readReplicationFacts } from '../../../db/queries/books.js';
import { notSynchronousReason } from '../../../domain/books-check.js';
import { raiseAlert, resolveAlert } from '../../operators/alerts.js';

export interface ReplicationDeps {
  pool: Pool;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'operatorWebhookUrl'>;
}

/** Raises or resolves `database_not_synchronous`; returns why the database is not synchronous, or null. */
export async function checkReplication(deps: ReplicationDeps): Promise<string | null> {
  const reason = notSynchronousReason(await readReplicationFacts(deps.pool));
  await withTransaction(deps.pool, async (tx) => {
    const now = deps.clock.now();
    if (reason === null) await resolveAlert(tx, deps, 'database_not_synchronous', null, now);
    else await raiseAlert(tx, deps, { kind: 'database_not_synchronous', chain: null, message: `the database has no synchronous standby: ${reason}` }, now);
  });
  return reason;
}
