// Operator approvals of payment intents (payment_approvals).
import type { Chain } from '../../domain/chain.js';
import type { Queryable } from '../pool.js';

export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'cancelled';
export type DecidedVia = 'cli' | 'admin_api';

export interface ApprovalRow {
  payment_intent_id: string;
  threshold_micros: bigint;
  status: ApprovalStatus;
  requested_at: Date;
  decided_at: Date | null;
  decided_via: DecidedVia | null;
  reason: string | null;
  /** Who asked (a withdrawal's creator); null for a merchant's payment. */
  requested_by: string | null;
  /** Who gave the first of two approvals (decision 103). */
  first_approved_by: string | null;
  first_approved_at: Date | null;
  decided_by: string | null;
}

const COLUMNS =
  'payment_intent_id, threshold_micros::text, status, requested_at, decided_at, decided_via, reason, requested_by, first_approved_by, first_approved_at, decided_by';
type RawRow = Omit<ApprovalRow, 'threshold_micros'> & { threshold_micros: string };
const toRow = (r: RawRow): ApprovalRow => ({ ...r, threshold_micros: BigInt(r.threshold_micros) });

export async function insertApproval(db: Queryable, intentId: string, thresholdMicros: bigint, at: Date, requestedBy: string | null = null): Promise<ApprovalRow> {
  const { rows } = await db.query<RawRow>(
    `INSERT INTO payment_approvals (payment_intent_id, threshold_micros, requested_at, requested_by) VALUES ($1, $2, $3, $4) RETURNING ${COLUMNS}`,
    [intentId, thresholdMicros.toString(), at, requestedBy],
  );
  return toRow(rows[0]!);
}

export async function findApproval(db: Queryable, intentId: string, options: { forUpdate?: boolean } = {}): Promise<ApprovalRow | null> {
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_approvals WHERE payment_intent_id = $1${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [intentId],
  );
  return rows[0] ? toRow(rows[0]) : null;
}

/** The approvals of several intents, by intent id (those without one are absent). */
export async function approvalsOf(db: Queryable, intentIds: readonly string[]): Promise<Map<string, ApprovalRow>> {
  const { rows } = await db.query<RawRow>(`SELECT ${COLUMNS} FROM payment_approvals WHERE payment_intent_id = ANY($1::text[])`, [intentIds]);
  return new Map(rows.map((r) => [r.payment_intent_id, toRow(r)]));
}

/** Records the decision on a pending approval; null when it was no longer pending. */
export async function decideApproval(
  db: Queryable,
  intentId: string,
  decision: { status: Exclude<ApprovalStatus, 'pending'>; at: Date; via: DecidedVia | null; reason: string | null; by?: string | null },
): Promise<ApprovalRow | null> {
  const { rows } = await db.query<RawRow>(
    `UPDATE payment_approvals SET status = $2, decided_at = $3, decided_via = $4, reason = $5, decided_by = $6
      WHERE payment_intent_id = $1 AND status = 'pending' RETURNING ${COLUMNS}`,
    [intentId, decision.status, decision.at, decision.via, decision.reason, decision.by ?? null],
  );
  return rows[0] ? toRow(rows[0]) : null;
}

/** Records the first of two approvals on a pending approval that has none yet; null otherwise. */
export async function recordFirstApproval(db: Queryable, intentId: string, by: string, at: Date): Promise<ApprovalRow | null> {
  const { rows } = await db.query<RawRow>(
    `UPDATE payment_approvals SET first_approved_by = $2, first_approved_at = $3
      WHERE payment_intent_id = $1 AND status = 'pending' AND first_approved_by IS NULL RETURNING ${COLUMNS}`,
    [intentId, by, at],
  );
  return rows[0] ? toRow(rows[0]) : null;
}

export interface PendingApproval {
  payment_intent_id: string;
  merchant_id: string;
  amount_micros: bigint;
  selected_chain: Chain;
  destination_address: string;
  threshold_micros: bigint;
  requested_at: Date;
  kind: 'payout' | 'withdrawal';
  requested_by: string | null;
  first_approved_by: string | null;
}

/** Payments waiting for an operator, oldest first. */
export async function pendingApprovals(db: Queryable, limit: number): Promise<PendingApproval[]> {
  const { rows } = await db.query<Omit<PendingApproval, 'amount_micros' | 'threshold_micros'> & { amount_micros: string; threshold_micros: string }>(
    `SELECT a.payment_intent_id, i.merchant_id, i.amount_micros::text, i.selected_chain, i.destination_address,
            a.threshold_micros::text, a.requested_at, i.kind, a.requested_by, a.first_approved_by
       FROM payment_approvals a JOIN payment_intents i ON i.id = a.payment_intent_id
      WHERE a.status = 'pending' AND i.status = 'route_selected'
      ORDER BY a.requested_at, a.payment_intent_id LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({ ...r, amount_micros: BigInt(r.amount_micros), threshold_micros: BigInt(r.threshold_micros) }));
}
