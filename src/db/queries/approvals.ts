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
}

const COLUMNS = 'payment_intent_id, threshold_micros::text, status, requested_at, decided_at, decided_via, reason';
type RawRow = Omit<ApprovalRow, 'threshold_micros'> & { threshold_micros: string };
const toRow = (r: RawRow): ApprovalRow => ({ ...r, threshold_micros: BigInt(r.threshold_micros) });

export async function insertApproval(db: Queryable, intentId: string, thresholdMicros: bigint, at: Date): Promise<ApprovalRow> {
  const { rows } = await db.query<RawRow>(
    `INSERT INTO payment_approvals (payment_intent_id, threshold_micros, requested_at) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
    [intentId, thresholdMicros.toString(), at],
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

/** Records the decision on a pending approval; null when it was no longer pending. */
export async function decideApproval(
  db: Queryable,
  intentId: string,
  decision: { status: Exclude<ApprovalStatus, 'pending'>; at: Date; via: DecidedVia | null; reason: string | null },
): Promise<ApprovalRow | null> {
  const { rows } = await db.query<RawRow>(
    `UPDATE payment_approvals SET status = $2, decided_at = $3, decided_via = $4, reason = $5
      WHERE payment_intent_id = $1 AND status = 'pending' RETURNING ${COLUMNS}`,
    [intentId, decision.status, decision.at, decision.via, decision.reason],
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
}

/** Payments waiting for an operator, oldest first. */
export async function pendingApprovals(db: Queryable, limit: number): Promise<PendingApproval[]> {
  const { rows } = await db.query<Omit<PendingApproval, 'amount_micros' | 'threshold_micros'> & { amount_micros: string; threshold_micros: string }>(
    `SELECT a.payment_intent_id, i.merchant_id, i.amount_micros::text, i.selected_chain, i.destination_address,
            a.threshold_micros::text, a.requested_at
       FROM payment_approvals a JOIN payment_intents i ON i.id = a.payment_intent_id
      WHERE a.status = 'pending' AND i.status = 'route_selected'
      ORDER BY a.requested_at, a.payment_intent_id LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({ ...r, amount_micros: BigInt(r.amount_micros), threshold_micros: BigInt(r.threshold_micros) }));
}
