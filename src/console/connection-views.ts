/**
 * The console's Connections pages (issue 30, item 1; DESIGN.md section 9): the team's
 * connections, each a principal with its tokens and OAuth clients; one connection's page with
 * the form that issues its token, its rename form and its delete link; the page that shows a
 * new token once (reached by a 303, so a reload issues nothing); and the confirmation pages
 * before a connection is deleted or a token revoked, saying what stops working. Every value is
 * escaped; forms carry the CSRF token; tables are dataTable()s (stacked rows at 390 px).
 */
import escapeHtml from 'escape-html';
import type { ConnectionView } from '../oauth/connections.ts';
import type { ProvisioningTokenView } from '../oauth/provisioning.ts';
import { formatCount, timeHtml } from './format.ts';
import { dataTable } from './table.ts';

const e = (value: unknown): string => escapeHtml(value === undefined || value === null ? '' : String(value));
const plural = (n: number, one: string, many: string): string => `${formatCount(n)} ${n === 1 ? one : many}`;

export const connectionPath = (id: string): string => `/console/connections/${encodeURIComponent(id)}`;
const csrfField = (csrf: string): string => `<input type="hidden" name="_csrf" value="${e(csrf)}">`;
const notes = (message?: string, error?: string): string =>
  `${message ? `<p class="ok" role="status">${e(message)}</p>` : ''}${error ? `<div class="alert" role="alert"><p>${e(error)}</p></div>` : ''}`;

/** What the console's token form offers: provisioning (read write), a Shared Signals receiver (ssf), or both. */
export const CONNECTION_TOKEN_SCOPES = {
  provisioning: ['read', 'write'],
  ssf: ['ssf'],
  both: ['read', 'write', 'ssf'],
} as const;

const PROVIDERS: readonly [string, string][] = [['', 'not said'], ['entra', 'Microsoft Entra ID'], ['okta', 'Okta'], ['generic', 'another SCIM client']];
const providerName = (p: string | null): string => PROVIDERS.find(([v]) => v === (p ?? ''))?.[1] ?? p ?? '';

export interface ConnectionClient {
  readonly id: string;
  readonly name: string;
  readonly liveTokens: number;
  readonly connectionId: string | null;
  /** Registered for this team (else it only signs in the team's admins). */
  readonly bound: boolean;
}

function tokenRows(tokens: readonly ProvisioningTokenView[], now: Date, owner: (t: ProvisioningTokenView) => string): string[][] {
  return tokens.map((t) => [
    `<span class="wrap" dir="auto">${e(t.name)}</span>`,
    owner(t),
    `<code>${e(t.scope)}</code>`,
    timeHtml(t.createdAt, now),
    timeHtml(t.lastUsedAt, now),
    timeHtml(t.expiresAt, now),
    e(t.state),
    `${t.state === 'active' ? `<a href="/console/connections/tokens/${encodeURIComponent(t.id)}/revoke" class="danger" aria-label="Revoke ${e(t.name)}">Revoke</a> · ` : ''}<a href="/console/requests?connection=${encodeURIComponent(`token:${t.id}`)}">Requests</a>`,
  ]);
}

