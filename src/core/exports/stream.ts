// Exports (issue 29): `GET /admin/exports/{payments,ledger}.csv` and `stableroute export`, one code path and two
// sinks. A request is checked, recorded in the audit log, and its first page read before a byte is sent, so every
// refusal is a clean error; then the pages are read one short statement at a time, each when the sink asks for more
// (decision 157): memory stays one page whatever the export's size, and no transaction stays open.
import type { Config } from '../../config.js';
import type { Queryable } from '../../db/pool.js';
import type { Actor } from '../../domain/actor.js';
import { EXPORT_LEDGER_WINDOW_TRANSACTIONS, EXPORT_PAYMENT_PAGE_ROWS } from '../../bounds.js';
import { audited } from '../operators/audit.js';
import { readsOf, type AppContext } from '../context.js';
import { csvRecord } from './csv.js';
import { filterDetails, parseExportFilter, type ExportFilter, type ExportFilterInput } from './filter.js';
import { LEDGER_COLUMNS, ledgerPage } from './ledger.js';
import { PAYMENT_COLUMNS, paymentPage } from './payments.js';

export type ExportKind = 'payments' | 'ledger';
export const EXPORT_KINDS: readonly ExportKind[] = ['payments', 'ledger'];

/** A page as CSV cells, and where the next one starts (null: this was the last). */
export interface CsvPage<Cursor> {
  cells: string[][];
  next: Cursor | null;
}

export interface CsvExport {
  kind: ExportKind;
  /** What a download saves the file as. */
  filename: string;
  /** The header and the first page (already read), then one chunk per further page, read when asked for. */
  chunks: AsyncGenerator<string, void, undefined>;
}

export interface ExportRequest {
  kind: ExportKind;
  filter: ExportFilterInput;
  actor: Actor;
}

/** Rows (payments) or transactions (ledger) per statement; tests make pages small to cross many boundaries. */
export interface ExportOptions {
  pageSize?: number;
}

type PageReader = (after: unknown) => Promise<CsvPage<unknown>>;

function reader(pool: Queryable, kind: ExportKind, filter: ExportFilter, pageSize: number | undefined): { columns: readonly string[]; read: PageReader } {
  if (kind === 'payments') {
    const size = pageSize ?? EXPORT_PAYMENT_PAGE_ROWS;
    return { columns: PAYMENT_COLUMNS, read: (after) => paymentPage(pool, filter, after as Parameters<typeof paymentPage>[2], size) };
  }
  const size = pageSize ?? EXPORT_LEDGER_WINDOW_TRANSACTIONS;
  return { columns: LEDGER_COLUMNS, read: (after) => ledgerPage(pool, filter, after as Parameters<typeof ledgerPage>[2], size) };
}

const csvText = (cells: readonly string[][]) => cells.map(csvRecord).join('');

/**
 * Checks the filter (`400 INVALID_FILTER`), appends the `export.<kind>` audit record with the filter in a transaction
 * of its own (decision 155: no record, no export), and reads the first page; the rest is read as `chunks` is consumed.
 */
export async function openExport(ctx: Pick<AppContext, 'pool' | 'reads' | 'clock'> & { config: Pick<Config, 'chainNames' | 'audit'> }, request: ExportRequest, options: ExportOptions = {}): Promise<CsvExport> {
  const filter = parseExportFilter(request.filter, ctx.config.chainNames);
  const entry = { actor: request.actor, action: `export.${request.kind}`, targets: filter.merchantId ? [filter.merchantId] : [], details: filterDetails(filter) };
  await audited(ctx, entry, ctx.clock.now(), async () => undefined);
  // The record is the primary's; the pages are read off the read server when there is one (decision 195).
  const { columns, read } = reader(readsOf(ctx), request.kind, filter, options.pageSize);
  const first = await read(null);
  async function* chunks(): AsyncGenerator<string, void, undefined> {
    yield csvRecord(columns) + csvText(first.cells);
    for (let next = first.next; next !== null; ) {
      const page = await read(next);
      if (page.cells.length > 0) yield csvText(page.cells);
      next = page.next;
    }
  }
  return { kind: request.kind, filename: `stableroute-${request.kind}.csv`, chunks: chunks() };
}
