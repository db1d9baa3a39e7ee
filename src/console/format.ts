/**
 * How the console writes times and numbers for a person (issue 30): a count with thousands
 * separators ("2,002"), a position on a list ("51-100 of 2,002"), and a timestamp as a
 * `<time>` element whose text is relative ("3 hours ago"), whose title is the exact UTC time,
 * and whose `datetime` the console script (assets.ts) turns into the reader's local time.
 */
import escapeHtml from 'escape-html';

const NUMBER = new Intl.NumberFormat('en-US');

/** 2002 -> "2,002". */
export const formatCount = (n: number): string => NUMBER.format(n);

/** "51-100 of 2,002" (or "No results"); `total` undefined when it is not known. */
export function positionText(first: number, shown: number, total: number | undefined): string {
  if (shown === 0) return total === 0 || total === undefined ? 'No results' : `None of ${formatCount(total)}`;
  const range = `${formatCount(first)}-${formatCount(first + shown - 1)}`;
  return total === undefined ? range : `${range} of ${formatCount(total)}`;
}

const UNITS: readonly [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 86_400],
  ['month', 30 * 86_400],
  ['week', 7 * 86_400],
  ['day', 86_400],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];
const RELATIVE = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

/** "3 hours ago", "in 2 days", "now": `iso` relative to `now`. */
export function relativeTime(iso: string, now: Date): string {
  const seconds = Math.round((Date.parse(iso) - now.getTime()) / 1000);
  if (!Number.isFinite(seconds)) return iso;
  if (Math.abs(seconds) < 45) return 'just now';
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size) return RELATIVE.format(Math.round(seconds / size), unit);
  }
  return 'just now';
}

/** The exact time as a person reads it, in UTC: "2026-11-27 12:04:05 UTC". */
export const exactTime = (iso: string): string => {
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? iso : `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
};

/** A timestamp for a page: relative text, the exact time on hover, localised by the console script. */
export function timeHtml(iso: string | null | undefined, now: Date): string {
  if (!iso) return '<span class="muted">never</span>';
  return `<time datetime="${escapeHtml(iso)}" title="${escapeHtml(exactTime(iso))}">${escapeHtml(relativeTime(iso, now))}</time>`;
}
