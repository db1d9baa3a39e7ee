/**
 * The console's client page (DESIGN.md sections 9 and 11): what Entra ID asks for (token
 * endpoint, client id, SCIM base URL) with copy buttons, the client's secrets with a warning
 * for those expiring within 30 days or expired, the form that adds a secret, the new secret
 * shown once, and the confirmation step before a secret is revoked. Every value is escaped;
 * forms carry the CSRF token; no inline script (the copy buttons use assets.ts's script).
 */
import escapeHtml from 'escape-html';
import type { ClientSecretView } from '../oauth/client-secret-admin.ts';
import { DEFAULT_SECRET_DAYS, MAX_LIVE_SECRETS } from '../oauth/client-secrets.ts';
import { formatCount } from './format.ts';
import { timeHtml } from './format.ts';
import { dataTable } from './table.ts';

const e = (value: unknown): string => escapeHtml(value === undefined || value === null ? '' : String(value));

/** Secrets expiring this close are flagged, so the customer adds the next one in time. */
export const EXPIRY_WARNING_DAYS = 30;

export interface ClientPageData {
  readonly client: { readonly id: string; readonly name: string; readonly tokenLifetime: number };
  readonly secrets: readonly ClientSecretView[];
  readonly tokenEndpoint: string;
  readonly scimBase: string;
  /** Now, to tell which secrets expire soon. */
  readonly now: string;
}

/** A secret just added, shown once. */
export interface NewSecretShown {
  readonly id: string;
  readonly name: string;
  readonly secret: string;
  readonly expiresAt: string;
}

export const clientPath = (clientId: string): string => `/console/connections/clients/${encodeURIComponent(clientId)}`;

/** A value with a copy button (the script copies the text of the element `id`). */
const copyable = (id: string, label: string, value: string): string =>
  `<dt>${e(label)}</dt><dd class="secret"><code id="${e(id)}">${e(value)}</code> <button type="button" class="secondary" data-copy="${e(id)}" aria-label="Copy ${e(label)}">Copy</button> <span id="${e(id)}-status" aria-live="polite"></span></dd>`;

function expiryNote(secret: ClientSecretView, now: string): string {
  if (!secret.live) return '<strong class="status-4">Expired</strong>';
  const days = Math.floor((Date.parse(secret.expiresAt) - Date.parse(now)) / 86_400_000);
  return days < EXPIRY_WARNING_DAYS ? `<strong class="status-4">Expires in ${e(days)} day${days === 1 ? '' : 's'}: add the next secret now</strong>` : '';
}

export function clientPageBody(csrf: string, data: ClientPageData, shown?: NewSecretShown, message?: string, error?: string): string {
  const { client, secrets, now } = data;
  const at = new Date(now);
  const warned = secrets.filter((s) => !s.live || Date.parse(s.expiresAt) - Date.parse(now) < EXPIRY_WARNING_DAYS * 86_400_000);
  const alert = warned.length > 0
    ? `<div class="alert" role="alert" id="expiry-warning">${warned.length === 1 ? 'One secret' : `${e(warned.length)} secrets`} of this client ${warned.every((s) => !s.live) ? 'expired' : `expire${warned.length === 1 ? 's' : ''} within ${EXPIRY_WARNING_DAYS} days or expired`}: add a new secret, give it to the identity provider, then revoke the old one.</div>`
    : '';
  const newSecret = shown
    ? `<div class="card" role="status" aria-labelledby="new-secret-title">
<h2 id="new-secret-title">Secret "${e(shown.name)}" added</h2>
<p>Copy it now: it is shown only once. It expires ${timeHtml(shown.expiresAt, at)}.</p>
<p class="secret"><code id="new-secret">${e(shown.secret)}</code> <button type="button" class="secondary" data-copy="new-secret">Copy secret</button> <span id="new-secret-status" aria-live="polite"></span></p>
</div>`
    : '';
  const table = dataTable({
    headers: ['Name', 'Id', 'Created', 'Expires', 'Last used', 'Actions'],
    rows: secrets.map((s) => ({
      attributes: { 'data-secret-id': s.id },
      cells: [
        `<span class="wrap" dir="auto">${e(s.name)}</span>`,
        `<code>${e(s.id)}</code>`,
        timeHtml(s.createdAt, at),
        `${timeHtml(s.expiresAt, at)} ${expiryNote(s, now)}`,
        timeHtml(s.lastUsedAt, at),
        `<a href="${e(`${clientPath(client.id)}/secrets/${encodeURIComponent(s.id)}/revoke`)}" aria-label="Revoke ${e(s.name)}">Revoke…</a>`,
      ],
    })),
    empty: 'No secret: the client cannot authenticate with a secret.',
  });
  const live = secrets.filter((s) => s.live).length;
  return `${message ? `<p class="ok" role="status">${e(message)}</p>` : ''}${error ? `<div class="alert" role="alert">${e(error)}</div>` : ''}${alert}${newSecret}
<h2>For the identity provider</h2>
<div class="card"><dl class="attrs">
${copyable('token-endpoint', 'Token endpoint', data.tokenEndpoint)}
${copyable('client-id', 'Client ID', client.id)}
${copyable('scim-base', 'SCIM base URL (Tenant URL)', data.scimBase)}
<dt>Access tokens live</dt><dd>${e(client.tokenLifetime)} seconds</dd>
</dl></div>
<h2>Secrets</h2>
<p class="muted">Any live secret authenticates the client; up to ${MAX_LIVE_SECRETS} may be live at once, so a secret can be replaced without downtime. ${e(live)} live now.</p>
${table}
<h2>Add a secret</h2>
<form method="post" action="${e(`${clientPath(client.id)}/secrets`)}" class="card filters">
<input type="hidden" name="_csrf" value="${e(csrf)}">
<div><label for="secret-name">Name</label><input id="secret-name" name="name" type="text" maxlength="100" placeholder="Entra ID 2027"></div>
<div><label for="secret-expiry">Expires in</label><select id="secret-expiry" name="expiresIn"><option value="90">90 days</option><option value="365">1 year</option><option value="${DEFAULT_SECRET_DAYS}" selected>2 years</option><option value="1095">3 years</option></select></div>
<div><button type="submit" class="primary">Add secret</button></div>
</form>`;
}

/** The step before a secret is revoked: what it ends, and a form that does it. */
export function revokeConfirmBody(csrf: string, clientId: string, secret: ClientSecretView, liveTokens: number): string {
  const tokens = liveTokens === 0 ? 'No live token was issued with it.' : `<strong id="revoke-tokens">${e(formatCount(liveTokens))} live token${liveTokens === 1 ? '' : 's'}</strong> (access and refresh) issued with it end${liveTokens === 1 ? 's' : ''} with it, on every server.`;
  return `<div class="card" role="alert">
<p>Revoke the secret <strong dir="auto">${e(secret.name)}</strong> (<code>${e(secret.id)}</code>)? It stops working at once. ${tokens} The client's other secrets keep working.</p>
<form method="post" action="${e(`${clientPath(clientId)}/secrets/${encodeURIComponent(secret.id)}/revoke`)}" class="inline">
<input type="hidden" name="_csrf" value="${e(csrf)}">
<button type="submit" class="danger">Revoke secret</button>
</form> <a href="${e(clientPath(clientId))}">Cancel</a>
</div>`;
}
