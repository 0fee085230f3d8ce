// Payment intents as operators browse them: keyset pages newest first, filters, a search by id, tx id or address,
// counts by status, and one intent's status history. Every page is an index scan whatever the table's size
// (migration 050; bench/console.ts shows the plans on 100k intents).
import type { Chain } from '../../domain/chain.js';
import type { PaymentStatus } from '../../domain/payment-intent.js';
import type { AttemptPurpose } from '../../domain/transfer-verdict.js';
import type { Queryable } from '../pool.js';
import type { PaymentIntentRow } from './intents.js';

export interface IntentFilter {
  status?: PaymentStatus;
  chain?: Chain;
  merchantId?: string;
  /** Created at or after. */
  createdFrom?: Date;
  /** Created before. */
  createdBefore?: Date;
  /** An intent id, a transaction id of one of its attempts, or its destination address (exact; hex case-insensitive). */
  search?: string;
}

/**
 * Where a page ends: the last row's creation time as PostgreSQL holds it (microseconds, as ISO text, so nothing is
 * lost to a JavaScript Date) and its id, which breaks ties.
 */
export interface IntentCursor {
  createdAt: string;
  id: string;
}

export type IntentListRow = PaymentIntentRow & {
  last_tx_id: string | null;
  /** What the signed or broadcast attempt that may still land is for, if any (what the operator's actions depend on). */
  live_purpose: AttemptPurpose | null;
  cursor: IntentCursor;
};

type RawRow = Omit<PaymentIntentRow, 'amount_micros'> & { amount_micros: string; last_tx_id: string | null; live_purpose: AttemptPurpose | null; created_at_text: string };

/** One page, newest first, after `after` (exclusive). */
export async function listIntents(db: Queryable, filter: IntentFilter, after: IntentCursor | null, limit: number): Promise<IntentListRow[]> {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where: string[] = [];
  if (filter.status) where.push(`i.status = ${param(filter.status)}`);
  if (filter.chain) where.push(`i.selected_chain = ${param(filter.chain)}`);
  if (filter.merchantId) where.push(`i.merchant_id = ${param(filter.merchantId)}`);
  if (filter.createdFrom) where.push(`i.created_at >= ${param(filter.createdFrom)}`);
  if (filter.createdBefore) where.push(`i.created_at < ${param(filter.createdBefore)}`);
  if (after) where.push(`(i.created_at, i.id) < (${param(after.createdAt)}::timestamptz, ${param(after.id)})`);
  if (filter.search) {
    // Three index lookups (primary key, lower(destination_address), tx_id), not one OR the planner would have to
    // check row by row along the whole table.
    const q = param(filter.search);
    where.push(`i.id IN (
      SELECT id FROM payment_intents WHERE id = ${q}
      UNION SELECT id FROM payment_intents WHERE lower(destination_address) = lower(${q})
                                             AND (destination_address = ${q} OR destination_address LIKE '0x%')
      UNION SELECT payment_intent_id FROM payment_attempts WHERE tx_id = ANY (ARRAY[${q}, lower(${q})]))`);
  }
  const { rows } = await db.query<RawRow>(
    `SELECT i.id, i.merchant_id, i.quote_id, i.idempotency_key, i.amount_micros::text, i.status, i.selected_chain,
            i.destination_address, i.created_at, i.updated_at,
            to_char(i.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_at_text,
            (SELECT a.tx_id FROM payment_attempts a WHERE a.payment_intent_id = i.id
              ORDER BY a.created_at DESC, a.id DESC LIMIT 1) AS last_tx_id,
            (SELECT a.purpose FROM payment_attempts a WHERE a.payment_intent_id = i.id AND a.status IN ('signed', 'broadcasted')
              ORDER BY a.created_at DESC, a.id DESC LIMIT 1) AS live_purpose
       FROM payment_intents i
      ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY i.created_at DESC, i.id DESC
      LIMIT ${param(limit)}`,
    params,
  );
  return rows.map(({ created_at_text, ...r }) => ({
    ...r,
    amount_micros: BigInt(r.amount_micros),
    cursor: { createdAt: created_at_text, id: r.id },
  }));
}

/** How many intents are in each status (statuses without any are absent). An index-only scan. */
export async function countByStatus(db: Queryable): Promise<Map<PaymentStatus, number>> {
  const { rows } = await db.query<{ status: PaymentStatus; n: string }>(
    'SELECT status, COUNT(*)::text AS n FROM payment_intents GROUP BY status',
  );
  return new Map(rows.map((r) => [r.status, Number(r.n)]));
}

export interface TransitionRow {
  from_status: PaymentStatus | null;
  to_status: PaymentStatus;
  reason: string | null;
  created_at: Date;
}

/** The intent's status history, oldest first. */
export async function listTransitions(db: Queryable, intentId: string): Promise<TransitionRow[]> {
  const { rows } = await db.query<TransitionRow>(
    `SELECT from_status, to_status, reason, created_at FROM payment_intent_transitions
      WHERE payment_intent_id = $1 ORDER BY id`,
    [intentId],
  );
  return rows;
}
