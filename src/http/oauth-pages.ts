/**
 * The authorization endpoint's pages (RFC 6749 3.1 and 4.1; RFC 9700 4.11, 4.12, 4.16):
 * GET /oauth/authorize shows the sign-in page, or the consent page once signed in; POST
 * /oauth/authorize signs in; POST /oauth/authorize/decision approves (a code) or denies
 * (access_denied) by a 303 redirect to the registered URI; POST /oauth/signout ends the session.
 * Every form carries a CSRF token; every page is sent with frame-ancestors 'none', X-Frame-Options
 * DENY, Referrer-Policy no-referrer and no-store; no CORS headers are ever added. Failures are
 * HTML pages, and a redirect happens only to a URI the client registered. The session is
 * server-side (sessions.ts: the cookie holds only its random id); sign-in names are per team, so a
 * name whose password is right in several teams gets the form again with a team choice
 * (accounts.ts). After the password, the second-factor rule (oauth/factors.ts): an admin with a
 * factor passes it on POST /oauth/authorize/verify (a code) or /oauth/authorize/passkey, behind
 * a pending sign-in (second-factor.ts); an admin whose team requires a factor they lack is refused
 * and told to set one up in the console. A passkey also signs in alone (POST
 * /oauth/authorize/passkey, options from /oauth/authorize/passkey/options), for the client's team
 * only. Cookies, CSRF, headers, the error page and the session are page-shell.ts's; the
 * handlers here check the request (oauth/authorize.ts), call one domain function, and reply.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { signIn, WRONG_CREDENTIALS } from '../oauth/accounts.ts';
import type { SignInResult } from '../oauth/accounts.ts';
import { checkAuthorizationRequest, issueCode, redirectTo, userMayAuthorize } from '../oauth/authorize.ts';
import type { AuthorizationRequest } from '../oauth/authorize.ts';
import type { OAuthContext } from '../oauth/context.ts';
import { OAuthError } from '../oauth/errors.ts';
import { consentPage, errorPage, signInPage, STYLESHEET, verifyPage } from '../oauth/views.ts';
import { PASSKEY_JS } from '../console/passkey-script.ts';
import { factorsOf, FactorError, passCode, secondFactorStep, TOTP_SECRETS } from '../oauth/factors.ts';
import type { FactorContext } from '../oauth/factors.ts';
import { passkeySignIn, relyingPartyOf, signInOptions } from '../oauth/passkeys.ts';
import type { RelyingParty } from '../oauth/passkeys.ts';
import { factorCookies, sendOptions } from './second-factor.ts';
import type { FactorCookies } from './second-factor.ts';
import type { SignedIn } from '../sessions.ts';
import type { KeyStore } from '../keys/store.ts';
import { unstorableText } from '../text.ts';
import { pageShell } from './page-shell.ts';
import type { PageFailure, PageShell } from './page-shell.ts';

export interface PagesOptions {
  readonly context: OAuthContext;
  /** The key store whose `cookie` keys sign the session and CSRF cookies (the same on every instance). */
  readonly keys: KeyStore;
}

type Form = Record<string, unknown>;

/** The session cookie of these pages; its value is a server-side session id (sessions.ts). */
export const SESSION_COOKIE = 'rollcall_session';

/** What the handlers share: the OAuth context and the page shell. */
interface Pages {
  readonly ctx: OAuthContext;
  readonly shell: PageShell;
  readonly factors: FactorContext;
  readonly rp: RelyingParty;
  readonly cookies: FactorCookies;
}

const authorizeUrl = (params: Readonly<Record<string, string>>): string => `/oauth/authorize?${new URLSearchParams(params).toString()}`;

/** The authorization request's parameters inside a form body (everything but the form's own fields). */
function requestFields(body: unknown): Form {
  const fields: Form = { ...((body ?? {}) as Form) };
  for (const own of ['_csrf', 'username', 'password', 'decision', 'team', 'code', 'credential', 'step']) delete fields[own];
  return fields;
}

