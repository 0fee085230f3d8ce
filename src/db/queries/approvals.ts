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
  /** The payout batch held whole with it (decision 178): decided only with the batch. */
  payout_batch_id: string | null;
}

const COLUMNS =
  'payment_intent_id, threshold_micros::text, status, requested_at, decided_at, decided_via, reason, requested_by, first_approved_by, first_approved_at, decided_by, payout_batch_id';
type RawRow = Omit<ApprovalRow, 'threshold_micros'> & { threshold_micros: string };
const toRow = (r: RawRow): ApprovalRow => ({ ...r, threshold_micros: BigInt(r.threshold_micros) });

export interface NewApproval {
  intentId: string;
  thresholdMicros: bigint;
  /** Who asked (a withdrawal's requester); null for a merchant's payment. */
  requestedBy: string | null;
  payoutBatchId: string | null;
}

/** The approvals payments wait for, all requested at `at`, in one statement; answered by intent id. */
export async function insertApprovals(db: Queryable, approvals: readonly NewApproval[], at: Date): Promise<Map<string, ApprovalRow>> {
  if (approvals.length === 0) return new Map();
  const { rows } = await db.query<RawRow>(
    `INSERT INTO payment_approvals (payment_intent_id, threshold_micros, requested_at, requested_by, payout_batch_id)
     SELECT i, t, $3, r, b FROM unnest($1::text[], $2::bigint[], $4::text[], $5::text[]) AS a(i, t, r, b)
     RETURNING ${COLUMNS}`,
    [
      approvals.map((a) => a.intentId),
      approvals.map((a) => a.thresholdMicros.toString()),
      at,
      approvals.map((a) => a.requestedBy),
      approvals.map((a) => a.payoutBatchId),
    ],
  );
  return new Map(rows.map((r) => [r.payment_intent_id, toRow(r)]));
}

export async function readApproval(db: Queryable, intentId: string, options: { forUpdate?: boolean } = {}): Promise<ApprovalRow | null> {
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_approvals WHERE payment_intent_id = $1${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [intentId],
  );
  return rows[0] ? toRow(rows[0]) : null;
}

/** The approvals of several intents, by intent id (those without one are absent). */
export async function readApprovals(db: Queryable, intentIds: readonly string[]): Promise<Map<string, ApprovalRow>> {
  const { rows } = await db.query<RawRow>(`SELECT ${COLUMNS} FROM payment_approvals WHERE payment_intent_id = ANY($1::text[])`, [intentIds]);
  return new Map(rows.map((r) => [r.payment_intent_id, toRow(r)]));
}

/** Records the decision on the pending approvals of `intentIds`; answers those that were still pending. */
export async function markApprovalsDecided(
  db: Queryable,
  intentIds: readonly string[],
  decision: { status: Exclude<ApprovalStatus, 'pending'>; at: Date; via: DecidedVia | null; reason: string | null; by?: string | null },
): Promise<ApprovalRow[]> {
  const { rows } = await db.query<RawRow>(
    `UPDATE payment_approvals SET status = $2, decided_at = $3, decided_via = $4, reason = $5, decided_by = $6
      WHERE payment_intent_id = ANY($1::text[]) AND status = 'pending' RETURNING ${COLUMNS}`,
    [intentIds, decision.status, decision.at, decision.via, decision.reason, decision.by ?? null],
  );
  return rows.map(toRow);
}

/** Records the first of two approvals on the pending approvals of `intentIds` that have none yet; answers those. */
export async function markFirstApprovals(db: Queryable, intentIds: readonly string[], by: string, at: Date): Promise<ApprovalRow[]> {
  const { rows } = await db.query<RawRow>(
    `UPDATE payment_approvals SET first_approved_by = $2, first_approved_at = $3
      WHERE payment_intent_id = ANY($1::text[]) AND status = 'pending' AND first_approved_by IS NULL RETURNING ${COLUMNS}`,
    [intentIds, by, at],
  );
  return rows.map(toRow);
}

/** The pending approvals of a payout batch held whole (decision 178), in intent id order; `forUpdate` locks them. */
export async function listPendingApprovalsOfBatch(db: Queryable, payoutBatchId: string, options: { forUpdate?: boolean } = {}): Promise<ApprovalRow[]> {
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM payment_approvals WHERE payout_batch_id = $1 AND status = 'pending'
      ORDER BY payment_intent_id${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [payoutBatchId],
  );
  return rows.map(toRow);
}

export interface PendingApproval {
  /** A payout batch's entry: its first payment. */
  payment_intent_id: string;
  merchant_id: string;
  /** A payout batch's entry: the sum of its waiting payments. */
  amount_micros: bigint;
  selected_chain: Chain;
  destination_address: string;
  threshold_micros: bigint;
  requested_at: Date;
  kind: 'payout' | 'withdrawal';
  requested_by: string | null;
  first_approved_by: string | null;
  /** A payout batch held whole (decision 178) is one entry; null for a payment held alone. */
  payout_batch_id: string | null;
  /** The payments the entry decides: 1, or a held batch's waiting payments. */
  payments: number;
  /**
   * What an approval does: `send` a held payment (or batch), or `force_fail` a payment in manual review whose transfer
   * may still land (decision 181; its threshold is 0: any amount).
   */
  requested_action: 'send' | 'force_fail';
}

/**
 * What waits for an operator, oldest first: each payment held alone, each payout batch held whole as one entry, and
 * each forced failure requested of a payment still in manual review.
 */
export async function listPendingApprovalRows(db: Queryable, limit: number): Promise<PendingApproval[]> {
  type Raw = Omit<PendingApproval, 'amount_micros' | 'threshold_micros'> & { amount_micros: string; threshold_micros: string };
  const { rows } = await db.query<Raw>(
    `WITH waiting AS (
       SELECT a.payment_intent_id, i.merchant_id, i.amount_micros, i.selected_chain, i.destination_address, a.threshold_micros,
              a.requested_at, i.kind, a.requested_by, a.first_approved_by, a.payout_batch_id
         FROM payment_approvals a JOIN payment_intents i ON i.id = a.payment_intent_id
        WHERE a.status = 'pending' AND i.status = 'route_selected'
     )
     SELECT payment_intent_id, merchant_id, amount_micros::text, selected_chain, destination_address, threshold_micros::text,
            requested_at, kind, requested_by, first_approved_by, NULL::text AS payout_batch_id, 1 AS payments, 'send' AS requested_action
       FROM waiting WHERE payout_batch_id IS NULL
     UNION ALL
     SELECT min(payment_intent_id), min(merchant_id), sum(amount_micros)::text, (array_agg(selected_chain ORDER BY payment_intent_id))[1],
            (array_agg(destination_address ORDER BY payment_intent_id))[1], max(threshold_micros)::text, min(requested_at), min(kind),
            NULL, max(first_approved_by), payout_batch_id, count(*)::int, 'send'
       FROM waiting WHERE payout_batch_id IS NOT NULL GROUP BY payout_batch_id
     UNION ALL
     SELECT f.payment_intent_id, i.merchant_id, i.amount_micros::text, i.selected_chain, i.destination_address, '0', f.requested_at,
            i.kind, f.requested_by, f.first_approved_by, NULL, 1, 'force_fail'
       FROM forced_failures f JOIN payment_intents i ON i.id = f.payment_intent_id
      WHERE f.status = 'pending' AND i.status = 'manual_review'
     ORDER BY requested_at, payment_intent_id LIMIT $1`,
    [limit],
  );
  return rows.map((r) => ({ ...r, amount_micros: BigInt(r.amount_micros), threshold_micros: BigInt(r.threshold_micros) }));
}
