/**
 * The connection wizard's pages (issue 30, item 6): choosing the identity provider and the way it
 * authenticates, the form that makes the connection, the values to paste in the provider's
 * screens (with copy buttons; a secret only on the page that follows its making), the live Test
 * state (refreshed by the console script from `data-poll`, or by its no-script link), the setup
 * links an admin sends, and the frame of a setup link's restricted session (no navigation: it
 * reaches the wizard and nothing else). Every value is escaped; forms carry the CSRF token.
 */
import escapeHtml from 'escape-html';
import { dataTable } from './table.ts';
import { exactTime, timeHtml } from './format.ts';
import { CONSOLE_SCRIPT, documentHead } from './document.ts';
import type { SetupLinkView } from './setup-links.ts';
import { PATHS } from './wizard-paths.ts';
import type { WizardPath } from './wizard-paths.ts';
import type { ConnectionSetup, PasteValue, TestState } from './wizard.ts';

const e = (value: unknown): string => escapeHtml(value === undefined || value === null ? '' : String(value));
const csrfField = (csrf: string): string => `<input type="hidden" name="_csrf" value="${e(csrf)}">`;

/** Where the wizard lives: `/console/connect` for an admin, `/console/setup/wizard` for a setup link's session. */
export interface WizardPlace {
  readonly base: string;
  readonly csrf: string;
  /** A setup link's session: only the paths it can finish, no setup links of its own. */
  readonly setup: boolean;
}

const notice = (message?: string, error?: string): string =>
  `${message ? `<p class="ok" role="status">${e(message)}</p>` : ''}${error ? `<div class="alert" role="alert">${e(error)}</div>` : ''}`;

export function wizardStartBody(place: WizardPlace, links: readonly SetupLinkView[] | undefined, madeLink: { url: string; recipient: string; expiresAt: string } | undefined, now: Date, message?: string, error?: string): string {
  const groups = new Map<string, WizardPath[]>();
  for (const path of PATHS) if (!place.setup || path.forSetupLinks) groups.set(path.providerLabel, [...(groups.get(path.providerLabel) ?? []), path]);
  const choices = [...groups]
    .map(([provider, paths]) => `<section class="card" aria-labelledby="p-${e(paths[0]!.provider)}"><h3 id="p-${e(paths[0]!.provider)}">${e(provider)}</h3><ul class="paths">${paths
      .map((p) => `<li><a href="${e(`${place.base}/${p.id}`)}">${e(p.method)}</a><br><span class="muted">${e(p.when)}</span></li>`)
      .join('')}</ul></section>`)
    .join('');
  const intro = place.setup
    ? '<p>An admin of this team sent you this link to connect your identity provider. Choose the provider and the way it signs in; Rollcall then shows exactly what to paste in its screens, and tells you when its first request arrives.</p>'
    : '<p>Choose the provider and the way it signs in; Rollcall makes the connection and what it needs, shows exactly what to paste in the provider\'s screens, and tells you when its first request arrives.</p>';
  return `${notice(message, error)}${intro}
<h2>1. Choose your identity provider</h2>
${choices}
${links !== undefined ? setupLinksSection(place, links, madeLink, now) : ''}`;
}

function setupLinksSection(place: WizardPlace, links: readonly SetupLinkView[], made: { url: string; recipient: string; expiresAt: string } | undefined, now: Date): string {
  const shown = made
    ? `<div class="card" role="status" aria-labelledby="link-title"><h3 id="link-title">Setup link for ${e(made.recipient)}</h3>
<p>Send it now: it is shown only once. It opens the wizard of this team once, and expires ${timeHtml(made.expiresAt, now)} (${e(exactTime(made.expiresAt))}).</p>
<p class="secret"><code id="setup-link">${e(made.url)}</code> <button type="button" class="secondary" data-copy="setup-link">Copy link</button> <span id="setup-link-status" aria-live="polite"></span></p></div>`
    : '';
  const rows = links.map((l) => [
    `<span dir="auto">${e(l.recipient)}</span>`,
    timeHtml(l.createdAt, now),
    l.state === 'waiting' ? `expires ${timeHtml(l.expiresAt, now)}` : l.state === 'used' ? `used ${timeHtml(l.usedAt, now)}${l.connectionId ? ' (connection made)' : ''}` : e(l.state),
    l.state === 'waiting' || l.state === 'used' ? `<a href="${e(`${place.base}/links/${encodeURIComponent(l.id)}/revoke`)}">Withdraw<span class="visually-hidden"> the link for ${e(l.recipient)}</span></a>` : '',
  ]);
  return `<h2>Or send a setup link to a colleague</h2>
<p class="muted">For someone without a Rollcall account who administers the identity provider: the link opens only this wizard, for this team, once. It expires; you can withdraw it.</p>
${shown}
<form method="post" action="${e(`${place.base}/links`)}" class="card filters">
${csrfField(place.csrf)}
<div><label for="recipient">For (email or name)</label><input id="recipient" name="recipient" type="text" required maxlength="200" autocomplete="off"></div>
<div><label for="hours">Expires in</label><select id="hours" name="hours"><option value="24">24 hours</option><option value="72" selected>72 hours</option><option value="168">7 days</option></select></div>
<div><button type="submit" class="primary">Make setup link</button></div>
</form>
${dataTable({ headers: ['For', 'Made', 'State', 'Action'], rows, empty: 'No setup links yet.', caption: 'Setup links' })}`;
}