const text = (form: unknown, name: string): string => {
  const value = (form as Form | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

/** The error page of the authorization pages, for each failure the shell names. */
function failurePage(failure: PageFailure): string {
  if (failure.kind === 'csrf') return errorPage('This form has expired', 'The page was open too long or came from another site. Go back to the application and start again.');
  if (failure.kind === 'throttled') return errorPage('Too many attempts', failure.message);
  return errorPage(failure.status < 500 ? 'Something is wrong with this request' : 'Something went wrong', failure.message);
}

export async function oauthPages(app: FastifyInstance, options: PagesOptions): Promise<void> {
  const ctx = options.context;
  const shell = await pageShell(app, {
    sessions: ctx,
    keys: options.keys,
    baseUrl: ctx.issuer,
    path: '/oauth',
    sessionCookie: SESSION_COOKIE,
    csrfCookie: 'rollcall_csrf',
    sessionKind: 'oauth',
    scriptsAndOwnForms: false,
    ownScripts: true,
    place: 'on the authorization pages',
    errorPage: (_request, _reply, failure) => failurePage(failure),
  });
  const pages: Pages = {
    ctx,
    shell,
    factors: { storage: ctx.storage, clock: ctx.clock, box: options.keys.box(TOTP_SECRETS), limits: ctx.limits },
    rp: relyingPartyOf(ctx.issuer),
    cookies: factorCookies({ sessions: ctx, kind: 'oauth', path: '/oauth', pendingCookie: 'rollcall_pending', challengeCookie: 'rollcall_webauthn', secure: ctx.issuer.startsWith('https:') }),
  };

  // Text the database cannot store is refused before any lookup (see text.ts).
  app.addHook('preHandler', async (request, reply) => {
    if (unstorableText(request.query) !== undefined || unstorableText(request.body) !== undefined) {
      return shell.html(reply, 400, errorPage('This sign-in link is not valid', 'The link holds characters that are not valid text.'));
    }
  });

  shell.asset('/oauth/assets/rollcall.css', 'text/css; charset=utf-8', STYLESHEET);
  shell.asset('/oauth/assets/passkeys.js', 'text/javascript; charset=utf-8', PASSKEY_JS);
  app.get('/oauth/authorize', async (request, reply) => authorizePage(pages, request, reply));
  // Sign-in posts are counted per source address before the body or the CSRF token is read.
  const signinPerAddress = async (request: FastifyRequest) => ctx.limits.attempt('signinPerAddress', request.ip);
  app.post('/oauth/authorize', { onRequest: signinPerAddress, preHandler: app.csrfProtection }, async (request, reply) => signInPost(pages, request, reply));
  app.post('/oauth/authorize/verify', { onRequest: signinPerAddress, preHandler: app.csrfProtection }, async (request, reply) => verifyPost(pages, request, reply));
  app.post('/oauth/authorize/passkey/options', { onRequest: signinPerAddress, preHandler: app.csrfProtection }, async (request, reply) => {
    const pending = text(request.body, 'step') === 'second' ? await pages.cookies.resumePending(request) : undefined;
    const ceremony = await signInOptions(pages.factors, pages.rp, pending?.user);
    pages.cookies.setChallenge(reply, ceremony.challenge);
    return sendOptions(reply, ceremony.options);
  });
  app.post('/oauth/authorize/passkey', { onRequest: signinPerAddress, preHandler: app.csrfProtection }, async (request, reply) => passkeyPost(pages, request, reply));
  app.post('/oauth/authorize/decision', { preHandler: app.csrfProtection }, async (request, reply) => decisionPost(pages, request, reply));
  app.post('/oauth/signout', { preHandler: app.csrfProtection }, async (request, reply) => {
    await shell.end(request, reply);
    const params = Object.fromEntries(Object.entries(requestFields(request.body)).filter((e): e is [string, string] => typeof e[1] === 'string'));
    return shell.seeOther(reply, authorizeUrl(params));
  });
}

/** Runs the request checks; answers the error page or the error redirect itself. */
async function checked({ ctx, shell }: Pages, raw: Form, reply: FastifyReply): Promise<AuthorizationRequest | undefined> {
  const check = await checkAuthorizationRequest(ctx.storage.db, raw);
  if (check.kind === 'page') {
    shell.html(reply, check.status, errorPage(check.title, check.message));
    return undefined;
  }
  if (check.kind === 'redirect') {
    shell.seeOther(reply, redirectTo(check.redirectUri, ctx.issuer, { error: check.error, error_description: check.description, state: check.state }));
    return undefined;
  }
  return check.request;
}

function showConsent({ shell }: Pages, reply: FastifyReply, request: AuthorizationRequest, { user, team }: SignedIn): FastifyReply {
  const page = consentPage({ clientName: request.client.name, teamName: team.name, userName: user.user_name, scope: request.scope, params: request.params, csrf: reply.generateCsrf() });
  return shell.html(reply, 200, page);
}

interface SignInShown {
  readonly status?: number;
  readonly error?: string;
  readonly username?: string;
  readonly teams?: readonly string[];
  readonly team?: string;
}

function showSignIn({ shell }: Pages, reply: FastifyReply, request: AuthorizationRequest, shown: SignInShown = {}): FastifyReply {
  const { status = 200, ...rest } = shown;
  // A client bound to a team decides the team; any other may be told which one.
  const page = signInPage({ clientName: request.client.name, params: request.params, csrf: reply.generateCsrf(), askTeam: request.client.team_id === null, ...rest });
  return shell.html(reply, status, page);
}

/** GET /oauth/authorize: the consent page to a signed-in user the client may serve, else the sign-in page. */
async function authorizePage(pages: Pages, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const authorization = await checked(pages, request.query as Form, reply);
  if (!authorization) return reply;
  const signed = await pages.shell.resume(request);
  if (signed && userMayAuthorize(authorization, signed.user)) return showConsent(pages, reply, authorization, signed);
  return showSignIn(pages, reply, authorization);
}

/** POST /oauth/authorize: signs in and goes back to the authorization request (now the consent page). */
async function signInPost(pages: Pages, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const authorization = await checked(pages, requestFields(request.body), reply);
  if (!authorization) return reply;
  const username = text(request.body, 'username');
  const team = text(request.body, 'team') || undefined;
  let result: SignInResult;
  try {
    // A client bound to a team decides the team: no other team's passwords are checked.
    result = await signIn(pages.ctx, username, text(request.body, 'password'), {
      clientId: authorization.client.id,
      requestId: request.id,
      method: 'form',
      address: request.ip,
      clientTeamId: authorization.client.team_id,
      ...(team !== undefined ? { teamName: team } : {}),
    });
  } catch (error) {
    if (error instanceof OAuthError && error.error === 'invalid_grant') return showSignIn(pages, reply, authorization, { status: 401, error: error.message, username, ...(team !== undefined ? { team } : {}) });
    throw error;
  }
  if (result.kind === 'choose') return showSignIn(pages, reply, authorization, { username, teams: result.teams });
  // Never true (signIn only looks in the client's team); kept so a session never serves another team.
  if (!userMayAuthorize(authorization, result.user)) return showSignIn(pages, reply, authorization, { status: 401, error: WRONG_CREDENTIALS, username });
  const step = await secondFactorStep(pages.ctx.storage.db, result.user);
  if (step === 'enroll') {
    return showSignIn(pages, reply, authorization, { status: 403, error: 'Your team requires a second factor for its admins. Set up a passkey or an authenticator app in the console (Security), then sign in here again.', username });
  }
  if (step === 'verify') {
    await pages.cookies.openPending(reply, result.user);
    return showVerify(pages, reply, authorization, result.user);
  }
  await pages.shell.open(reply, result.user);
  return pages.shell.seeOther(reply, authorizeUrl(authorization.params));
}

async function showVerify(pages: Pages, reply: FastifyReply, request: AuthorizationRequest, user: SignedIn['user'], error?: string, status = 200): Promise<FastifyReply> {
  const has = await factorsOf(pages.ctx.storage.db, user.id);
  const page = verifyPage({ clientName: request.client.name, userName: user.user_name, params: request.params, csrf: reply.generateCsrf(), totp: has.totp === 'on', passkeys: has.passkeys.length > 0, ...(error ? { error } : {}) });
  return pages.shell.html(reply, status, page);
}

/** POST /oauth/authorize/verify: the second step with a code; then back to the authorization request. */
async function verifyPost(pages: Pages, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const authorization = await checked(pages, requestFields(request.body), reply);
  if (!authorization) return reply;
  const pending = await pages.cookies.resumePending(request);
  if (!pending || !userMayAuthorize(authorization, pending.user)) return showSignIn(pages, reply, authorization, { status: 401, error: 'Your sign-in took too long; sign in again.' });
  const passed = await passCode(pages.factors, pending.user, text(request.body, 'code'), { address: request.ip, requestId: request.id, clientId: authorization.client.id });
  if (!passed) return showVerify(pages, reply, authorization, pending.user, 'That code is not right, or was used already.', 401);
  await pages.cookies.endPending(request, reply);
  await pages.shell.open(reply, pending.user);
  return pages.shell.seeOther(reply, authorizeUrl(authorization.params));
}

/** POST /oauth/authorize/passkey: a passkey alone, or as the second step; only an admin of the client's team. */
async function passkeyPost(pages: Pages, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const authorization = await checked(pages, requestFields(request.body), reply);
  if (!authorization) return reply;
  const challenge = pages.cookies.takeChallenge(request, reply);
  try {
    const user = await passkeySignIn(pages.factors, pages.rp, { challenge, response: text(request.body, 'credential'), requestId: request.id, clientId: authorization.client.id, clientTeamId: authorization.client.team_id });
    await pages.cookies.endPending(request, reply);
    await pages.shell.open(reply, user);
    return pages.shell.seeOther(reply, authorizeUrl(authorization.params));
  } catch (error) {
    if (error instanceof FactorError) return showSignIn(pages, reply, authorization, { status: error.status, error: error.message });
    throw error;
  }
}

/** POST /oauth/authorize/decision: a code (approve) or access_denied, by a redirect to the registered URI. */
async function decisionPost(pages: Pages, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const { ctx, shell } = pages;
  const authorization = await checked(pages, requestFields(request.body), reply);
  if (!authorization) return reply;
  const signed = await shell.resume(request);
  if (!signed || !userMayAuthorize(authorization, signed.user)) return showSignIn(pages, reply, authorization, { status: 401, error: 'Your session has ended; sign in again.' });
  const state = authorization.state;
  if ((request.body as Form).decision !== 'approve') {
    return shell.seeOther(reply, redirectTo(authorization.redirectUri, ctx.issuer, { error: 'access_denied', error_description: 'The user denied the request', state }));
  }
  const code = await issueCode(ctx.storage.db, ctx.clock, authorization, signed.user);
  return shell.seeOther(reply, redirectTo(authorization.redirectUri, ctx.issuer, { code, state }));
}
