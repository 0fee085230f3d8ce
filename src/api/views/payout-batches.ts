// The answers of POST /payout_batches (per item: created, replayed or refused in the spec's error format) and
// GET /payout_batches/:id (progress and totals, the same shape as payout_batch.completed's payload).
import type { BatchAnswer, PayoutItemOutcome } from '../../core/payments/payout-batches.js';
import type { PayoutBatchRow } from '../../db/queries/payout-batches.js';
import { batchSummary, type BatchProgress } from '../../domain/payout-batch.js';
import { errorBody } from '../errors.js';
import { creationView } from './payment-intents.js';

function itemView(outcome: PayoutItemOutcome, index: number, idempotencyKey: string) {
  if (outcome.kind === 'refused') {
    const { statusCode, code, message } = outcome.error;
    return { index, idempotency_key: idempotencyKey, result: outcome.kind, error: errorBody(statusCode, code, message) };
  }
  return { index, idempotency_key: idempotencyKey, result: outcome.kind, payment_intent: creationView(outcome.result.intent, outcome.result.approval) };
}

/** The creation answer, given the items' keys in request order. */
export function batchCreationView(keys: readonly string[]): BatchAnswer {
  return (batch, items) => {
    const counts = { created: 0, replayed: 0, refused: 0 };
    for (const item of items) counts[item.kind]++;
    return {
      id: batch.id,
      idempotency_key: batch.idempotencyKey,
      created_at: batch.createdAt.toISOString(),
      counts,
      items: items.map((item, index) => itemView(item, index, keys[index]!)),
    };
  };
}

export function batchReadView(batch: PayoutBatchRow, progress: BatchProgress) {
  return batchSummary(batch, progress);
}
