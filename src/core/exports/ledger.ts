// One CSV row per ledger posting: the double entry as it was booked, signed amounts in each currency's own units, so
// the rows of an account summed give its balance (`stableroute ledger verify` proves the same from the same postings).
import type { Queryable } from '../../db/pool.js';
import { decimalsOf } from '../../ledger/currencies.js';
import { postingExportWindow, type PostingExportRow, type TransactionCursor } from '../../ledger/posting-export.js';
import { formatUnits } from '../../money.js';
import { tokenOfCurrency } from '../../domain/token.js';
import type { ExportFilter } from './filter.js';
import type { CsvPage } from './stream.js';

export const LEDGER_COLUMNS = [
  'posting_id',
  'transaction_id',
  'created_at',
  'type',
  'chain',
  'account',
  'currency',
  'amount',
  'payment_id',
  'payment_kind',
  'merchant_id',
  'payment_status',
  // Last, so the columns before it keep their places (issue 40): the token a posting's currency is, empty for gas.
  'token',
] as const;

function cells(row: PostingExportRow): string[] {
  return [
    row.posting_id,
    row.transaction_id,
    row.created_at,
    row.type,
    row.chain,
    row.account,
    row.currency,
    formatUnits(row.amount_units, decimalsOf(row.chain, row.currency)),
    row.payment_id ?? '',
    row.payment_kind ?? '',
    row.merchant_id ?? '',
    row.payment_status ?? '',
    tokenOfCurrency(row.currency) ?? '',
  ];
}

/** The postings of the next window of ledger transactions after `after`, as CSV cells (possibly none). */
export async function ledgerPage(db: Queryable, filter: ExportFilter, after: TransactionCursor | null, windowTransactions: number): Promise<CsvPage<TransactionCursor>> {
  const window = await postingExportWindow(db, filter, after, windowTransactions);
  return { cells: window.rows.map(cells), next: window.next };
}
