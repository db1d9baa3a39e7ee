/**
 * Table output for the benchmarks: Markdown pipe tables (readable in a terminal, pasted as-is
 * into docs/PERFORMANCE.md), numbers right-aligned, and the formatting of rates, latencies and
 * sizes they share. Formatting only: no measuring and no judging here.
 */

export type Align = 'left' | 'right';

export interface Column {
  readonly title: string;
  readonly align: Align;
}

/** A Markdown table with padded columns. */
export function renderTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((c, i) => Math.max(c.title.length, 3, ...rows.map((r) => (r[i] ?? '').length)));
  const cell = (text: string, i: number) => (columns[i]!.align === 'right' ? text.padStart(widths[i]!) : text.padEnd(widths[i]!));
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => cell(c, i)).join(' | ')} |`;
  const rule = `|${columns.map((c, i) => (c.align === 'right' ? `${'-'.repeat(widths[i]! + 1)}:` : `:${'-'.repeat(widths[i]! + 1)}`)).join('|')}|`;
  return [line(columns.map((c) => c.title)), rule, ...rows.map(line)].join('\n');
}

export const rate = (perSecond: number): string => (Number.isFinite(perSecond) ? Math.round(perSecond).toLocaleString('en-US') : '-');

/** Milliseconds with a precision that suits their size. */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return '-';
  if (value < 10) return value.toFixed(2);
  if (value < 100) return value.toFixed(1);
  return Math.round(value).toLocaleString('en-US');
}

export const ratio = (value: number): string => (Number.isFinite(value) ? value.toFixed(2) : '-');

export const mebibytes = (bytes: number | undefined): string => (bytes === undefined ? 'unknown' : `${(bytes / (1024 * 1024)).toFixed(0)} MB`);

export const count = (n: number): string => n.toLocaleString('en-US');
