// Payment-intent queries. Status changes go through changeStatus only, which enforces the transition table.
import type { Chain } from '../../chains/port.js';
import { transition, type PaymentStatus } from '../../domain/payment-intent.js';
import type { Queryable } from '../pool.js';

export interface PaymentIntentRow {
  id: string;
  merchant_id: string;
  quote_id: string;
  idempotency_key: string;
  amount_micros: bigint;
  status: PaymentStatus;
  selected_chain: Chain;
  destination_address: string;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS =
  'id, merchant_id, quote_id, idempotency_key, amount_micros::text, status, selected_chain, destination_address, created_at, updated_at';

type RawRow = Omit<PaymentIntentRow, 'amount_micros'> & { amount_micros: string };
const toRow = (r: RawRow): PaymentIntentRow => ({ ...r, amount_micros: BigInt(r.amount_micros) });

export async function insertIntent(db: Queryable, row: PaymentIntentRow): Promise<void> {
  await db.query(
    `INSERT INTO payment_intents (id, merchant_id, quote_id, idempotency_key, amount_micros, status, selected_chain,
       destination_address, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      row.id,
      row.merchant_id,
      row.quote_id,
      row.idempotency_key,
      row.amount_micros.toString(),
      row.status,
      row.selected_chain,
      row.destination_address,
      row.created_at,
      row.updated_at,
    ],
  );
}

export async function findIntent(db: Queryable, id: string, options: { forUpdate?: boolean } = {}): Promise<PaymentIntentRow | null> {
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_intents WHERE id = $1${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [id],
  );
  return rows[0] ? toRow(rows[0]) : null;
}

export async function findIntentByKey(db: Queryable, merchantId: string, idempotencyKey: string): Promise<PaymentIntentRow | null> {
  const { rows } = await db.query<RawRow>(`SELECT ${COLUMNS} FROM payment_intents WHERE merchant_id = $1 AND idempotency_key = $2`, [
    merchantId,
    idempotencyKey,
  ]);
  return rows[0] ? toRow(rows[0]) : null;
}

export async function recentIntents(db: Queryable, limit: number): Promise<PaymentIntentRow[]> {
  const { rows } = await db.query<RawRow>(`SELECT ${COLUMNS} FROM payment_intents ORDER BY created_at DESC, id DESC LIMIT $1`, [limit]);
  return rows.map(toRow);
}

export async function recordTransition(
  db: Queryable,
  intentId: string,
  from: PaymentStatus | null,
  to: PaymentStatus,
  at: Date,
  reason: string | null = null,
): Promise<void> {
  await db.query(
    'INSERT INTO payment_intent_transitions (payment_intent_id, from_status, to_status, reason, created_at) VALUES ($1, $2, $3, $4, $5)',
    [intentId, from, to, reason, at],
  );
}

/** Several history rows in one statement (creation records created -> quoted -> route_selected at once). */
export async function recordTransitions(
  db: Queryable,
  intentId: string,
  steps: { from: PaymentStatus | null; to: PaymentStatus; reason: string | null }[],
  at: Date,
): Promise<void> {
  await db.query(
    `INSERT INTO payment_intent_transitions (payment_intent_id, from_status, to_status, reason, created_at)
     SELECT $1, u.from_status, u.to_status, u.reason, $5
       FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS u(from_status, to_status, reason, n) ORDER BY u.n`,
    [intentId, steps.map((s) => s.from), steps.map((s) => s.to), steps.map((s) => s.reason), at],
  );
}

/** How many times the intent entered `to` (e.g. 'retrying': the execution attempts already failed). */
export async function countTransitions(db: Queryable, intentId: string, to: PaymentStatus): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'SELECT COUNT(*)::int AS n FROM payment_intent_transitions WHERE payment_intent_id = $1 AND to_status = $2',
    [intentId, to],
  );
  return rows[0]?.n ?? 0;
}

export class ConcurrentTransitionError extends Error {
  override readonly name = 'ConcurrentTransitionError';
}

/**
 * Moves an intent from its current status to `to`, checked by the transition table, and records the history row.
 * The UPDATE is conditional on the status we decided from, so a concurrent change is detected, never overwritten.
 */
export async function changeStatus(
  db: Queryable,
  intent: Pick<PaymentIntentRow, 'id' | 'status'>,
  to: PaymentStatus,
  at: Date,
  reason: string | null = null,
): Promise<PaymentStatus> {
  transition(intent.status, to);
  const result = await db.query('UPDATE payment_intents SET status = $3, updated_at = $4 WHERE id = $1 AND status = $2', [
    intent.id,
    intent.status,
    to,
    at,
  ]);
  if (result.rowCount !== 1) throw new ConcurrentTransitionError(`${intent.id} is no longer ${intent.status}`);
  await recordTransition(db, intent.id, intent.status, to, at, reason);
  return to;
}
