// The ledger export's pages (decision 157): every posting, oldest ledger transaction first by (created_at, id), a
// bounded window of transactions per statement (index 090), filtered after the window is read so no statement ever
// scans more than the window, however rare the rows the filter keeps. Postings are immutable: a period that has ended
// exports the same rows every time.
import type { Queryable } from '../db/pool.js';
import type { Chain } from '../domain/chain.js';
import type { PaymentStatus } from '../domain/payment-intent.js';
import type { AccountKind, LedgerTransactionType } from './movements.js';

export interface PostingExportFilter {
  /** timestamptz text, inclusive. */
  from: string | null;
  /** timestamptz text, exclusive. */
  to: string | null;
  chain: Chain | null;
  /** The merchant of the posting's payment; postings without a payment (funding) are left out. */
  merchantId: string | null;
  /** The status now of the posting's payment; postings without a payment are left out. */
  status: PaymentStatus | null;
}

/** The last ledger transaction a window read: its time (UTC ISO text, microseconds) and id. */
export interface TransactionCursor {
  createdAt: string;
  id: string;
}

export interface PostingExportRow {
  posting_id: string;
  transaction_id: string;
  /** UTC ISO text with microseconds: the ledger transaction's time. */
  created_at: string;
  type: LedgerTransactionType;
  chain: Chain;
  account: AccountKind;
  currency: string;
  /** Signed, in the currency's smallest unit. */
  amount_units: bigint;
  payment_id: string | null;
  payment_kind: string | null;
  merchant_id: string | null;
  payment_status: PaymentStatus | null;
}

export interface PostingWindow {
  rows: PostingExportRow[];
  /** Where the next window starts; null when this one read the period's last transaction. */
  next: TransactionCursor | null;
}

type RawRow = Omit<PostingExportRow, 'amount_units'> & { amount_units: string | null; window_size: number; last_at: string | null; last_id: string | null };

/** The postings of the next `windowTransactions` ledger transactions after `after`, that pass the filter. */
export async function postingExportWindow(
  db: Queryable,
  filter: PostingExportFilter,
  after: TransactionCursor | null,
  windowTransactions: number,
): Promise<PostingWindow> {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const scan: string[] = [];
  if (filter.from !== null) scan.push(`t.created_at >= ${param(filter.from)}::timestamptz`);
  if (filter.to !== null) scan.push(`t.created_at < ${param(filter.to)}::timestamptz`);
  if (after !== null) scan.push(`(t.created_at, t.id) > (${param(after.createdAt)}::timestamptz, ${param(after.id)}::bigint)`);
  const keep: string[] = [];
  if (filter.chain !== null) keep.push(`w.chain = ${param(filter.chain)}`);
  if (filter.merchantId !== null) keep.push(`i.merchant_id = ${param(filter.merchantId)}`);
  if (filter.status !== null) keep.push(`i.status = ${param(filter.status)}`);
  const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
  // The window's summary is one row whatever the filter keeps, so the cursor moves on past a window with no match.
  // Columns are qualified in every ORDER BY: a bare name there would sort an output column of that name (`id::text`).
  const { rows } = await db.query<RawRow>(
    `WITH w AS (
       SELECT t.id, t.type, t.chain, t.payment_intent_id, t.created_at FROM ledger_transactions t
        ${scan.length ? `WHERE ${scan.join(' AND ')}` : ''}
        ORDER BY t.created_at, t.id
        LIMIT ${param(windowTransactions)}
     ), summary AS (
       SELECT COUNT(*)::int AS window_size, ${iso('MAX(w.created_at)')} AS last_at,
              (SELECT l.id::text FROM w l ORDER BY l.created_at DESC, l.id DESC LIMIT 1) AS last_id
         FROM w
     ), kept AS (
       SELECT p.id AS posting_order, w.created_at AS time_order, w.id AS transaction_order,
              p.id::text AS posting_id, w.id::text AS transaction_id, ${iso('w.created_at')} AS created_at, w.type, w.chain,
              a.kind AS account, p.currency, p.amount::text AS amount_units, w.payment_intent_id AS payment_id,
              i.kind AS payment_kind, i.merchant_id, i.status AS payment_status
         FROM w
         JOIN ledger_postings p ON p.transaction_id = w.id
         JOIN ledger_accounts a ON a.id = p.account_id
         LEFT JOIN payment_intents i ON i.id = w.payment_intent_id
        ${keep.length ? `WHERE ${keep.join(' AND ')}` : ''}
     )
     SELECT s.window_size, s.last_at, s.last_id, k.posting_id, k.transaction_id, k.created_at, k.type, k.chain, k.account,
            k.currency, k.amount_units, k.payment_id, k.payment_kind, k.merchant_id, k.payment_status
       FROM summary s LEFT JOIN kept k ON true
      ORDER BY k.time_order, k.transaction_order, k.posting_order`,
    params,
  );
  const summary = rows[0]!;
  return {
    rows: rows.filter((r) => r.posting_id !== null).map(({ window_size: _size, last_at: _at, last_id: _id, ...r }) => ({ ...r, amount_units: BigInt(r.amount_units!) })),
    next: summary.window_size === windowTransactions ? { createdAt: summary.last_at!, id: summary.last_id! } : null,
  };
}
