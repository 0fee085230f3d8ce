// The payments export's pages (decision 157): payment intents oldest first by (created_at, id), one keyset page per
// statement on the console's indexes (050: recent, status, merchant), each row with what an accountant reconciles: the
// merchant's name, the settlement time, the failure reason, the transaction that paid and the network fee booked.
import type { Chain } from '../../domain/chain.js';
import type { PaymentStatus } from '../../domain/payment-intent.js';
import type { Queryable } from '../pool.js';
import type { IntentKind } from './intents.js';

export interface PaymentExportFilter {
  /** timestamptz text, inclusive. */
  from: string | null;
  /** timestamptz text, exclusive. */
  to: string | null;
  chain: Chain | null;
  merchantId: string | null;
  status: PaymentStatus | null;
}

/** Where a page ends: the last row's creation time as PostgreSQL holds it (microseconds, UTC ISO text) and its id. */
export interface ExportCursor {
  createdAt: string;
  id: string;
}

export interface PaymentExportRow {
  id: string;
  kind: IntentKind;
  merchant_id: string;
  merchant_name: string;
  chain: Chain;
  destination_address: string;
  amount_micros: bigint;
  status: PaymentStatus;
  /** The reason recorded with the change to failed (docs/errors.md's failure reasons; `cancelled_on_chain`). */
  failure_reason: string | null;
  /** Timestamps as UTC ISO text with microseconds, as PostgreSQL holds them. */
  created_at: string;
  settled_at: string | null;
  updated_at: string;
  /** The transfer that landed, else the newest transfer signed for the payment. */
  tx_id: string | null;
  /** Native fees booked for the payment (wei, lamports): every transaction of it that paid one, cancels included. */
  fee_units: bigint;
  /** The chain's native currency, as its treasury books it. */
  fee_currency: string;
  quote_id: string;
  idempotency_key: string;
  /** The token it pays (issue 40). */
  token: string;
}

type RawRow = Omit<PaymentExportRow, 'amount_micros' | 'fee_units'> & { amount_micros: string; fee_units: string };

/** UTC ISO 8601 with microseconds: exact, and what the cursor compares. */
export const ISO_UTC_SQL = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** Up to `limit` payments after `after` (exclusive), oldest first. */
export async function listPaymentExportRows(db: Queryable, filter: PaymentExportFilter, after: ExportCursor | null, limit: number): Promise<PaymentExportRow[]> {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where: string[] = [];
  if (filter.from !== null) where.push(`i.created_at >= ${param(filter.from)}::timestamptz`);
  if (filter.to !== null) where.push(`i.created_at < ${param(filter.to)}::timestamptz`);
  if (filter.chain !== null) where.push(`i.selected_chain = ${param(filter.chain)}`);
  if (filter.merchantId !== null) where.push(`i.merchant_id = ${param(filter.merchantId)}`);
  if (filter.status !== null) where.push(`i.status = ${param(filter.status)}`);
  if (after !== null) where.push(`(i.created_at, i.id) > (${param(after.createdAt)}::timestamptz, ${param(after.id)})`);
  const { rows } = await db.query<RawRow>(
    `SELECT i.id, i.kind, i.merchant_id, m.name AS merchant_name, i.selected_chain AS chain, i.destination_address,
            i.amount_micros::text AS amount_micros, i.status, i.quote_id, i.idempotency_key, i.token,
            ${ISO_UTC_SQL('i.created_at')} AS created_at, ${ISO_UTC_SQL('i.updated_at')} AS updated_at,
            ${ISO_UTC_SQL('h.settled_at')} AS settled_at, h.failure_reason,
            (SELECT a.tx_id FROM payment_attempts a WHERE a.payment_intent_id = i.id AND a.purpose = 'transfer'
              ORDER BY a.status = 'confirmed' DESC, a.created_at DESC, a.id DESC LIMIT 1) AS tx_id,
            (SELECT COALESCE(SUM(p.amount), 0)::text FROM ledger_transactions t JOIN ledger_postings p ON p.transaction_id = t.id
              WHERE t.payment_intent_id = i.id AND t.type = 'fee' AND p.amount > 0) AS fee_units,
            COALESCE(tre.native_currency, '') AS fee_currency
       FROM payment_intents i
       JOIN merchants m ON m.id = i.merchant_id
       LEFT JOIN treasuries tre ON tre.chain = i.selected_chain
       LEFT JOIN LATERAL (
         SELECT MAX(tr.created_at) FILTER (WHERE tr.to_status = 'settled') AS settled_at,
                (ARRAY_AGG(tr.reason ORDER BY tr.id DESC) FILTER (WHERE tr.to_status = 'failed'))[1] AS failure_reason
           FROM payment_intent_transitions tr WHERE tr.payment_intent_id = i.id
       ) h ON true
      ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY i.created_at, i.id
      LIMIT ${param(limit)}`,
    params,
  );
  return rows.map((r) => ({ ...r, amount_micros: BigInt(r.amount_micros), fee_units: BigInt(r.fee_units) }));
}
