/**
 * The audit log's pages (issue 30 item 4): one readable line per event, its actor and resource
 * linked, its details folded in a <details> element (a member change shows its counts and the
 * first few names); the filter form with real date pickers; the same rows for a user's and a
 * group's history. Every value escaped (escape-html), URLs built with encodeURIComponent.
 */
import escapeHtml from 'escape-html';
import type { AuditEntry, DetailLine, StoryPart } from './audit-story.ts';
import { AUDIT_ACTIONS } from './audit.ts';
import { timeHtml } from './format.ts';
import { dataTable } from './table.ts';

const e = (value: unknown): string => escapeHtml(value === undefined || value === null ? '' : String(value));

const query = (params: Record<string, string | undefined>): string => {
  const parts = Object.entries(params).filter((p): p is [string, string] => p[1] !== undefined && p[1] !== '');
  return parts.length === 0 ? '' : `?${parts.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`;
};

/** Story parts as HTML: text escaped, named things linked to their page when they have one. */
export const partsHtml = (parts: readonly StoryPart[]): string =>
  parts.map((p) => (typeof p === 'string' ? e(p) : p.href ? `<a href="${e(p.href)}" dir="auto">${e(p.text)}</a>` : `<span dir="auto">${e(p.text)}</span>`)).join('');

const detailsHtml = (lines: readonly DetailLine[]): string =>
  `<details><summary>Details</summary><dl class="attrs">${lines.map((l) => `<dt>${e(l.label)}</dt><dd>${partsHtml(l.parts)}</dd>`).join('')}</dl></details>`;

/** Events as rows: when (relative, exact on hover), the sentence, the folded details. */
export function historyTable(entries: readonly AuditEntry[], now: Date = new Date(), caption = 'History'): string {
  return dataTable({
    headers: ['When', 'Event', 'Details'],
    caption,
    className: 'audit',
    empty: 'No audit events.',
    rows: entries.map((a) => [timeHtml(a.at, now), `<span class="story">${partsHtml(a.story)}</span>`, detailsHtml(a.details)]),
  });
}

export type AuditFilters = Record<'actor' | 'action' | 'resource' | 'from' | 'to', string>;

/** A date picker, or a date-and-time one when the value holds a time (a link may carry one). */
function dateField(id: 'from' | 'to', label: string, value: string, invalid: boolean): string {
  const withTime = /T\d/.test(value);
  return `<div><label for="${id}">${label} <span class="hint">(UTC)</span></label><input id="${id}" name="${id}" type="${withTime ? 'datetime-local' : 'date'}" value="${e(value)}"${invalid ? ' aria-invalid="true" aria-describedby="filter-error"' : ''}></div>`;
}

export function auditBody(filters: AuditFilters, entries: readonly AuditEntry[], next: string | undefined, now: Date, error?: string, paged = false): string {
  const text = (id: 'actor' | 'resource', label: string, hint: string) =>
    `<div><label for="${id}">${label}</label><input id="${id}" name="${id}" type="text" value="${e(filters[id])}" placeholder="${e(hint)}" spellcheck="false" autocapitalize="none"></div>`;
  const actions = AUDIT_ACTIONS.map((a) => `<option value="${a}"></option>`).join('');
  const exportHref = `/console/audit.csv${query(filters)}`;
  const links = [
    paged ? `<a href="/console/audit${e(query(filters))}">Newest events</a>` : '',
    next ? `<a href="/console/audit${e(query({ ...filters, before: next }))}" rel="next">Older events</a>` : '',
  ].join('');
  return `<form method="get" action="/console/audit" class="filters" aria-label="Filter the audit log">
${text('actor', 'Actor', 'a userName, an id, or cli, console, scim')}
<div><label for="action">Action</label><input id="action" name="action" type="text" list="audit-actions" value="${e(filters.action)}" placeholder="create, members, token_issued" spellcheck="false" autocapitalize="none"><datalist id="audit-actions">${actions}</datalist></div>
${text('resource', 'Resource id', 'a user, group or token id')}
${dateField('from', 'From', filters.from, error?.startsWith('From') ?? false)}${dateField('to', 'To', filters.to, (error?.startsWith('To') ?? false) || (error?.includes('is after To') ?? false))}
<div><button type="submit" class="primary">Filter</button></div>
</form>
${error ? `<div class="alert" role="alert" id="filter-error">${e(error)}</div>` : ''}
<p class="muted">Newest first, ${entries.length === 0 ? 'none shown' : `${e(entries.length)} shown`}. <a href="${e(exportHref)}" download>Export as CSV</a> (the filters above applied).</p>
${historyTable(entries, now, 'Audit events, newest first')}
${links ? `<nav class="pager" aria-label="Pages">${links}</nav>` : ''}`;
}

/** Why an export of the users or groups could not start (a bad filter), with the way back. */
export const exportErrorBody = (kind: 'users' | 'groups', message: string): string =>
  `<div class="alert" role="alert">The export could not start: ${e(message)}</div><p><a href="/console/${kind}">Back to the ${kind}</a></p>`;

/** The link to a list's CSV export, with the list's search or filter and (users) its status. */
export const exportLink = (kind: 'users' | 'groups', form: { readonly q: string; readonly filter: string; readonly status?: string }): string =>
  `<a href="${e(`/console/${kind}.csv${query({ q: form.q, filter: form.filter, ...(form.status ? { status: form.status } : {}) })}`)}" download>Export ${kind === 'users' ? 'these users' : 'these groups'} as CSV</a>`;
