// Group commit: items that arrive while a batch is being written wait for the next batch, which takes them all (up to
// `maxBatch`) in one call of `write` (lookups use it too, as a group read). Idle, an item is its own batch and waits for
// nothing (no timer); under load, batches grow with the load. Kept where independent HTTP requests meet
// (src/core/group-commits.ts, src/db/notify.ts); a worker's step takes its batch whole (withBatchTransaction). Either
// way a batch is written by writeBatch: `write` answers each item of its batch; when it throws because of one of its
// items, the batch's items are written again one by one, so that only the culprit fails. When the database itself is
// out of reach (a connection, a timeout, a shutdown), no item is the culprit: the whole batch fails at once rather than
// waiting out the same outage once per item.
import { isDatabaseUnavailable } from './outage.js';

export type ItemOutcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

interface Pending<T, R> {
  item: T;
  resolve(value: R): void;
  reject(error: unknown): void;
}

export class GroupCommit<T, R> {
  private readonly queue: Pending<T, R>[] = [];
  private flushing = false;

  constructor(
    private readonly write: (items: T[]) => Promise<ItemOutcome<R>[]>,
    private readonly maxBatch: number,
    /** Told of a batch that failed as a whole, before its items are written again one by one. */
    private readonly onBatchError?: (error: unknown, items: readonly T[]) => void,
  ) {}

  submit(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) await this.run(this.queue.splice(0, this.maxBatch));
    } finally {
      this.flushing = false;
    }
  }

  private async run(batch: Pending<T, R>[]): Promise<void> {
    const outcomes = await writeBatch(batch.map((p) => p.item), this.write, this.onBatchError);
    outcomes.forEach((outcome, i) => (outcome.ok ? batch[i]!.resolve(outcome.value) : batch[i]!.reject(outcome.error)));
  }
}

/**
 * Writes `items` in one call of `write`, which answers each. When the call throws because of one of its items, they are
 * written again one by one, so that only the culprit fails (its error is its answer); when the database is out of
 * reach, no item is the culprit and every one fails at once.
 */
export async function writeBatch<T, R>(
  items: readonly T[],
  write: (items: T[]) => Promise<ItemOutcome<R>[]>,
  onBatchError?: (error: unknown, items: readonly T[]) => void,
): Promise<ItemOutcome<R>[]> {
  try {
    return await write([...items]);
  } catch (error) {
    if (items.length === 1 || isOutage(error)) return items.map(() => ({ ok: false, error }));
    onBatchError?.(error, items);
    const outcomes: ItemOutcome<R>[] = [];
    for (const item of items) outcomes.push(...(await writeBatch([item], write)));
    return outcomes;
  }
}

/** The database, not an item, failed: an outage as outage.ts defines it (a connection, resources, a shutdown, a timeout). */
export function isOutage(error: unknown): boolean {
  return isDatabaseUnavailable(error);
}
