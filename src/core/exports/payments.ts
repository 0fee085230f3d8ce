// One CSV row per payment intent (payouts and the operator's withdrawals, told apart by `kind`): what an accountant
// reconciles a month's payouts with. Amounts are exact decimal strings from bigint units, never floats.
import { listPaymentExportRows, type ExportCursor, type PaymentExportRow } from '../../db/queries/payment-export.js';
import { decimalsOf } from '../../ledger/currencies.js';
import { formatUnits, formatUsdc } from '../../money.js';
import type { Queryable } from '../../db/pool.js';
import type { ExportFilter } from './filter.js';
import type { CsvPage } from './stream.js';

export const PAYMENT_COLUMNS = [
  'payment_id',
  'kind',
  'merchant_id',
  'merchant_name',
  'chain',
  'destination_address',
  'amount_usdc',
  'status',
  'failure_reason',
  'created_at',
  'settled_at',
  'updated_at',
  'tx_id',
  'fee',
  'fee_currency',
  'quote_id',
  'idempotency_key',
  // Last, so the columns before it keep their places (issue 40): the token `amount_usdc` was paid in.
  'token',
] as const;

function cells(row: PaymentExportRow): string[] {
  return [
    row.id,
    row.kind,
    row.merchant_id,
    row.merchant_name,
    row.chain,
    row.destination_address,
    formatUsdc(row.amount_micros),
    row.status,
    row.failure_reason ?? '',
    row.created_at,
    row.settled_at ?? '',
    row.updated_at,
    row.tx_id ?? '',
    formatUnits(row.fee_units, decimalsOf(row.chain, row.fee_currency)),
    row.fee_currency,
    row.quote_id,
    row.idempotency_key,
    row.token,
  ];
}

/** One page of payments after `after`, as CSV cells; `next` null once a page comes back short. */
export async function paymentPage(db: Queryable, filter: ExportFilter, after: ExportCursor | null, pageRows: number): Promise<CsvPage<ExportCursor>> {
  const rows = await listPaymentExportRows(db, filter, after, pageRows);
  const last = rows.at(-1);
  return { cells: rows.map(cells), next: rows.length === pageRows && last ? { createdAt: last.created_at, id: last.id } : null };
}
