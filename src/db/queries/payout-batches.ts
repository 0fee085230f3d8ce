// Payout batches (migration 093): the batch row with its stored answer, the links to its payments, their totals, and
// the completion's writes (the use case that decides it is core/payments/outcomes/status-changes.ts's completeBatchesOf).
import type { BatchFacts, StatusTotal } from '../../domain/payout-batch.js';
import type { PaymentStatus } from '../../domain/payment-intent.js';
import type { Queryable } from '../pool.js';

export interface PayoutBatchRow extends BatchFacts {
  merchantId: string;
  requestHash: string;
  /** The answer given when the batch was created, replayed as it was for the same key and body. */
  response: Record<string, unknown>;
}

interface RawBatch {
  id: string;
  merchant_id: string;
  idempotency_key: string;
  request_hash: string;
  response: Record<string, unknown>;
  items_total: number;
  items_refused: number;
  created_at: Date;
  completed_at: Date | null;
}

const COLUMNS = 'id, merchant_id, idempotency_key, request_hash, response, items_total, items_refused, created_at, completed_at';

function toRow(r: RawBatch): PayoutBatchRow {
  return {
    id: r.id,
    merchantId: r.merchant_id,
    idempotencyKey: r.idempotency_key,
    requestHash: r.request_hash,
    response: r.response,
    itemsTotal: r.items_total,
    itemsRefused: r.items_refused,
    createdAt: r.created_at,
    completedAt: r.completed_at,
  };
}

export async function readPayoutBatchByKey(db: Queryable, merchantId: string, idempotencyKey: string): Promise<PayoutBatchRow | null> {
  const { rows } = await db.query<RawBatch>(`SELECT ${COLUMNS} FROM payout_batches WHERE merchant_id = $1 AND idempotency_key = $2`, [
    merchantId,
    idempotencyKey,
  ]);
  return rows[0] ? toRow(rows[0]) : null;
}

export async function readPayoutBatch(db: Queryable, id: string): Promise<PayoutBatchRow | null> {
  const { rows } = await db.query<RawBatch>(`SELECT ${COLUMNS} FROM payout_batches WHERE id = $1`, [id]);
  return rows[0] ? toRow(rows[0]) : null;
}

/** The batch and its links to its payments (each payment once), in one statement. */
export async function insertPayoutBatch(db: Queryable, batch: PayoutBatchRow, paymentIntentIds: readonly string[]): Promise<void> {
  await db.query(
    `WITH b AS (
       INSERT INTO payout_batches (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id
     )
     INSERT INTO payout_batch_items (payout_batch_id, payment_intent_id)
     SELECT b.id, p FROM b CROSS JOIN (SELECT DISTINCT unnest($10::text[]) AS p) s`,
    [
      batch.id,
      batch.merchantId,
      batch.idempotencyKey,
      batch.requestHash,
      JSON.stringify(batch.response),
      batch.itemsTotal,
      batch.itemsRefused,
      batch.createdAt,
      batch.completedAt,
      paymentIntentIds,
    ],
  );
}

/** Each batch's payments per status, with their amounts. */
export async function countBatchStatuses(db: Queryable, batchIds: readonly string[]): Promise<Map<string, StatusTotal[]>> {
  const totals = new Map<string, StatusTotal[]>(batchIds.map((id) => [id, []]));
  if (batchIds.length === 0) return totals;
  const { rows } = await db.query<{ batch_id: string; status: PaymentStatus; payments: number; amount_micros: string }>(
    `SELECT i.payout_batch_id AS batch_id, p.status, COUNT(*)::int AS payments, SUM(p.amount_micros)::text AS amount_micros
       FROM payout_batch_items i JOIN payment_intents p ON p.id = i.payment_intent_id
      WHERE i.payout_batch_id = ANY($1)
      GROUP BY 1, 2`,
    [batchIds],
  );
  for (const r of rows) totals.get(r.batch_id)!.push({ status: r.status, payments: r.payments, amountMicros: BigInt(r.amount_micros) });
  return totals;
}

/**
 * The open batches among `batchIds` and the batches of `paymentIntentIds`, locked in id order: completions of one
 * batch queue up here, and each then reads its payments with a fresh snapshot (READ COMMITTED: a later statement),
 * so the transaction that finishes a batch's last payment sees every other one final and none misses it.
 */
export async function lockOpenBatches(db: Queryable, batchIds: readonly string[], paymentIntentIds: readonly string[]): Promise<PayoutBatchRow[]> {
  const { rows } = await db.query<RawBatch>(
    `SELECT ${COLUMNS} FROM payout_batches
      WHERE completed_at IS NULL
        AND (id = ANY($1) OR id IN (SELECT payout_batch_id FROM payout_batch_items WHERE payment_intent_id = ANY($2)))
      ORDER BY id FOR UPDATE`,
    [batchIds, paymentIntentIds],
  );
  return rows.map(toRow);
}

export async function markBatchesCompleted(db: Queryable, batchIds: readonly string[], at: Date): Promise<void> {
  await db.query('UPDATE payout_batches SET completed_at = $2 WHERE id = ANY($1) AND completed_at IS NULL', [batchIds, at]);
}
