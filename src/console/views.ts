/**
 * The console's pages as server-rendered HTML (DESIGN.md section 9). Every value that
 * came from a person or an identity provider goes through escape-html (userNames, displayNames,
 * names of tokens and clients, request bodies, audit details); URLs are built with
 * encodeURIComponent. Forms carry the CSRF token. No inline script or style: the CSP allows only
 * Rollcall's own stylesheet and script.
 */
import type { BudgetView } from '../budgets.ts';
import escapeHtml from 'escape-html';
import type { Overview } from './directory.ts';
import type { EventsHealth, SignalsHealth } from './events.ts';
import { eventsAlert, eventsTile, signalsFigure } from './events-views.ts';
import { PASSKEY_SCRIPT, passkeySignInForm } from './factors-views.ts';
import type { RequestLogEntry } from './request-log.ts';
import type { Resource } from '../scim/representation.ts';
import { dataTable } from './table.ts';
import { timeHtml } from './format.ts';
import { CONSOLE_SCRIPT, documentHead, signedOutPage } from './document.ts';

const e = (value: unknown): string => escapeHtml(value === undefined || value === null ? '' : String(value));
const q = (params: Record<string, string | undefined>): string => {
  const parts = Object.entries(params).filter((p): p is [string, string] => p[1] !== undefined && p[1] !== '');
  return parts.length === 0 ? '' : `?${parts.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`;
};

export const NAV = [
  ['overview', '/console', 'Overview'],
  ['users', '/console/users', 'Users'],
  ['groups', '/console/groups', 'Groups'],
  ['access', '/console/access', 'Roles & entitlements'],
  ['connections', '/console/connections', 'Connections'],
  ['requests', '/console/requests', 'Request log'],
  ['audit', '/console/audit', 'Audit log'],
  ['events', '/console/events', 'Events'],
  ['settings', '/console/settings', 'Settings'],
  ['admins', '/console/admins', 'Admins & apps'],
  ['connect', '/console/connect', 'Connect a provider'],
  ['security', '/console/security', 'Security'],
] as const;

export type Section = (typeof NAV)[number][0];

export interface Frame {
  readonly section: Section;
  readonly title: string;
  readonly teamName: string;
  readonly userName: string;
  readonly csrf: string;
}

export function page(frame: Frame, body: string): string {
  const nav = NAV.map(([id, href, label]) => `<li><a href="${href}"${id === frame.section ? ' aria-current="page"' : ''}>${e(label)}</a></li>`).join('');
  return `${documentHead(`${frame.title} · ${frame.teamName} · Rollcall console`, CONSOLE_SCRIPT)}
<body>
<header class="top">
<p class="brand"><span class="mark" aria-hidden="true">R</span>Rollcall · <span dir="auto">${e(frame.teamName)}</span></p>
<nav class="main" aria-label="Console"><ul>${nav}</ul></nav>
<div class="who"><span dir="auto">${e(frame.userName)}</span>
<form method="post" action="/console/sign-out" class="inline"><input type="hidden" name="_csrf" value="${e(frame.csrf)}"><button type="submit" class="link">Sign out</button></form></div>
</header>
<main id="main">
<h1>${e(frame.title)}</h1>
${body}
</main>
</body>
</html>
`;
}

export function signInPage(csrf: string, error?: string, userName?: string, teams?: readonly string[]): string {
  const teamChoice =
    teams && teams.length > 0
      ? `<p class="note">This user name signs in to several teams. Choose the team, and enter the password again.</p>
<label for="team">Team</label><select id="team" name="team" required>${teams.map((t) => `<option value="${e(t)}">${e(t)}</option>`).join('')}</select>`
      : '';
  const body = `<p class="muted">For the admins of a team. Use the same user name and password as for authorizing applications.</p>
${error ? `<div class="alert" role="alert">${e(error)}</div>` : ''}
<form method="post" action="/console/sign-in">
<input type="hidden" name="_csrf" value="${e(csrf)}">
${teamChoice}
<label for="username">User name</label>
<input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required value="${e(userName)}"${userName ? '' : ' autofocus'}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${userName ? ' autofocus' : ''}>
<p><button type="submit" class="primary">Sign in</button></p>
</form>
${passkeySignInForm(csrf)}`;
  return signedOutPage({ title: 'Sign in', heading: 'Sign in', body, extra: PASSKEY_SCRIPT });
}

export function errorBody(message: string): string {
  return `<div class="alert" role="alert">${e(message)}</div>`;
}

export function overviewBody(o: Overview, events: EventsHealth, signals?: SignalsHealth, now: Date = new Date()): string {
  const tiles = [
    [o.activeUsers, 'active users'],
    [o.deactivatedUsers, 'deactivated users'],
    [o.groups, 'groups'],
    [o.connections, 'connections'],
    eventsTile(events),
  ]
    .map(([n, l]) => `<div class="tile"><span class="n">${e(n)}</span><span class="l">${e(l)}</span></div>`)
    .join('');
  const failing = o.activity.filter((a) => a.failures > 0);
  const activity = dataTable({
    headers: ['Connection', 'Last request', 'Requests', 'Failed'],
    rows: o.activity.map((a) => [`<span class="wrap" dir="auto">${e(a.label)}</span>`, timeHtml(a.lastAt, now), e(a.total), a.failures > 0 ? `<span class="status-4">${e(a.failures)}</span>` : e(a.failures)]),
  });
  return `<section class="tiles" aria-label="Counts">${tiles}</section>
${failing.length > 0 ? `<div class="alert" role="status">${e(failing.length)} connection(s) had failing requests in the last 24 hours: see the <a href="/console/requests?status=4xx">request log</a>.</div>` : ''}${eventsAlert(events)}${failing.length === 0 && events.problems.length === 0 ? '<p class="ok" role="status">Nothing failing in the last 24 hours, and no event subscription paused or failing.</p>' : ''}
${signalsFigure(signals)}
<h2>Provisioning in the last 24 hours</h2>
${o.activity.length === 0 ? '<p class="muted">No SCIM requests in the last 24 hours.</p>' : activity}`;
}

