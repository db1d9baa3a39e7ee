/**
 * The console's pages as server-rendered HTML (DESIGN.md section 9). Every value that
 * came from a person or an identity provider goes through escape-html (userNames, displayNames,
 * names of tokens and clients, request bodies, audit details); URLs are built with
 * encodeURIComponent. Forms carry the CSRF token. No inline script or style: the CSP allows only
 * Rollcall's own stylesheet and script.
 */
import type { BudgetView } from '../budgets.ts';
import escapeHtml from 'escape-html';
import type { UserAccess } from './access.ts';
import { accessSection } from './access-views.ts';
import type { AuditEntry, ListPage, MemberEntry, Overview } from './directory.ts';
import type { EventsHealth, SignalsHealth } from './events.ts';
import { eventsAlert, eventsTile, signalsFigure } from './events-views.ts';
import { timeHtml } from './format.ts';
import { dataTable } from './table.ts';
import type { RequestLogEntry } from './request-log.ts';
import type { ProvisioningTokenView } from '../oauth/provisioning.ts';
import type { Resource } from '../scim/representation.ts';

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
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${e(frame.title)} · ${e(frame.teamName)} · Rollcall console</title>
<link rel="stylesheet" href="/console/assets/console.css">
<link rel="icon" href="/console/assets/favicon.svg" type="image/svg+xml">
<script src="/console/assets/console.js" defer></script>
</head>
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
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Sign in · Rollcall console</title>
<link rel="stylesheet" href="/console/assets/console.css">
<link rel="icon" href="/console/assets/favicon.svg" type="image/svg+xml">
</head>
<body>
<main class="card signin" aria-labelledby="title">
<p class="brand"><span class="mark" aria-hidden="true">R</span>Rollcall console</p>
<h1 id="title">Sign in</h1>
<p class="muted">For the admins of a team. Use the same user name and password as for authorizing applications.</p>
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
</main>
</body>
</html>
`;
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

const SORTS: Record<'users' | 'groups', readonly [string, string][]> = {
  users: [['created', 'created (fastest)'], ['userName', 'userName'], ['name.familyName', 'family name'], ['meta.lastModified', 'last modified']],
  groups: [['created', 'created (fastest)'], ['displayName', 'displayName'], ['meta.lastModified', 'last modified']],
};

/** How a word search's page is ordered, in words (the order the domain chose: directory.ts orderOf). */
function orderNote(kind: 'users' | 'groups', form: ListForm, result: ListPage): string {
  if (form.q.trim() === '' || form.filter.trim() !== '') return '';
  const label = SORTS[kind].find(([v]) => v === result.orderedBy)?.[1].replace(' (fastest)', '') ?? result.orderedBy;
  const by = result.orderedBy === 'created' ? 'creation' : label;
  return ` Ordered by ${e(by)}${result.orderedBy !== 'created' && form.descending ? ', descending' : ''}.`;
}

export interface ListForm {
  readonly q: string;
  readonly filter: string;
  readonly sortBy: string;
  readonly descending: boolean;
}

function searchForm(kind: 'users' | 'groups', form: ListForm, orderedBy: string): string {
  const options = SORTS[kind].map(([v, l]) => `<option value="${e(v)}"${v === orderedBy ? ' selected' : ''}>${e(l)}</option>`).join('');
  return `<form method="get" action="/console/${kind}" class="filters" role="search">
<div><label for="q">Search</label><input id="q" name="q" type="search" value="${e(form.q)}" placeholder="${kind === 'users' ? 'start of userName or name, or externalId' : 'start of displayName, or externalId'}" aria-describedby="q-hint"><small id="q-hint">${kind === 'users' ? 'Finds users whose userName, given name or family name starts with the words (any case), or whose externalId is exactly them. Emails and other attributes: use a SCIM filter.' : 'Finds groups whose displayName starts with the words (any case), or whose externalId is exactly them.'}</small></div>
<div><label for="filter">SCIM filter</label><input id="filter" name="filter" type="text" value="${e(form.filter)}" placeholder='${kind === 'users' ? 'userName sw "a" and active eq true' : 'displayName eq "Admins"'}' spellcheck="false"></div>
<div><label for="sortBy">Sort by</label><select id="sortBy" name="sortBy">${options}</select></div>
<div><label for="order">Order</label><select id="order" name="order"><option value="asc"${form.descending ? '' : ' selected'}>ascending</option><option value="desc"${form.descending ? ' selected' : ''}>descending</option></select></div>
<div><button type="submit" class="primary">Search</button></div>
</form>`;
}

function pager(base: string, form: ListForm, result: ListPage): string {
  const params = { q: form.q, filter: form.filter, sortBy: form.sortBy, order: form.descending ? 'desc' : undefined };
  const links = [
    result.previous !== undefined ? `<a href="${e(`${base}${q({ ...params, cursor: result.previous })}`)}" rel="prev">Previous page</a>` : '',
    result.next !== undefined ? `<a href="${e(`${base}${q({ ...params, cursor: result.next })}`)}" rel="next">Next page</a>` : '',
  ].join('');
  return links ? `<nav class="pager" aria-label="Pages">${links}</nav>` : '';
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export function usersBody(form: ListForm, result: ListPage, error?: string): string {
  const rows = result.resources
    .map((r) => {
      const name = (r.name ?? {}) as Record<string, unknown>;
      const emails = Array.isArray(r.emails) ? (r.emails as Record<string, unknown>[]).map((m) => str(m.value)).join(', ') : '';
      return `<tr><td class="wrap"><a href="/console/users/${encodeURIComponent(str(r.id))}" dir="auto">${e(r.userName)}</a></td><td class="wrap" dir="auto">${e(name.formatted ?? [name.givenName, name.familyName].filter(Boolean).join(' '))}</td><td class="wrap">${e(emails)}</td><td>${r.active === false ? 'deactivated' : 'active'}</td><td class="wrap">${e(r.externalId)}</td></tr>`;
    })
    .join('');
  return `${searchForm('users', form, result.orderedBy)}
