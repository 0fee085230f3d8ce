// Group commit: items that arrive while a batch is being written wait for the next batch, which takes them all (up to
// `maxBatch`) in one call of `write` (lookups use it too, as a group read). Idle, an item is its own batch and waits for nothing (no timer); under load,
// batches grow with the load. `write` answers each item of its batch; when it throws because of one of its items, the
// batch's items are written again one by one, so that only the culprit fails. When the database itself is out of
// reach (a connection, a timeout, a shutdown), no item is the culprit: the whole batch fails at once rather than
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
    try {
      const outcomes = await this.write(batch.map((p) => p.item));
      outcomes.forEach((outcome, i) => (outcome.ok ? batch[i]!.resolve(outcome.value) : batch[i]!.reject(outcome.error)));
    } catch (error) {
      if (batch.length === 1 || isOutage(error)) {
        for (const pending of batch) pending.reject(error);
        return;
      }
      this.onBatchError?.(error, batch.map((p) => p.item));
      for (const pending of batch) await this.run([pending]);
    }
  }
}

/** The database, not an item, failed: an outage as outage.ts defines it (a connection, resources, a shutdown, a timeout). */
export function isOutage(error: unknown): boolean {
  return isDatabaseUnavailable(error);
}

/** One instance per pool (per process), created on first use; tests with several pools never share one. */
export function perPool<V>(make: (pool: object) => V): (pool: object) => V {
  const instances = new WeakMap<object, V>();
  return (pool) => {
    let instance = instances.get(pool);
    if (instance === undefined) {
      instance = make(pool);
      instances.set(pool, instance);
    }
    return instance;
  };
}