export interface ListForm {
  readonly q: string;
  readonly filter: string;
  readonly sortBy: string;
  readonly descending: boolean;
}

export function requestsBody(filters: { status: string; connection: string }, connections: readonly [string, string][], entries: readonly RequestLogEntry[], next: string | null, error?: string, now: Date = new Date()): string {
  const statusOptions = [['', 'all'], ['2xx', '2xx'], ['4xx', '4xx'], ['5xx', '5xx']]
    .map(([v, l]) => `<option value="${e(v)}"${v === filters.status ? ' selected' : ''}>${e(l)}</option>`)
    .join('');
  const connectionOptions = [['', 'all'] as [string, string], ...connections].map(([v, l]) => `<option value="${e(v)}"${v === filters.connection ? ' selected' : ''}>${e(l)}</option>`).join('');
  const rows = entries.map((r) => [
    timeHtml(r.at, now),
    e(r.method),
    `<code class="wrap">${e(r.path)}</code>`,
    `<span class="status-${e(String(r.status)[0])}">${e(r.status)}</span>`,
    e(r.scimType),
    `${e(r.latencyMs)} ms`,
    r.connection.startsWith('connection:')
      ? `<a href="/console/connections/${encodeURIComponent(r.connection.slice('connection:'.length))}" dir="auto">${e(r.connectionLabel)}</a>`
      : `<span dir="auto">${e(r.connectionLabel)}</span>`,
    r.body ? `<details><summary>body</summary><pre tabindex="0">${e(r.body)}</pre></details>` : '',
  ]);
  return `<form method="get" action="/console/requests" class="filters">
<div><label for="status">Status</label><select id="status" name="status">${statusOptions}</select></div>
<div><label for="connection">Connection</label><select id="connection" name="connection">${connectionOptions}</select></div>
<div><button type="submit" class="primary">Filter</button></div>
</form>
${error ? errorBody(error) : ''}
<p class="muted">The last SCIM requests of this team (7 days, at most 10,000), newest first, each with the connection that made it. Passwords, secrets and tokens in bodies are redacted.</p>
${dataTable({ headers: ['Time', 'Method', 'Path', 'Status', 'scimType', 'Latency', 'Connection', 'Body'], rows, empty: 'No requests.', caption: 'SCIM requests' })}
${next ? `<nav class="pager" aria-label="Pages"><a href="/console/requests${e(q({ status: filters.status, connection: filters.connection, before: next }))}" rel="next">Older requests</a></nav>` : ''}`;
}

/** The audit log's views live in audit-views.ts (issue 30 item 4). */
export { auditBody, historyTable } from './audit-views.ts';

export function settingsBody(csrf: string, team: { name: string; deactivatedUsers: string; budgets: readonly BudgetView[] }, message?: string, error?: string): string {
  const mode = (v: string, label: string) => `<option value="${v}"${team.deactivatedUsers === v ? ' selected' : ''}>${label}</option>`;
  return `${message ? `<p class="ok" role="status">${e(message)}</p>` : ''}${error ? errorBody(error) : ''}
<h2>Team</h2>
<form method="post" action="/console/settings/team" class="card">
<input type="hidden" name="_csrf" value="${e(csrf)}">
<p>Team name: <strong dir="auto">${e(team.name)}</strong> <span class="hint">(the operator renames a team: <code>rollcall team rename</code>)</span></p>
<label for="deactivated">Deactivated users</label>
<select id="deactivated" name="deactivatedUsers">${mode('hidden', 'hidden: they vanish from every read until activated')}${mode('visible', 'visible: read with active false')}</select>
<p><button type="submit" class="primary">Save</button></p>
</form>
<h2>Your password</h2>
<form method="post" action="/console/settings/password" class="card">
<input type="hidden" name="_csrf" value="${e(csrf)}">
<label for="current">Current password</label><input id="current" name="current" type="password" autocomplete="current-password" required>
<label for="new">New password (at least 12 characters)</label><input id="new" name="password" type="password" autocomplete="new-password" required minlength="12">
<p><button type="submit" class="primary">Change password</button></p>
<p class="note">Changing it signs you out everywhere; sign in again with the new password.</p>
</form>
<h2>Limits</h2>
<p class="muted">What this team may use of the shared server. The operator changes them with <code>rollcall team update --limit NAME=VALUE</code>.</p>
${dataTable({
    headers: ['Limit', 'Value', 'Meaning'],
    rows: team.budgets.map((b) => [
      `<code>${e(b.name)}</code>`,
      `${e(b.value.toLocaleString('en'))} ${e(b.unit)}${b.overridden ? ` <span class="note">(set for this team; default ${e(b.default.toLocaleString('en'))})</span>` : ''}`,
      e(b.meaning),
    ]),
  })}`;
}