${error ? errorBody(error) : ''}
<p class="muted">${result.total !== undefined ? `${e(result.total)} users match.` : ''}${orderNote('users', form, result)}</p>
<div class="table-wrap" tabindex="0"><table><thead><tr><th scope="col">userName</th><th scope="col">Name</th><th scope="col">Emails</th><th scope="col">Status</th><th scope="col">externalId</th></tr></thead>
<tbody>${rows || '<tr><td colspan="5" class="muted">No users.</td></tr>'}</tbody></table></div>
${pager('/console/users', form, result)}`;
}

export function groupsBody(form: ListForm, result: ListPage, error?: string): string {
  const rows = result.resources
    .map((r) => `<tr><td class="wrap"><a href="/console/groups/${encodeURIComponent(str(r.id))}" dir="auto">${e(r.displayName)}</a></td><td class="wrap">${e(r.externalId)}</td><td>${e((r.meta as Record<string, unknown> | undefined)?.lastModified)}</td></tr>`)
    .join('');
  return `${searchForm('groups', form, result.orderedBy)}
${error ? errorBody(error) : ''}
<p class="muted">${result.total !== undefined ? `${e(result.total)} groups match.` : ''}${orderNote('groups', form, result)}</p>
<div class="table-wrap" tabindex="0"><table><thead><tr><th scope="col">displayName</th><th scope="col">externalId</th><th scope="col">Last modified</th></tr></thead>
<tbody>${rows || '<tr><td colspan="3" class="muted">No groups.</td></tr>'}</tbody></table></div>
${pager('/console/groups', form, result)}`;
}

function attributes(resource: Resource): string {
  const rows = Object.entries(resource)
    .filter(([k]) => k !== 'schemas' && k !== 'groups' && k !== 'members')
    .map(([k, v]) => `<dt>${e(k)}</dt><dd dir="auto">${typeof v === 'object' ? `<pre tabindex="0">${e(JSON.stringify(v, null, 2))}</pre>` : e(v)}</dd>`)
    .join('');
  return `<div class="card"><dl class="attrs">${rows}</dl></div>`;
}

export function historyTable(entries: readonly AuditEntry[]): string {
  if (entries.length === 0) return '<p class="muted">No audit events.</p>';
  const rows = entries
    .map((a) => `<tr><td>${e(a.at)}</td><td>${e(a.action)}</td><td class="wrap">${e(a.resourceType)} ${e(a.resourceId)}</td><td class="wrap">${e(a.actor)}</td><td class="wrap"><code>${e(a.detail)}</code></td></tr>`)
    .join('');
  return `<div class="table-wrap" tabindex="0"><table><thead><tr><th scope="col">Time</th><th scope="col">Action</th><th scope="col">Resource</th><th scope="col">Actor</th><th scope="col">Detail</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

export function userBody(resource: Resource, history: readonly AuditEntry[], access?: UserAccess): string {
  const groups = Array.isArray(resource.groups) ? (resource.groups as Record<string, unknown>[]) : [];
  const groupList = groups.length === 0 ? '<p class="muted">In no group.</p>' : `<ul>${groups.map((g) => `<li><a href="/console/groups/${encodeURIComponent(str(g.value))}" dir="auto">${e(g.display ?? g.value)}</a></li>`).join('')}</ul>`;
  return `<p><a href="/console/users">All users</a></p>
<h2>Attributes</h2>${attributes(resource)}
<h2>Groups</h2>${groupList}
${access ? accessSection(access) : ''}
<h2>History</h2>${historyTable(history)}`;
}

