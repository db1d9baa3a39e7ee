/**
 * The authorization server's pages (sign-in, consent, error) as server-rendered HTML, and their
 * one stylesheet. Every interpolated value goes through escape-html; forms carry the CSRF token
 * and the authorization request as hidden fields. The only script is Rollcall's passkey script
 * (console/passkey-script.ts), served from this site; every page works without it.
 */
import escapeHtml from 'escape-html';
import type { Scope } from './scopes.ts';

const SCOPE_TEXT: Record<Scope, string> = {
  read: 'Read the users and groups of the team',
  write: 'Create, change, deactivate and delete users and groups of the team',
  ssf: 'Manage the team\'s Shared Signals streams and receive its security events (deactivations, identifier and credential changes)',
};

export function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)} · Rollcall</title>
<link rel="stylesheet" href="/oauth/assets/rollcall.css">
<script src="/oauth/assets/passkeys.js" defer></script>
</head>
<body>
<main class="card" aria-labelledby="title">
<p class="brand"><span class="mark" aria-hidden="true">R</span>Rollcall</p>
${body}
</main>
<footer><p class="fineprint">Rollcall identity provisioning</p></footer>
</body>
</html>
`;
}

const hidden = (fields: Readonly<Record<string, string>>): string =>
  Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');

export interface SignInView {
  readonly clientName: string;
  readonly params: Readonly<Record<string, string>>;
  readonly csrf: string;
  readonly username?: string;
  readonly error?: string;
  /**
   * The teams whose password the person just proved (the name signs in to several): the form
   * asks which one, and for the password again (nothing of the first post is kept).
   */
  readonly teams?: readonly string[];
  /**
   * The client serves any team: the form offers an optional team field, so that a name more
   * teams hold than a sign-in checks (accounts.ts LOGIN_CANDIDATES) still reaches its own team.
   */
  readonly askTeam?: boolean;
  /** The team typed into that field, shown again after a failure. */
  readonly team?: string;
}

function teamChoice(teams: readonly string[] | undefined, askTeam: boolean, team: string | undefined): string {
  if (!teams || teams.length === 0) {
    if (!askTeam) return '';
    return `<label for="team">Team <span class="hint">(optional; only if you belong to several teams with one sign-in name)</span></label>
<input id="team" name="team" type="text" autocomplete="organization" autocapitalize="none" spellcheck="false" value="${escapeHtml(team ?? '')}">
`;
  }
  const options = teams.map((t) => `<option value="${escapeHtml(t)}">${escapeHtml(t)}</option>`).join('\n');
  return `<label for="team">Team</label>
<select id="team" name="team" required>
${options}
</select>
`;
}

export function signInPage(view: SignInView): string {
  return layout(
    'Sign in',
    `<h1 id="title">Sign in</h1>
<p class="lead"><strong>${escapeHtml(view.clientName)}</strong> is asking for access to your team's directory. Sign in to continue.</p>
${view.error ? `<div class="alert" role="alert">${escapeHtml(view.error)}</div>` : ''}
${view.teams && view.teams.length > 0 ? '<p class="note">This user name signs in to several teams. Choose the team, and enter the password again.</p>' : ''}
<form method="post" action="/oauth/authorize" novalidate>
${hidden({ ...view.params, _csrf: view.csrf })}
${teamChoice(view.teams, view.askTeam === true, view.team)}<label for="username">User name</label>
<input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required value="${escapeHtml(view.username ?? '')}"${view.username ? '' : ' autofocus'}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${view.username ? ' autofocus' : ''}>
<button type="submit" class="primary">Sign in</button>
</form>
${passkeyForm(view.params, view.csrf, 'Use a passkey', false)}`,
  );
}

/** A passkey button (shown by the passkey script where the browser has WebAuthn): the first factor, or the second step. */
function passkeyForm(params: Readonly<Record<string, string>>, csrf: string, label: string, second: boolean): string {
  return `<form method="post" action="/oauth/authorize/passkey" data-passkey="get" data-options="/oauth/authorize/passkey/options" class="passkey" hidden>
${hidden({ ...params, _csrf: csrf, ...(second ? { step: 'second' } : {}), credential: '' })}
<button type="submit" class="secondary">${escapeHtml(label)}</button>
<p class="note" role="status" data-passkey-status></p>
</form>`;
}

export interface VerifyView {
  readonly clientName: string;
  readonly userName: string;
  readonly params: Readonly<Record<string, string>>;
  readonly csrf: string;
  readonly totp: boolean;
  readonly passkeys: boolean;
  readonly error?: string;
}

/** The second step of a sign-in: a code from the authenticator app or a recovery code, or a passkey. */
export function verifyPage(view: VerifyView): string {
  return layout(
    'Confirm it is you',
    `<h1 id="title">Confirm it is you</h1>
