// The one way a payment's batch step writes (execution's claim, chain verdicts, screening, signatures and sends;
// confirmation's verdicts): one transaction for the whole batch, in which the step locks its rows and reads under the
// locks what it decides from (the same statements for one item or many), then re-checks each item as its run left it,
// decides, and writes. The step's clock is read once, as its transaction begins. When the transaction fails because of
// one item (not an outage), each item runs again in a transaction of its own (withBatchTransaction), so a failure stays
// its own item's; the step is told first, for its log line.
import type { Clock } from '../../clock.js';
import type { ItemOutcome } from '../../db/group-commit.js';
import { withBatchTransaction, type Pool, type Queryable } from '../../db/pool.js';

export interface LockedStep<T, L, R> {
  /** Locks the batch's rows and reads, under the locks, what the step decides from. */
  lock(tx: Queryable, batch: readonly T[]): Promise<L>;
  /** Re-checks and decides each item from what `lock` found, writes, and answers each item, in order. */
  write(tx: Queryable, batch: readonly T[], locked: L, now: Date): Promise<R[]>;
  /** A batch failed because of one of its items: told before they run again one by one. */
  onSplit(error: unknown, batch: readonly T[]): void;
}

/** Runs `step` over `items` in one transaction; an answer per item, a failure only for the item that caused it. */
export function lockedStep<T, L, R>(deps: { pool: Pool; clock: Clock }, items: readonly T[], step: LockedStep<T, L, R>): Promise<ItemOutcome<R>[]> {
  return withBatchTransaction(
    deps.pool,
    items,
    async (tx, batch) => {
      const now = deps.clock.now();
      return step.write(tx, batch, await step.lock(tx, batch), now);
    },
    (error, batch) => step.onSplit(error, batch),
  );
}
