// RFC 4180 CSV, as spreadsheets open it safely (decision 156): CRLF line ends, a field quoted when it holds a
// quote, a comma or a line break (quotes doubled), and a cell a spreadsheet would run as a formula neutralised.
// Pure: no I/O.

/** What a spreadsheet reads as the start of a formula (OWASP, CSV injection): `=`, `+`, `-`, `@`, tab, CR. */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A plain decimal number, as the exports write amounts: a spreadsheet reads it as a number, never as a formula. */
const PLAIN_NUMBER = /^-?\d+(?:\.\d+)?$/;
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * The cell as text a spreadsheet shows and never evaluates: one that would start a formula gets a leading `'`, which
 * spreadsheets take as "text" and do not display. A plain decimal number is left alone, so negative amounts stay
 * numbers a sum can add up.
 */
export function neutralise(cell: string): string {
  return FORMULA_START.test(cell) && !PLAIN_NUMBER.test(cell) ? `'${cell}` : cell;
}

/** One field: neutralised, then quoted when RFC 4180 requires it. */
export function csvField(cell: string | null): string {
  const text = neutralise(cell ?? '');
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One record, CRLF-terminated (RFC 4180 2.1). A null cell is an empty field. */
export function csvRecord(cells: readonly (string | null)[]): string {
  return `${cells.map(csvField).join(',')}\r\n`;
}