<p class="lead">Signing in as <strong>${escapeHtml(view.userName)}</strong> for <strong>${escapeHtml(view.clientName)}</strong>. Your account has a second factor.</p>
${view.error ? `<div class="alert" role="alert">${escapeHtml(view.error)}</div>` : ''}
${view.passkeys ? passkeyForm(view.params, view.csrf, 'Use your passkey', true) : ''}
<form method="post" action="/oauth/authorize/verify" novalidate>
${hidden({ ...view.params, _csrf: view.csrf })}
<label for="code">${view.totp ? 'Code from your authenticator app, or a recovery code' : 'A recovery code'}</label>
<input id="code" name="code" type="text" inputmode="${view.totp ? 'numeric' : 'text'}" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" required autofocus>
<button type="submit" class="primary">Continue</button>
</form>`,
  );
}

export interface ConsentView {
  readonly clientName: string;
  readonly teamName: string;
  readonly userName: string;
  readonly scope: readonly Scope[];
  readonly params: Readonly<Record<string, string>>;
  readonly csrf: string;
}

export function consentPage(view: ConsentView): string {
  const scopes = view.scope.map((s) => `<li><span class="scope">${escapeHtml(s)}</span> ${escapeHtml(SCOPE_TEXT[s])}</li>`).join('\n');
  return layout(
    'Allow access',
    `<h1 id="title">Allow ${escapeHtml(view.clientName)} to access ${escapeHtml(view.teamName)}?</h1>
<p class="lead">Signed in as <strong>${escapeHtml(view.userName)}</strong> of the team <strong>${escapeHtml(view.teamName)}</strong>.</p>
<p>${escapeHtml(view.clientName)} will be able to:</p>
<ul class="scopes">
${scopes}
</ul>
<p class="note">An administrator can end this access at any time by revoking the application's tokens.</p>
<form method="post" action="/oauth/authorize/decision" class="actions">
${hidden({ ...view.params, _csrf: view.csrf })}
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
<button type="submit" name="decision" value="approve" class="primary">Allow</button>
</form>
<form method="post" action="/oauth/signout" class="switch">
${hidden({ ...view.params, _csrf: view.csrf })}
<button type="submit" class="link">Not ${escapeHtml(view.userName)}? Sign in as someone else</button>
</form>`,
  );
}

export function errorPage(title: string, message: string): string {
  return layout(
    title,
    `<h1 id="title">${escapeHtml(title)}</h1>
<div class="alert" role="alert">${escapeHtml(message)}</div>
<p class="note">Nothing was shared with the application. You can close this window, or go back to the application and start again.</p>`,
  );
}

export const STYLESHEET = `:root {
  color-scheme: light dark;
  --bg: #f4f5f7; --card: #ffffff; --text: #1d2330; --muted: #5b6474; --line: #d9dde5;
  --accent: #2f5bd3; --accent-text: #ffffff; --danger-bg: #fdecec; --danger: #9b1c1c; --focus: #f0b429;
}
@media (prefers-color-scheme: dark) {
  :root { --bg: #12151c; --card: #1b2029; --text: #e8ebf1; --muted: #a3abba; --line: #2f3645;
    --accent: #6d8ff0; --accent-text: #0b0e14; --danger-bg: #3a1d1f; --danger: #ffb4b4; }
}
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; display: flex; flex-direction: column; align-items: center; justify-content: center;
  padding: 2rem 1rem; background: var(--bg); color: var(--text);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
.card { width: 100%; max-width: 26rem; background: var(--card); border: 1px solid var(--line); border-radius: 12px;
  padding: 2rem; box-shadow: 0 1px 2px rgba(0,0,0,.04), 0 8px 24px rgba(0,0,0,.06); }
.brand { display: flex; align-items: center; gap: .5rem; margin: 0 0 1.5rem; font-weight: 600; color: var(--muted); }
.mark { display: inline-grid; place-items: center; width: 1.75rem; height: 1.75rem; border-radius: 6px;
  background: var(--accent); color: var(--accent-text); font-weight: 700; }
h1 { font-size: 1.35rem; line-height: 1.3; margin: 0 0 .75rem; }
.lead { color: var(--muted); margin: 0 0 1.25rem; }
label { display: block; font-weight: 600; margin: 1rem 0 .35rem; }
input[type=text], input[type=password], select { width: 100%; padding: .65rem .75rem; font: inherit; color: var(--text);
  background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
button { font: inherit; cursor: pointer; border-radius: 8px; padding: .65rem 1.1rem; border: 1px solid transparent; }
button.primary { background: var(--accent); color: var(--accent-text); font-weight: 600; }
button.secondary { background: transparent; color: var(--text); border-color: var(--line); }
button.link { background: none; border: none; padding: 0; color: var(--accent); text-decoration: underline; }
form > button.primary { width: 100%; margin-top: 1.5rem; }
.actions { display: flex; gap: .75rem; margin-top: 1.5rem; }
form.actions > button { flex: 1; width: auto; margin: 0; }
.switch { margin-top: 1.25rem; font-size: .9rem; }
input:focus-visible, button:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.alert { background: var(--danger-bg); color: var(--danger); border-radius: 8px; padding: .75rem 1rem; margin: 0 0 1rem; }
.scopes { list-style: none; padding: 0; margin: .5rem 0 1rem; }
.scopes li { display: flex; gap: .75rem; align-items: baseline; margin: .5rem 0; }
.scope { flex: none; min-width: 3.8rem; padding: .05rem .4rem; border: 1px solid var(--line); border-radius: 4px; text-align: center; font-family: ui-monospace, SFMono-Regular, Menlo, monospace;
  font-size: .85rem; font-weight: 600; }
.note { color: var(--muted); font-size: .9rem; }
.hint { color: var(--muted); font-weight: 400; font-size: .9rem; }
.fineprint { color: var(--muted); font-size: .8rem; margin-top: 1.5rem; }
form.passkey { margin-top: 1rem; }
form.passkey > button { width: 100%; }
`;
