// Effects outside the database that must follow a transaction's commit, never precede it: one made before the commit
// could record work that then rolled back (an audit anchor line naming a sequence number the next transaction reuses
// with another hash). withTransaction collects them per transaction and runs them once it has committed; a rollback
// drops them. A crash between the commit and the effect loses the effect: whoever reads its output takes it as a
// lower bound (decision 187).
import type { Queryable } from './pool.js';

type Effect = () => Promise<void>;

/** The effects of each open transaction of withTransaction, by its client. */
const pending = new WeakMap<object, Effect[]>();

/**
 * Runs `effect` once the transaction `db` is part of has committed, before withTransaction returns. Outside a
 * transaction of withTransaction (the pool, whose statements commit on their own), it runs now. An effect reports its
 * own failures: the transaction has committed, so a failure can change nothing of it.
 */
export async function afterCommit(db: Queryable, effect: Effect): Promise<void> {
  const effects = pending.get(db);
  if (effects) effects.push(effect);
  else await effect();
}

/** withTransaction's side: a transaction starts collecting its effects. */
export function collectAfterCommit(client: object): void {
  pending.set(client, []);
}

/**
 * withTransaction's side: the transaction ended. Its effects are taken now (before the client goes back to the pool)
 * and, if it committed, run in order; rolled back, they are dropped.
 */
export function endAfterCommit(client: object, committed: boolean): Promise<void> {
  const effects = pending.get(client) ?? [];
  pending.delete(client);
  if (!committed || effects.length === 0) return Promise.resolve();
  return (async () => {
    for (const effect of effects) await effect().catch(() => undefined);
  })();
}
