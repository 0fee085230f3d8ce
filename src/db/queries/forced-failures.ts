// Requests to force a payment to failed while its transfer may still land (forced_failures, decision 181).
import type { Queryable } from '../pool.js';

export type ForcedFailureStatus = 'pending' | 'approved' | 'rejected' | 'void';

export interface ForcedFailureRow {
  id: string;
  payment_intent_id: string;
  /** The live transfer when it was requested; null: none. */
  attempt_id: string | null;
  status: ForcedFailureStatus;
  requested_by: string;
  requested_at: Date;
  first_approved_by: string | null;
  first_approved_at: Date | null;
  decided_by: string | null;
  decided_at: Date | null;
  reason: string | null;
}

const COLUMNS =
  'id, payment_intent_id, attempt_id, status, requested_by, requested_at, first_approved_by, first_approved_at, decided_by, decided_at, reason';

export async function insertForcedFailure(db: Queryable, row: Pick<ForcedFailureRow, 'id' | 'payment_intent_id' | 'attempt_id' | 'requested_by' | 'requested_at'>): Promise<ForcedFailureRow> {
  const { rows } = await db.query<ForcedFailureRow>(
    `INSERT INTO forced_failures (id, payment_intent_id, attempt_id, requested_by, requested_at) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
    [row.id, row.payment_intent_id, row.attempt_id, row.requested_by, row.requested_at],
  );
  return rows[0]!;
}

/** The payment's pending request, or null; `forUpdate` locks it. */
export async function readPendingForcedFailure(db: Queryable, intentId: string, options: { forUpdate?: boolean } = {}): Promise<ForcedFailureRow | null> {
  const { rows } = await db.query<ForcedFailureRow>(
    `SELECT ${COLUMNS} FROM forced_failures WHERE payment_intent_id = $1 AND status = 'pending'${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [intentId],
  );
  return rows[0] ?? null;
}

/** Records the first of two approvals on a pending request that has none yet. */
export async function markForcedFailureFirstApproval(db: Queryable, id: string, by: string, at: Date): Promise<void> {
  await db.query(`UPDATE forced_failures SET first_approved_by = $2, first_approved_at = $3 WHERE id = $1 AND status = 'pending' AND first_approved_by IS NULL`, [
    id,
    by,
    at,
  ]);
}

/** Decides a pending request: approved (carried out), rejected, or void (the payment moved on before a decision). */
export async function markForcedFailureDecided(
  db: Queryable,
  id: string,
  decision: { status: Exclude<ForcedFailureStatus, 'pending'>; by: string | null; at: Date; reason: string | null },
): Promise<void> {
  await db.query(`UPDATE forced_failures SET status = $2, decided_by = $3, decided_at = $4, reason = $5 WHERE id = $1 AND status = 'pending'`, [
    id,
    decision.status,
    decision.by,
    decision.at,
    decision.reason,
  ]);
}
