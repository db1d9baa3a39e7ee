/**
 * The console's Admins page (issue 30, item 3) as server-rendered HTML: the team's admins with
 * their actions (a password link, remove, reset second factors), the form that adds one, a password link shown once,
 * the confirmation pages of removing an admin and revoking an application's tokens (each says
 * what will happen and how much), the applications holding tokens for the team, and the page a
 * password link opens (outside the signed-in frame: its reader has no session). Every value is
 * escaped; tables are dataTable's; every form carries the CSRF token.
 */
import escapeHtml from 'escape-html';
import type { AdminListed, ApplicationListed, LinkTarget, PasswordLink } from './admins.ts';
import { PASSWORD_LINK_HOURS, PASSWORD_PATH } from './admins.ts';
import { formatCount, timeHtml } from './format.ts';
import { signedOutPage } from './document.ts';
import { dataTable } from './table.ts';

const e = (value: unknown): string => escapeHtml(value === undefined || value === null ? '' : String(value));
const csrfField = (csrf: string): string => `<input type="hidden" name="_csrf" value="${e(csrf)}">`;
const plural = (n: number, one: string, many: string): string => `${formatCount(n)} ${n === 1 ? one : many}`;

export const ADMINS_PATH = '/console/admins';
export const adminPath = (id: string): string => `${ADMINS_PATH}/${encodeURIComponent(id)}`;
export const applicationPath = (id: string): string => `${ADMINS_PATH}/applications/${encodeURIComponent(id)}`;

/** A password link just made, shown this once with a copy button. */
export interface LinkShown extends PasswordLink {
  /** Why it was made: an admin added (a new user or an existing one), or a link asked for. */
  readonly reason: 'created' | 'promoted' | 'link';
}

function linkCard(shown: LinkShown, now: Date): string {
  const title =
    shown.reason === 'created' ? `Admin ${e(shown.userName)} created` : shown.reason === 'promoted' ? `${e(shown.userName)} is now an admin` : `Password link for ${e(shown.userName)}`;
  return `<div class="card" role="status" aria-labelledby="link-title">
<h2 id="link-title">${title}</h2>
<p>Send this link to <strong dir="auto">${e(shown.userName)}</strong> over a channel you trust: it sets their password once, and expires ${timeHtml(shown.expiresAt, now)} (${PASSWORD_LINK_HOURS} hours). It is shown only now; a new link replaces it.</p>
<p class="secret"><code id="password-link" class="wrap">${e(shown.url)}</code> <button type="button" class="secondary" data-copy="password-link">Copy link</button> <span id="password-link-status" aria-live="polite"></span></p>
</div>`;
}

const notice = (message?: string, error?: string): string =>
  `${message ? `<p class="ok" role="status">${e(message)}</p>` : ''}${error ? `<div class="alert" role="alert">${e(error)}</div>` : ''}`;

function adminRow(csrf: string, a: AdminListed, now: Date): string[] {
  const status = [a.active ? 'active' : '<span class="status-4">deactivated</span>', a.hasPassword ? '' : '<span class="status-4">no password yet</span>'].filter(Boolean).join(', ');
  const actions = a.you
    ? '<span class="muted">you (change your password in Settings)</span>'
    : `<form method="post" action="${e(`${adminPath(a.id)}/password-link`)}" class="inline">${csrfField(csrf)}<button type="submit" class="secondary" aria-label="Make a password link for ${e(a.userName)}">Password link</button></form>
<a href="${e(`${adminPath(a.id)}/remove`)}" aria-label="Remove ${e(a.userName)} as admin">Remove…</a>
<a href="${e(`${adminPath(a.id)}/reset-factors`)}" aria-label="Reset second factors of ${e(a.userName)}">Reset second factors…</a>`;
  return [`<span class="wrap" dir="auto">${e(a.userName)}</span>${a.you ? ' <span class="muted">(you)</span>' : ''}`, status, timeHtml(a.createdAt, now), actions];
}

function applicationRow(app: ApplicationListed): string[] {
  return [
    `<span class="wrap" dir="auto">${e(app.name)}</span>`,
    `<code class="wrap">${e(app.id)}</code>`,
    app.bound ? 'provisioning client of this team' : 'application authorized by users of this team',
    e(formatCount(app.liveTokens)),
    `<a href="${e(`${applicationPath(app.id)}/revoke`)}" aria-label="Revoke tokens of ${e(app.name)}">Revoke tokens…</a>`,
  ];
}

export interface AdminsPage {
  readonly admins: readonly AdminListed[];
  readonly applications: readonly ApplicationListed[];
  readonly now: Date;
  readonly shown?: LinkShown;
  readonly message?: string;
  readonly error?: string;
  /** The add form's value, kept when it was refused. */
  readonly userName?: string;
}

