// One locked round of an operator action (decision 102): its audit record commits in the same transaction as the
// change, and a round that found the facts changed (and will start over) records nothing.
import type pg from 'pg';
import { withTransaction } from '../../../db/pool.js';
import { appendAudit, type AuditConfig, type AuditEntry } from '../audit.js';
import type { LifecycleDeps } from '../../context.js';
import { CHANGED } from '../../payments/outcomes/changed.js';

export async function auditedRound<T>(
  deps: Pick<LifecycleDeps, 'pool' | 'clock'> & { config: AuditConfig },
  audit: AuditEntry,
  fn: (tx: pg.PoolClient) => Promise<T | typeof CHANGED>,
): Promise<T | typeof CHANGED> {
  return withTransaction(deps.pool, async (tx) => {
    const result = await fn(tx);
    if (result !== CHANGED) await appendAudit(deps.config, tx, audit, 'ok', deps.clock.now());
    return result;
  });
}
