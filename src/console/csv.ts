/**
 * The console's CSV exports' encoder (issue 30 item 7): RFC 4180 records (fields quoted when
 * they hold a comma, a double quote, CR or LF; quotes doubled; CRLF between records) that a
 * spreadsheet opens as text, never as a formula. A cell starting with `=`, `+`, `-`, `@`, a tab
 * or a carriage return is prefixed with a single quote, as OWASP's "CSV Injection" page advises,
 * so a userName such as `=HYPERLINK(...)` stays a string. Knows nothing of what it encodes.
 */

/** The characters a spreadsheet reads as the start of a formula (OWASP CSV Injection). */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One field: neutralised against formulas, then quoted when RFC 4180 requires it. */
export function csvCell(value: string): string {
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** One record, with its CRLF. */
export const csvRecord = (fields: readonly string[]): string => `${fields.map(csvCell).join(',')}\r\n`;
