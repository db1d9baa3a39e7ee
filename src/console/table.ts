/**
 * One way to render a console table, so every table can become stacked rows on a narrow screen
 * (DESIGN.md section 9, issue 30: no sideways scrolling at 390 px). Each cell carries its
 * column's header as `data-label`; the stylesheet (assets.ts) shows that label before the value
 * when a row is stacked. Cells are HTML the caller has already escaped; headers and the caption
 * are text and escaped here.
 */
import escapeHtml from 'escape-html';

export interface TableOptions {
  /** Column headers, as text. */
  readonly headers: readonly string[];
  /** Rows of cells, each cell HTML already escaped by the caller; a row may carry attributes of its `<tr>` (names and values escaped here). */
  readonly rows: readonly (readonly string[] | TableRow)[];
  /** What the table shows when `rows` is empty, as text (a row spanning every column). */
  readonly empty?: string;
  /** A caption read by screen readers (visually hidden unless `showCaption`). */
  readonly caption?: string;
  readonly showCaption?: boolean;
  /** Extra classes on the table (e.g. `compact`). */
  readonly className?: string;
}

/** A row whose `<tr>` carries attributes (e.g. `data-secret-id`, for a test or a script to find it). */
export interface TableRow {
  readonly cells: readonly string[];
  readonly attributes: Readonly<Record<string, string>>;
}

const rowOf = (row: readonly string[] | TableRow): TableRow => ('cells' in row ? row : { cells: row as readonly string[], attributes: {} });
const attributesHtml = (attributes: Readonly<Record<string, string>>): string =>
  Object.entries(attributes).map(([name, value]) => ` ${escapeHtml(name)}="${escapeHtml(value)}"`).join('');

export function dataTable(options: TableOptions): string {
  const { headers, rows } = options;
  const head = headers.map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join('');
  const body =
    rows.length === 0
      ? `<tr><td colspan="${headers.length}" class="muted empty">${escapeHtml(options.empty ?? 'Nothing to show.')}</td></tr>`
      : rows
          .map(rowOf)
          .map(({ cells, attributes }) => `<tr${attributesHtml(attributes)}>${cells.map((cell, i) => `<td data-label="${escapeHtml(headers[i] ?? '')}">${cell}</td>`).join('')}</tr>`)
          .join('');
  const caption = options.caption ? `<caption${options.showCaption ? '' : ' class="visually-hidden"'}>${escapeHtml(options.caption)}</caption>` : '';
  return `<div class="table-wrap"><table class="stack${options.className ? ` ${escapeHtml(options.className)}` : ''}">${caption}<thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
}
