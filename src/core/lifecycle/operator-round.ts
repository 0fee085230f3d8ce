// One locked round of an operator action (decision 102): its audit record commits in the same transaction as the
// change, and a round that found the facts changed (and will start over) records nothing.
import type pg from 'pg';
import { withTransaction } from '../../db/pool.js';
import { appendAudit, type AuditEntry } from '../audit.js';
import { CHANGED, type LifecycleDeps } from './deps.js';

export async function operatorRound<T>(
  deps: Pick<LifecycleDeps, 'pool' | 'clock'>,
  audit: AuditEntry,
  fn: (tx: pg.PoolClient) => Promise<T | typeof CHANGED>,
): Promise<T | typeof CHANGED> {
  return withTransaction(deps.pool, async (tx) => {
    const result = await fn(tx);
    if (result !== CHANGED) await appendAudit(tx, audit, 'ok', deps.clock.now());
    return result;
  });
}