export function groupBody(resource: Resource, members: readonly MemberEntry[], next: string | undefined, history: readonly AuditEntry[]): string {
  const rows = members.map((m) => `<tr><td class="wrap"><a href="/console/users/${encodeURIComponent(m.id)}" dir="auto">${e(m.userName)}</a></td><td>${e(m.joined)}</td></tr>`).join('');
  return `<p><a href="/console/groups">All groups</a> · <a href="/console/access/mappings${e(q({ group: str(resource.id) }))}">Roles and entitlements mapped from this group</a></p>
<h2>Attributes</h2>${attributes(resource)}
<h2>Members</h2>
<div class="table-wrap" tabindex="0"><table><thead><tr><th scope="col">userName</th><th scope="col">Joined</th></tr></thead><tbody>${rows || '<tr><td colspan="2" class="muted">No members.</td></tr>'}</tbody></table></div>
${next ? `<nav class="pager" aria-label="Pages"><a href="/console/groups/${encodeURIComponent(str(resource.id))}${e(q({ after: next }))}" rel="next">Next members</a></nav>` : ''}
<h2>History</h2>${historyTable(history)}`;
}

export interface IssuedShown {
  readonly name: string;
  readonly token: string;
  readonly expiresAt: string;
  /** The token's scopes (read write, ssf, or all three). */
  readonly scope?: readonly string[];
}

/** The console's choices of a token's scopes: provisioning (read write), a Shared Signals receiver (ssf), or both. */
export const TOKEN_SCOPES = {
  provisioning: ['read', 'write'],
  ssf: ['ssf'],
  both: ['read', 'write', 'ssf'],
} as const;

export function connectionsBody(
  csrf: string,
  scimBase: string,
  tokens: readonly ProvisioningTokenView[],
  clients: readonly { id: string; name: string; bound: boolean; liveTokens: number }[],
  issued?: IssuedShown,
  message?: string,
  error?: string,
): string {
  const shown = issued
    ? `<div class="card" role="status" aria-labelledby="issued-title">
<h2 id="issued-title">Token "${e(issued.name)}" issued</h2>
<p>Copy it now: it is shown only once. It expires ${e(issued.expiresAt)}.${issued.scope ? ` Scopes: <code>${e(issued.scope.join(' '))}</code>.` : ''}</p>
<p class="secret"><code id="new-token">${e(issued.token)}</code> <button type="button" class="secondary" data-copy="new-token">Copy token</button> <span id="new-token-status" aria-live="polite"></span></p>
<p>SCIM base URL (Tenant URL in Entra ID, base URL in Okta):</p>
<p class="secret"><code id="scim-base">${e(scimBase)}</code> <button type="button" class="secondary" data-copy="scim-base">Copy URL</button> <span id="scim-base-status" aria-live="polite"></span></p>
</div>`
    : '';
  const rows = tokens
    .map(
      (t) => `<tr><td class="wrap" dir="auto">${e(t.name)}</td><td class="wrap" dir="auto">${e(t.userName ?? t.userId)}</td><td>${e(t.createdAt)}</td><td>${e(t.lastUsedAt ?? 'never')}</td><td>${e(t.expiresAt)}</td><td>${e(t.state)}</td>
<td>${t.state === 'active' ? `<form method="post" action="/console/connections/tokens/${encodeURIComponent(t.id)}/revoke" class="inline"><input type="hidden" name="_csrf" value="${e(csrf)}"><button type="submit" class="danger" aria-label="Revoke ${e(t.name)}">Revoke</button></form>` : ''}
<a href="/console/requests${e(q({ connection: `token:${t.id}` }))}">Requests</a></td></tr>`,
    )
    .join('');
  const clientRows = clients
    .map((c) => `<tr><td class="wrap" dir="auto">${c.bound ? `<a href="/console/connections/clients/${encodeURIComponent(c.id)}">${e(c.name)}</a>` : e(c.name)}</td><td><code>${e(c.id)}</code></td><td>${c.bound ? 'bound to this team' : 'signs in this team\'s admins'}</td><td>${e(c.liveTokens)}</td><td><a href="/console/requests${e(q({ connection: `client:${c.id}` }))}">Requests</a></td></tr>`)
    .join('');
  return `${message ? `<p class="ok" role="status">${e(message)}</p>` : ''}${error ? errorBody(error) : ''}${shown}
<h2>Issue a provisioning token</h2>
<form method="post" action="/console/connections/tokens" class="card filters">
<input type="hidden" name="_csrf" value="${e(csrf)}">
<div><label for="token-name">Name</label><input id="token-name" name="name" type="text" required maxlength="100" placeholder="Entra ID production"></div>
<div><label for="token-expiry">Expires in</label><select id="token-expiry" name="expiresIn"><option value="30d">30 days</option><option value="90d">90 days</option><option value="180d" selected>180 days</option><option value="366d">1 year</option></select></div>
<div><label for="token-scope">For</label><select id="token-scope" name="scope"><option value="provisioning" selected>SCIM provisioning (read write)</option><option value="ssf">a Shared Signals receiver (ssf)</option><option value="both">both (read write ssf)</option></select></div>
<div><button type="submit" class="primary">Issue token</button></div>
</form>
<p class="muted">The token acts for you (your userName appears as its user). A provisioning token has the read and write scopes; a Shared Signals receiver's the ssf scope, with which it manages its SSF streams (transmitter configuration: <code>${e(scimBase.replace(/\/v2\/scim$/, ''))}/.well-known/ssf-configuration</code>). SCIM base URL: <code>${e(scimBase)}</code></p>
<h2>Provisioning tokens</h2>
<div class="table-wrap" tabindex="0"><table><thead><tr><th scope="col">Name</th><th scope="col">User</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">State</th><th scope="col">Actions</th></tr></thead>
<tbody>${rows || '<tr><td colspan="7" class="muted">No provisioning tokens.</td></tr>'}</tbody></table></div>
<h2>OAuth clients</h2>
<div class="table-wrap" tabindex="0"><table><thead><tr><th scope="col">Name</th><th scope="col">client_id</th><th scope="col">Relation</th><th scope="col">Live tokens</th><th scope="col">Log</th></tr></thead>
<tbody>${clientRows || '<tr><td colspan="5" class="muted">No OAuth client holds tokens for this team.</td></tr>'}</tbody></table></div>`;
}

