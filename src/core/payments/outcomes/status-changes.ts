// Every change of a payment's status the core makes goes through here: the checked writes (db/queries/transitions.ts),
// then what a payment made final finishes: its payout batch, completed exactly once with its payout_batch.completed
// event, in the same transaction, so that no path to a final status can miss it.
import type { Queryable } from '../../../db/pool.js';
import { insertEvents } from '../../../db/queries/outbox.js';
import { countBatchStatuses, lockOpenBatches, markBatchesCompleted } from '../../../db/queries/payout-batches.js';
import { updateStatuses, type StatusChange } from '../../../db/queries/transitions.js';
import { isTerminal } from '../../../domain/payment-intent.js';
import { batchProgress, batchSummary } from '../../../domain/payout-batch.js';

/**
 * Moves each intent to its `to` (checked, with its history row and its event: updateStatuses), and completes the
 * payout batches whose last payment this made final. Distinct intents only; throws unless every change applied.
 */
export async function applyStatusChanges(tx: Queryable, changes: readonly StatusChange[], at: Date): Promise<void> {
  await updateStatuses(tx, changes, at);
  const finals = changes.filter((c) => isTerminal(c.to)).map((c) => c.intent.id);
  if (finals.length > 0) await completeBatchesOf(tx, [], finals, at);
}

/**
 * Completes, exactly once, every open batch among `batchIds` and those of `paymentIntentIds` whose payments are all
 * final: completed_at set and payout_batch.completed written in the caller's transaction. Load (locked), decide, write.
 */
export async function completeBatchesOf(db: Queryable, batchIds: readonly string[], paymentIntentIds: readonly string[], at: Date): Promise<void> {
  const open = await lockOpenBatches(db, batchIds, paymentIntentIds);
  if (open.length === 0) return;
  const totals = await countBatchStatuses(
    db,
    open.map((b) => b.id),
  );
  const done = open.flatMap((batch) => {
    const progress = batchProgress(totals.get(batch.id)!);
    return progress.final ? [{ batch: { ...batch, completedAt: at }, progress }] : [];
  });
  if (done.length === 0) return;
  await markBatchesCompleted(
    db,
    done.map((d) => d.batch.id),
    at,
  );
  await insertEvents(
    db,
    done.map(({ batch, progress }) => ({
      merchantId: batch.merchantId,
      paymentIntentId: null,
      type: 'payout_batch.completed' as const,
      payload: batchSummary(batch, progress),
      at,
    })),
  );
}
