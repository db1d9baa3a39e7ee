/**
 * The console's pages for second factors (issue 30 item 7): the passkey button of the sign-in
 * page, the second step of a sign-in, the Security page (passkeys, authenticator app, recovery
 * codes) and the team's requirement on the Settings page. Server-rendered; every value escaped;
 * forms carry the CSRF token; the passkey forms are shown by the passkey script
 * (passkey-script.ts) only where the browser has WebAuthn, and every page works without it.
 */
import escapeHtml from 'escape-html';
import type { FactorsView } from '../oauth/factors.ts';
import { timeHtml } from './format.ts';
import { signedOutPage } from './document.ts';
import { dataTable } from './table.ts';

const e = (value: unknown): string => escapeHtml(value === undefined || value === null ? '' : String(value));
const csrfField = (csrf: string): string => `<input type="hidden" name="_csrf" value="${e(csrf)}">`;

export const PASSKEY_SCRIPT = '<script src="/console/assets/passkeys.js" defer></script>';

/** "Use a passkey" under the password form: a discoverable credential, no name typed. */
export function passkeySignInForm(csrf: string): string {
  return `<form method="post" action="/console/sign-in/passkey" data-passkey="get" data-options="/console/sign-in/passkey/options" class="passkey" hidden>
${csrfField(csrf)}<input type="hidden" name="credential" value="">
<p><button type="submit" class="secondary">Use a passkey</button></p>
<p class="note" role="status" data-passkey-status></p>
</form>`;
}

export interface VerifyView {
  readonly csrf: string;
  readonly userName: string;
  readonly totp: boolean;
  readonly passkeys: boolean;
  readonly error?: string;
}

/** The second step of a sign-in: a code (authenticator app or recovery code), or a passkey. */
export function verifyPage(view: VerifyView): string {
  const code = `<form method="post" action="/console/sign-in/verify">
${csrfField(view.csrf)}
<label for="code">${view.totp ? 'Code from your authenticator app, or a recovery code' : 'A recovery code'}</label>
<input id="code" name="code" type="text" inputmode="${view.totp ? 'numeric' : 'text'}" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" required autofocus>
<p><button type="submit" class="primary">Continue</button></p>
</form>`;
  const passkey = view.passkeys
    ? `<form method="post" action="/console/sign-in/passkey" data-passkey="get" data-options="/console/sign-in/passkey/options" hidden>
${csrfField(view.csrf)}<input type="hidden" name="step" value="second"><input type="hidden" name="credential" value="">
<p><button type="submit" class="secondary">Use your passkey</button></p>
<p class="note" role="status" data-passkey-status></p>
</form>`
    : '';
  const body = `<p class="muted">Signing in as <strong dir="auto">${e(view.userName)}</strong>. Your account has a second factor.</p>
${view.error ? `<div class="alert" role="alert">${e(view.error)}</div>` : ''}
${passkey}
${code}
<p class="note"><a href="/console/sign-in">Start again</a></p>`;
  return signedOutPage({ title: 'Second step', heading: 'Confirm it is you', body, extra: PASSKEY_SCRIPT });
}

export interface SecurityView {
  readonly csrf: string;
  readonly factors: FactorsView;
  readonly now: Date;
  /** The team requires a second factor of its admins. */
  readonly teamRequires: boolean;
  /** The secret and URI of an authenticator app being set up. */
  readonly pendingTotp?: { readonly secret: string; readonly uri: string };
  /** Recovery codes just made, shown this once. */
  readonly codes?: readonly string[];
  readonly message?: string;
  readonly error?: string;
}

function passkeysSection(view: SecurityView): string {
  const rows = view.factors.passkeys.map((p) => [
    `<span dir="auto">${e(p.name)}</span>`,
    timeHtml(p.createdAt, view.now),
    timeHtml(p.lastUsedAt, view.now),
    `<form method="post" action="/console/security/passkeys/${encodeURIComponent(p.id)}/remove" class="inline">${csrfField(view.csrf)}<button type="submit" class="danger" aria-label="Remove passkey ${e(p.name)}">Remove</button></form>`,
  ]);
  return `<h2>Passkeys</h2>
<p class="muted">A passkey signs you in without a password (your device checks it is you), or confirms it is you after your password.</p>
${dataTable({ headers: ['Name', 'Added', 'Last used', 'Action'], rows, empty: 'No passkeys yet.', caption: 'Your passkeys' })}
<form method="post" action="/console/security/passkeys" data-passkey="create" data-options="/console/security/passkeys/options" class="card" hidden>
${csrfField(view.csrf)}<input type="hidden" name="credential" value="">
<label for="passkey-name">Name of the new passkey</label>
<input id="passkey-name" name="name" type="text" maxlength="64" placeholder="e.g. Work laptop" autocomplete="off">
<p><button type="submit" class="primary">Add a passkey</button></p>
<p class="note" role="status" data-passkey-status></p>
</form>
<noscript><p class="note">Adding a passkey needs JavaScript.</p></noscript>`;
}