export function revokeLinkBody(place: WizardPlace, link: SetupLinkView): string {
  return `<div class="card"><p>Withdraw the setup link for <strong dir="auto">${e(link.recipient)}</strong>? ${link.state === 'used' ? 'It has been used: the wizard session it opened ends now (a connection it made stays).' : 'It can no longer be used.'}</p>
<form method="post" action="${e(`${place.base}/links/${encodeURIComponent(link.id)}/revoke`)}" class="inline">${csrfField(place.csrf)}<button type="submit" class="danger">Withdraw the link</button></form> <a href="${e(place.base)}">Cancel</a></div>`;
}

export interface FormValues {
  readonly name?: string;
  readonly tenantId?: string;
  readonly subject?: string;
  readonly issuer?: string;
  readonly redirectUri?: string;
}

const input = (id: string, label: string, value: string | undefined, hint: string, extra = ''): string =>
  `<label for="${id}">${e(label)}</label><input id="${id}" name="${id}" type="text" value="${e(value)}" aria-describedby="${id}-hint" spellcheck="false"${extra}><p id="${id}-hint" class="note">${hint}</p>`;

export function wizardFormBody(place: WizardPlace, path: WizardPath, values: FormValues, error?: string): string {
  const extra =
    path.credential === 'client-federation'
      ? `${input('tenantId', 'Directory (tenant) ID', values.tenantId, 'In Entra: Overview of your tenant, "Tenant ID". Rollcall trusts assertions your tenant signs (issuer <code>https://login.microsoftonline.com/&lt;tenant ID&gt;/v2.0</code>).')}
${input('subject', 'Object ID of the provisioning identity', values.subject, 'The object ID Entra\'s provisioning service signs as in your tenant: the <code>sub</code> of its assertions.', ' required maxlength="200"')}
<details${values.issuer ? ' open' : ''}><summary>Another cloud or issuer</summary>${input('issuer', 'Issuer URL (instead of the tenant ID)', values.issuer, 'For a national cloud or another issuer of workload identities: its exact <code>iss</code>. Rollcall finds its keys through its OpenID configuration.')}</details>`
      : path.credential === 'client-code'
        ? input('redirectUri', 'Okta\'s redirect URI', values.redirectUri, 'Where Rollcall sends Okta back after the sign-in: Okta shows it in the app\'s Provisioning settings (for an app in the Okta Integration Network, <code>https://system-admin.okta.com/admin/app/cpc/&lt;app name&gt;/oauth/callback</code>).', ' required maxlength="2000"')
        : '';
  return `${notice(undefined, error)}<p><a href="${e(place.base)}">All providers</a></p>
<p><strong>${e(path.providerLabel)}</strong>: ${e(path.method)}. ${e(path.when)}</p>
<h2>2. Name the connection</h2>
<form method="post" action="${e(`${place.base}/${path.id}`)}" class="card">
${csrfField(place.csrf)}
${input('name', 'Connection name', values.name ?? path.defaultName, 'How the audit log and the request log name what this provider does. Unique in this team.', ' required maxlength="100"')}
${extra}
<p><button type="submit" class="primary">Create the connection</button></p>
</form>`;
}