/** /console/connections: every connection with its tokens and clients counted, the form that adds one, and admins' own tokens. */
export function connectionsListBody(
  csrf: string,
  now: Date,
  connections: readonly ConnectionView[],
  tokens: readonly ProvisioningTokenView[],
  clients: readonly ConnectionClient[],
  message?: string,
  error?: string,
): string {
  const rows = connections.map((c) => {
    const own = tokens.filter((t) => t.connectionId === c.id && t.state === 'active');
    const ownClients = clients.filter((k) => k.connectionId === c.id);
    const list = (items: string[]) => (items.length === 0 ? '<span class="muted">none</span>' : items.join(', '));
    return [
      `<a href="${e(connectionPath(c.id))}" dir="auto">${e(c.name)}</a>`,
      e(providerName(c.provider)),
      `${e(plural(c.liveTokens, 'live token', 'live tokens'))}: ${list(own.map((t) => `<span dir="auto">${e(t.name)}</span>`))}`,
      `${e(plural(c.clients, 'client', 'clients'))}: ${list(ownClients.map((k) => `<a href="/console/connections/clients/${encodeURIComponent(k.id)}" dir="auto">${e(k.name)}</a>`))}`,
      timeHtml(c.lastUsedAt, now),
      `<a href="/console/requests?connection=${encodeURIComponent(`connection:${c.id}`)}">Requests</a>`,
    ];
  });
  const personal = tokens.filter((t) => t.connectionId === null);
  const loose = clients.filter((k) => k.connectionId === null);
  return `${notes(message, error)}
<p>A connection is an identity provider's own principal (say, "Entra ID production"): its tokens and OAuth clients belong to it, not to the admin who made it, so it keeps working when any person leaves. Audit entries and the request log name it.</p>
<h2>Connections <span class="muted">(${e(formatCount(connections.length))})</span></h2>
${dataTable({ headers: ['Name', 'Provider', 'Tokens', 'OAuth clients', 'Last used', 'Log'], rows, empty: 'No connections yet: add one below.', caption: 'Connections' })}
<h2>Add a connection</h2>
<form method="post" action="/console/connections" class="card filters">
${csrfField(csrf)}
<div><label for="connection-name">Name</label><input id="connection-name" name="name" type="text" required maxlength="100" placeholder="Entra ID production"></div>
<div><label for="connection-provider">Provider</label><select id="connection-provider" name="provider">${PROVIDERS.map(([v, l]) => `<option value="${e(v)}">${e(l)}</option>`).join('')}</select></div>
<div><button type="submit" class="primary">Add connection</button></div>
</form>
${loose.length > 0 ? `<h2>OAuth clients of no connection</h2>
<p class="muted">Clients registered for this team, or holding its tokens, that belong to no connection (<code>rollcall client create --connection NAME</code> makes a connection's client).</p>
${dataTable({
  headers: ['Name', 'client_id', 'Relation', 'Live tokens', 'Log'],
  rows: loose.map((k) => [
    k.bound ? `<a href="/console/connections/clients/${encodeURIComponent(k.id)}" dir="auto">${e(k.name)}</a>` : `<span dir="auto">${e(k.name)}</span>`,
    `<code>${e(k.id)}</code>`,
    k.bound ? 'bound to this team' : "signs in this team's admins",
    e(formatCount(k.liveTokens)),
    `<a href="/console/requests?connection=${encodeURIComponent(`client:${k.id}`)}">Requests</a>`,
  ]),
  caption: 'OAuth clients of no connection',
})}` : ''}
${personal.length > 0 ? `<h2>Admins' own tokens</h2>
<p class="muted">Tokens an admin issued for their own scripts (<code>rollcall token issue --user-name</code>): each acts as its admin and ends when that admin is deactivated. Give an identity provider a connection's token instead.</p>
${dataTable({ headers: ['Name', 'Admin', 'Scopes', 'Created', 'Last used', 'Expires', 'State', 'Actions'], rows: tokenRows(personal, now, (t) => `<span class="wrap" dir="auto">${e(t.userName ?? t.userId)}</span>`), caption: "Admins' own tokens" })}` : ''}`;
}

/** /console/connections/:id: its tokens, its clients, the token form, rename and delete. */
export function connectionBody(
  csrf: string,
  now: Date,
  scimBase: string,
  connection: ConnectionView,
  tokens: readonly ProvisioningTokenView[],
  clients: readonly ConnectionClient[],
  message?: string,
  error?: string,
): string {
  const path = connectionPath(connection.id);
  const clientRows = clients.map((c) => [
    `<a href="/console/connections/clients/${encodeURIComponent(c.id)}" dir="auto">${e(c.name)}</a>`,
    `<code>${e(c.id)}</code>`,
    e(formatCount(c.liveTokens)),
    `<a href="/console/requests?connection=${encodeURIComponent(`client:${c.id}`)}">Requests</a>`,
  ]);
  return `<p><a href="/console/connections">All connections</a> · <a href="/console/requests?connection=${encodeURIComponent(`connection:${connection.id}`)}">Its requests</a></p>
${notes(message, error)}
<dl class="facts"><dt>Provider</dt><dd>${e(providerName(connection.provider))}</dd><dt>Created</dt><dd>${timeHtml(connection.createdAt, now)}</dd><dt>Last used</dt><dd>${timeHtml(connection.lastUsedAt, now)}</dd><dt>SCIM base URL</dt><dd><code>${e(scimBase)}</code></dd></dl>
<h2>Tokens <span class="muted">(${e(plural(connection.liveTokens, 'live', 'live'))})</span></h2>
${dataTable({ headers: ['Name', 'Issued by', 'Scopes', 'Created', 'Last used', 'Expires', 'State', 'Actions'], rows: tokenRows(tokens, now, () => 'this connection'), empty: 'No tokens yet.', caption: `Tokens of ${connection.name}` })}
<h2>Issue a token</h2>
<form method="post" action="${e(path)}/tokens" class="card filters">
${csrfField(csrf)}
<div><label for="token-name">Token name</label><input id="token-name" name="name" type="text" required maxlength="100" placeholder="2026 token"></div>
<div><label for="token-expiry">Expires in</label><select id="token-expiry" name="expiresIn"><option value="30d">30 days</option><option value="90d">90 days</option><option value="180d" selected>180 days</option><option value="366d">1 year</option></select></div>
<div><label for="token-scope">For</label><select id="token-scope" name="scope"><option value="provisioning" selected>SCIM provisioning (read write)</option><option value="ssf">a Shared Signals receiver (ssf)</option><option value="both">both (read write ssf)</option></select></div>
<div><button type="submit" class="primary">Issue token</button></div>
</form>
<p class="muted">The token acts for this connection, never for you: it keeps working whoever leaves. A Shared Signals receiver's token (ssf) manages its SSF streams (transmitter configuration: <code>${e(scimBase.replace(/\/v2\/scim$/, ''))}/.well-known/ssf-configuration</code>).</p>
<h2>OAuth clients <span class="muted">(${e(formatCount(clients.length))})</span></h2>
${dataTable({ headers: ['Name', 'client_id', 'Live tokens', 'Log'], rows: clientRows, empty: 'No OAuth clients: create one with rollcall client create --team TEAM --connection NAME.', caption: `OAuth clients of ${connection.name}` })}
<h2>Rename</h2>
<form method="post" action="${e(path)}/rename" class="card filters">
${csrfField(csrf)}
<div><label for="connection-rename">New name</label><input id="connection-rename" name="name" type="text" required maxlength="100" value="${e(connection.name)}"></div>
<div><button type="submit" class="secondary">Rename</button></div>
</form>
<h2>Delete</h2>
<p><a href="${e(path)}/delete" class="danger">Delete this connection…</a></p>`;
}

/** A new token once (after the 303), or the note that it was shown already. */
export function tokenIssuedBody(scimBase: string, connection: ConnectionView, issued: { name: string; token: string; expiresAt: string; scope: string } | undefined, now: Date): string {
  const back = `<p><a href="${e(connectionPath(connection.id))}">Back to ${e(connection.name)}</a></p>`;
  if (!issued) {
    return `${back}<div class="alert" role="alert"><p>This token was shown once and is gone: Rollcall keeps only its hash. If it was not copied, revoke it and issue another.</p></div>`;
  }
  return `${back}<div class="card" role="status" aria-labelledby="issued-title">
<h2 id="issued-title">Token "${e(issued.name)}" issued for ${e(connection.name)}</h2>
<p>Copy it now: it is shown only once. It expires ${timeHtml(issued.expiresAt, now)}. Scopes: <code>${e(issued.scope)}</code>.</p>
<p class="secret"><code id="new-token">${e(issued.token)}</code> <button type="button" class="secondary" data-copy="new-token">Copy token</button> <span id="new-token-status" aria-live="polite"></span></p>
<p>SCIM base URL (Tenant URL in Entra ID, base URL in Okta):</p>
<p class="secret"><code id="scim-base">${e(scimBase)}</code> <button type="button" class="secondary" data-copy="scim-base">Copy URL</button> <span id="scim-base-status" aria-live="polite"></span></p>
</div>`;
}

/** The confirmation before a connection is deleted: what stops working. */
export function deleteConnectionBody(csrf: string, connection: ConnectionView): string {
  const path = connectionPath(connection.id);
  return `<div class="alert" role="alert"><p>Deleting "${e(connection.name)}" stops ${e(plural(connection.liveTokens, 'live token', 'live tokens'))} and ${e(plural(connection.clients, 'OAuth client', 'OAuth clients'))} (with their secrets, federated credentials and tokens) at once: the identity provider's next request gets a 401.</p></div>
<form method="post" action="${e(path)}/delete" class="card">
${csrfField(csrf)}
<button type="submit" class="danger">Delete "${e(connection.name)}"</button> <a href="${e(path)}">Cancel</a>
</form>`;
}

/** The confirmation before a token is revoked. */
export function revokeTokenBody(csrf: string, token: ProvisioningTokenView, back: string): string {
  const owner = token.connectionId !== null ? `connection "${token.connectionName ?? token.connectionId}"` : `admin ${token.userName ?? token.userId}`;
  return `<div class="alert" role="alert"><p>Revoking "${e(token.name)}" of ${e(owner)} ends it at once: the next request with it gets a 401. ${token.lastUsedAt ? `It was last used ${e(token.lastUsedAt)}.` : 'It has never been used.'}</p></div>
<form method="post" action="/console/connections/tokens/${encodeURIComponent(token.id)}/revoke" class="card">
${csrfField(csrf)}
<button type="submit" class="danger">Revoke "${e(token.name)}"</button> <a href="${e(back)}">Cancel</a>
</form>`;
}