function totpSection(view: SecurityView): string {
  const state = view.factors.totp;
  if (state === 'on') {
    return `<h2>Authenticator app</h2>
<p class="ok" role="status">An authenticator app is set up: after your password, you enter the code it shows.</p>
<form method="post" action="/console/security/totp/remove" class="inline">${csrfField(view.csrf)}<button type="submit" class="danger">Remove the authenticator app</button></form>`;
  }
  if (state === 'pending' && view.pendingTotp) {
    return `<h2>Authenticator app</h2>
<div class="card">
<p>Add this account to your authenticator app: open the link on the device that has the app, or type the secret into it (time-based, 6 digits, every 30 seconds).</p>
<p><a href="${e(view.pendingTotp.uri)}">Open in your authenticator app</a></p>
<p class="secret">Secret: <code id="totp-secret">${e(view.pendingTotp.secret)}</code> <button type="button" class="secondary" data-copy="totp-secret">Copy</button> <span id="totp-secret-status" role="status" class="note"></span></p>
<form method="post" action="/console/security/totp/confirm">
${csrfField(view.csrf)}
<label for="totp-code">Code the app shows now</label>
<input id="totp-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*" required>
<p><button type="submit" class="primary">Confirm</button></p>
</form>
</div>`;
  }
  return `<h2>Authenticator app</h2>
<p class="muted">An app such as Google Authenticator, Microsoft Authenticator or 1Password shows a new 6-digit code every 30 seconds.</p>
<form method="post" action="/console/security/totp" class="inline">${csrfField(view.csrf)}<button type="submit" class="primary">Set up an authenticator app</button></form>`;
}

function recoverySection(view: SecurityView): string {
  const shown = view.codes && view.codes.length > 0
    ? `<div class="card" role="status"><p><strong>Your new recovery codes.</strong> They are shown only now: keep them somewhere safe. Each works once, in place of a code or a passkey.</p>
<pre id="recovery-codes">${view.codes.map(e).join('\n')}</pre>
<p><button type="button" class="secondary" data-copy="recovery-codes">Copy</button> <span id="recovery-codes-status" role="status" class="note"></span></p></div>`
    : '';
  return `<h2>Recovery codes</h2>
${shown}<p class="muted">${e(view.factors.recoveryCodesLeft)} unused recovery code(s). Making new ones ends the old ones.</p>
<form method="post" action="/console/security/recovery-codes" class="inline">${csrfField(view.csrf)}<button type="submit" class="secondary">Make new recovery codes</button></form>`;
}

export function securityBody(view: SecurityView): string {
  const none = view.factors.passkeys.length === 0 && view.factors.totp !== 'on';
  const required = view.teamRequires && none ? '<div class="alert" role="alert">Your team requires a second factor for its admins: add a passkey or set up an authenticator app before anything else.</div>' : '';
  return `${view.message ? `<p class="ok" role="status">${e(view.message)}</p>` : ''}${view.error ? `<div class="alert" role="alert">${e(view.error)}</div>` : ''}${required}
${passkeysSection(view)}
${totpSection(view)}
${recoverySection(view)}
${PASSKEY_SCRIPT}`;
}

/** The Settings page's section: whether the team requires a second factor of its admins. */
export function requirementSection(csrf: string, required: boolean): string {
  return `<h2>Second factor</h2>
<form method="post" action="/console/settings/second-factor" class="card">
${csrfField(csrf)}
<label class="check"><input type="checkbox" name="required" value="1"${required ? ' checked' : ''}> Require a passkey or an authenticator app of every admin of this team</label>
<p class="note">An admin without one is sent to set one up when they next sign in. Turn this on after setting one up yourself (Security).</p>
<p><button type="submit" class="primary">Apply the second-factor rule</button></p>
</form>`;
}