/** A value with a copy button (assets.ts copies the text of the element the button names). */
function pasteRow(v: PasteValue): string {
  const id = `v-${v.key}`;
  if (v.value === undefined) return `<dt>${e(v.label)}</dt><dd>${v.missing ? e(v.missing) : ''}</dd>`;
  return `<dt>${e(v.label)}</dt><dd class="secret"><code id="${e(id)}">${e(v.value)}</code> <button type="button" class="secondary" data-copy="${e(id)}" aria-label="Copy ${e(v.label)}">Copy</button> <span id="${e(id)}-status" aria-live="polite"></span>${v.note ? `<br><span class="note">${e(v.note)}</span>` : ''}</dd>`;
}

export function connectionSetupBody(place: WizardPlace, setup: ConnectionSetup, values: readonly PasteValue[], steps: readonly string[], test: TestState, now: Date, secretShown: boolean): string {
  const testUrl = `${place.base}/connections/${encodeURIComponent(setup.id)}/test`;
  return `${secretShown ? '<p class="ok" role="status">The connection is made. Copy the secret now: it is shown only on this page, once.</p>' : ''}
<p>${e(setup.path.providerLabel)}: ${e(setup.path.method)}. Connection <strong dir="auto">${e(setup.name)}</strong>.</p>
<h2>3. Paste these values in ${e(setup.path.providerLabel)}</h2>
<ol class="steps">${steps.map((s) => `<li>${s}</li>`).join('')}</ol>
<div class="card"><dl class="attrs">${values.map(pasteRow).join('')}</dl></div>
<h2>4. Test</h2>
<div id="test-state" class="test-state" aria-live="polite" data-poll="${e(testUrl)}">${testFragment(setup, test, now, !place.setup)}</div>
<p class="muted"><a href="${e(`${place.base}/connections/${encodeURIComponent(setup.id)}`)}">Check again</a> (the page checks by itself every second while it is open).</p>`;
}

/** The Test state: waiting, green with the request, or red with its reason. */
export function testFragment(setup: ConnectionSetup, test: TestState, now: Date, logLink = true): string {
  const r = test.request;
  if (!r) {
    return `<p class="pending" data-state="waiting"><strong>Waiting for the first request</strong> from ${e(setup.name)}. ${e(setup.path.provider === 'okta' ? 'In Okta, select Test Connector Configuration (or Test API Credentials).' : setup.path.provider === 'entra' ? 'In Entra, select Test Connection.' : 'Send a SCIM request with the token, e.g. GET /Users.')}</p>`;
  }
  const line = `<code>${e(r.method)} ${e(r.path)}</code> answered <strong>${e(r.status)}</strong> ${timeHtml(r.at, now)}`;
  if (test.state === 'ok') return `<div class="ok" data-state="ok"><strong>Connected.</strong> The request from ${e(setup.name)} arrived: ${line}. ${e(test.count)} request${test.count === 1 ? '' : 's'} so far.</div>`;
  const reason = [r.scimType, r.detail].filter((x): x is string => Boolean(x)).join(': ') || 'the request log gives no more detail';
  return `<div class="alert" data-state="failed"><strong>The last request failed.</strong> ${line}. Reason: ${e(reason)}.${logLink ? ' <a href="/console/requests?status=4xx">The request log</a> shows more.' : ''}</div>`;
}

/** A setup link's page: the landing before the link is used, or the restricted wizard. No navigation. */
export function setupPage(title: string, teamName: string | undefined, body: string): string {
  return `${documentHead(`${title}${teamName ? ` · ${teamName}` : ''} · Rollcall`, CONSOLE_SCRIPT)}
<body>
<header class="top"><p class="brand"><span class="mark" aria-hidden="true">R</span>Rollcall${teamName ? ` · <span dir="auto">${e(teamName)}</span>` : ''} · connection setup</p></header>
<main id="main">
<h1>${e(title)}</h1>
${body}
</main>
</body>
</html>
`;
}

export function setupLandingBody(csrf: string, token: string, teamName: string, recipient: string, expiresAt: string, now: Date): string {
  return `<div class="card"><p>This link lets <strong dir="auto">${e(recipient)}</strong> connect an identity provider to the Rollcall team <strong dir="auto">${e(teamName)}</strong>. It opens the connection wizard once, for a few hours, and reaches nothing else. It expires ${timeHtml(expiresAt, now)}.</p>
<form method="post" action="/console/setup/${e(encodeURIComponent(token))}">${csrfField(csrf)}<button type="submit" class="primary">Start the connection wizard</button></form></div>`;
}

export function setupRefusedBody(reason: string): string {
  return `<div class="alert" role="alert">${e(reason)}</div>`;
}