export function adminsBody(csrf: string, p: AdminsPage): string {
  return `${notice(p.message, p.error)}${p.shown ? linkCard(p.shown, p.now) : ''}
<p>Admins are the users of this team whose userType is <code>admin</code>: they sign in to this console and authorize applications. ${e(plural(p.admins.length, 'admin', 'admins'))}.</p>
<h2>Admins</h2>
${dataTable({ headers: ['User name', 'Status', 'Added', 'Actions'], rows: p.admins.map((a) => adminRow(csrf, a, p.now)), caption: 'Admins of this team', empty: 'No admins.' })}
<h2>Add an admin</h2>
<form method="post" action="${ADMINS_PATH}" class="card">
${csrfField(csrf)}
<label for="admin-user-name">User name</label>
<input id="admin-user-name" name="userName" type="text" required maxlength="256" autocapitalize="none" spellcheck="false" dir="auto" value="${e(p.userName)}" aria-describedby="admin-user-name-note">
<p class="note" id="admin-user-name-note">An existing user of this team becomes an admin (userType admin); any other name creates a new user. Either way you get a one-time link for them to set their password (at least 12 characters).</p>
<p><button type="submit" class="primary">Add admin</button></p>
</form>
<h2>Applications</h2>
<p class="muted">OAuth clients holding live access or refresh tokens for this team. Revoking ends every one of them on every server at once; the application must be authorized again.</p>
${dataTable({ headers: ['Name', 'client_id', 'Kind', 'Live tokens', 'Actions'], rows: p.applications.map(applicationRow), caption: 'Applications with live tokens', empty: 'No application holds live tokens for this team.' })}`;
}

/** The step before an admin is removed: what it does, and the form that does it. */
export function removeAdminConfirmBody(csrf: string, admin: { id: string; userName: string }, othersWhoSignIn: number): string {
  const last = othersWhoSignIn < 1;
  return `<p><a href="${ADMINS_PATH}">All admins</a></p>
<div class="card" role="alert">
<p>Remove <strong dir="auto">${e(admin.userName)}</strong> as an admin? They stay a user of this team, without the admin userType: they are signed out of the console everywhere, every token issued for them ends, and their password links stop working. ${last ? '' : `${e(plural(othersWhoSignIn, 'other admin', 'other admins'))} can still sign in.`}</p>
${
  last
    ? `<p class="status-4">They are the last admin who can sign in: add another admin first.</p>`
    : `<form method="post" action="${e(`${adminPath(admin.id)}/remove`)}" class="inline">${csrfField(csrf)}<button type="submit" class="danger">Remove admin</button></form> `
}<a href="${ADMINS_PATH}">Cancel</a>
</div>`;
}

/** The step before an application's tokens are revoked, with how many end. */
export function revokeApplicationConfirmBody(csrf: string, app: { id: string; name: string; tokens: number; users: number }): string {
  return `<p><a href="${ADMINS_PATH}">Admins and applications</a></p>
<div class="card" role="alert">
<p>Revoke every token of <strong dir="auto">${e(app.name)}</strong> (<code>${e(app.id)}</code>) for this team? This ends <strong>${e(plural(app.tokens, 'live token', 'live tokens'))}</strong> (access and refresh)${app.users > 0 ? `, issued for ${e(plural(app.users, 'user', 'users'))}` : ''}, on every server at once. Its requests are refused until it is authorized again or gets new tokens; its tokens for other teams keep working.</p>
<form method="post" action="${e(`${applicationPath(app.id)}/revoke`)}" class="inline">${csrfField(csrf)}<button type="submit" class="danger">Revoke ${e(plural(app.tokens, 'token', 'tokens'))}</button></form>
<a href="${ADMINS_PATH}">Cancel</a>
</div>`;
}

/** The page a password link opens: a form for the new password, or why the link does not work, or done. */
export function passwordLinkPage(csrf: string, token: string, target: LinkTarget | undefined, state: { error?: string; gone?: string; done?: boolean } = {}): string {
  let body: string;
  if (state.done) {
    body = `<p class="ok" role="status">Your password is set. <a href="/console/sign-in">Sign in</a> with it.</p>`;
  } else if (!target) {
    body = `<div class="alert" role="alert">${e(state.gone ?? 'This link does not work.')}</div><p><a href="/console/sign-in">Sign in</a></p>`;
  } else {
    body = `<p>Set the password of <strong dir="auto">${e(target.userName)}</strong>, admin of <strong dir="auto">${e(target.team.name)}</strong>. The link works once.</p>
${state.error ? `<div class="alert" role="alert">${e(state.error)}</div>` : ''}
<form method="post" action="${PASSWORD_PATH}">
${csrfField(csrf)}
<input type="hidden" name="token" value="${e(token)}">
<input type="text" name="username" autocomplete="username" value="${e(target.userName)}" hidden readonly>
<label for="new-password">New password (at least 12 characters)</label>
<input id="new-password" name="password" type="password" autocomplete="new-password" required minlength="12" autofocus>
<label for="repeat-password">The same password again</label>
<input id="repeat-password" name="repeat" type="password" autocomplete="new-password" required minlength="12">
<p><button type="submit" class="primary">Set password</button></p>
</form>`;
  }
  return signedOutPage({ title: 'Set your password', heading: 'Set your password', body });
}

/** The step before another admin's second factors are reset: what is removed, what follows, and the form that does it. */
export function resetFactorsConfirmBody(csrf: string, admin: { id: string; userName: string }, removes: string, required: boolean): string {
  return `<p><a href="${ADMINS_PATH}">All admins</a></p>
<div class="card" role="alert">
<p>Reset the second factors of <strong dir="auto">${e(admin.userName)}</strong>? This removes <strong>${e(removes)}</strong>, and signs them out of the console and the authorization pages everywhere. Use it when they lost every factor and every recovery code.</p>
<p>They sign in again with their password alone${required ? ', and, since this team requires a second factor, are sent to set one up before anything else' : ''}. The reset is recorded in the audit log.</p>
<form method="post" action="${e(`${adminPath(admin.id)}/reset-factors`)}" class="inline">${csrfField(csrf)}<button type="submit" class="danger">Reset second factors</button></form>
<a href="${ADMINS_PATH}">Cancel</a>
</div>`;
}