export function requestsBody(filters: { status: string; connection: string }, connections: readonly [string, string][], entries: readonly RequestLogEntry[], next: string | null, error?: string, now: Date = new Date()): string {
  const statusOptions = [['', 'all'], ['2xx', '2xx'], ['4xx', '4xx'], ['5xx', '5xx']]
    .map(([v, l]) => `<option value="${e(v)}"${v === filters.status ? ' selected' : ''}>${e(l)}</option>`)
    .join('');
  const connectionOptions = [['', 'all'] as [string, string], ...connections].map(([v, l]) => `<option value="${e(v)}"${v === filters.connection ? ' selected' : ''}>${e(l)}</option>`).join('');
  const table = dataTable({
    headers: ['Time', 'Method', 'Path', 'Status', 'scimType', 'Latency', 'Connection', 'Body'],
    rows: entries.map((r) => [
      timeHtml(r.at, now),
      e(r.method),
      `<code>${e(r.path)}</code>`,
      `<span class="status-${e(String(r.status)[0])}">${e(r.status)}</span>`,
      e(r.scimType),
      `${e(r.latencyMs)} ms`,
      `<span class="wrap" dir="auto">${e(r.connectionLabel)}</span>`,
      r.body ? `<details><summary>body</summary><pre tabindex="0">${e(r.body)}</pre></details>` : '',
    ]),
    empty: 'No requests.',
  });
  return `<form method="get" action="/console/requests" class="filters">
<div><label for="status">Status</label><select id="status" name="status">${statusOptions}</select></div>
<div><label for="connection">Connection</label><select id="connection" name="connection">${connectionOptions}</select></div>
<div><button type="submit" class="primary">Filter</button></div>
</form>
${error ? errorBody(error) : ''}
<p class="muted">The last SCIM requests of this team (7 days, at most 10,000), newest first. Passwords, secrets and tokens in bodies are redacted.</p>
${table}
${next ? `<nav class="pager" aria-label="Pages"><a href="/console/requests${e(q({ status: filters.status, connection: filters.connection, before: next }))}" rel="next">Older requests</a></nav>` : ''}`;
}

export function auditBody(filters: Record<'actor' | 'action' | 'resource' | 'from' | 'to', string>, entries: readonly AuditEntry[], next: string | undefined, error?: string): string {
  const field = (id: keyof typeof filters, label: string, hint: string) =>
    `<div><label for="${id}">${label}</label><input id="${id}" name="${id}" type="text" value="${e(filters[id])}" placeholder="${e(hint)}" spellcheck="false"></div>`;
  return `<form method="get" action="/console/audit" class="filters">
${field('actor', 'Actor', 'cli, console, scim, or an id')}${field('action', 'Action', 'create, patch, token_issued')}${field('resource', 'Resource id', 'a user, group or token id')}${field('from', 'From', '2026-01-31')}${field('to', 'To', '2026-02-28T12:00Z')}
<div><button type="submit" class="primary">Filter</button></div>
</form>
${error ? errorBody(error) : ''}
${historyTable(entries)}
${next ? `<nav class="pager" aria-label="Pages"><a href="/console/audit${e(q({ ...filters, before: next }))}" rel="next">Older events</a></nav>` : ''}`;
}

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
