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
 * (accounts.ts). Cookies are signed with the key store's rotating `cookie` key.
 */
import cookie, { Signer } from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { signIn, WRONG_CREDENTIALS } from '../oauth/accounts.ts';
import { checkAuthorizationRequest, issueCode, redirectTo, userMayAuthorize } from '../oauth/authorize.ts';
import type { AuthorizationRequest } from '../oauth/authorize.ts';
import type { OAuthContext } from '../oauth/context.ts';
import { OAuthError } from '../oauth/errors.ts';
import { endSession, openSession, resumeSession, SESSION_TTL_SECONDS } from '../sessions.ts';
import { consentPage, errorPage, signInPage, STYLESHEET } from '../oauth/views.ts';
import { teamById } from '../storage/repos/teams.ts';
import type { KeyStore } from '../keys/store.ts';
import { unstorableText } from '../text.ts';
import type { UserRow } from '../storage/repos/users.ts';

export interface PagesOptions {
  readonly context: OAuthContext;
  /** The key store whose `cookie` keys sign the session and CSRF cookies (the same on every instance). */
  readonly keys: KeyStore;
}

type Form = Record<string, unknown>;

/** The session cookie of these pages; its value is a server-side session id (sessions.ts). */
export const SESSION_COOKIE = 'rollcall_session';
const SESSION_KIND = 'oauth';

function html(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').send(body);
}

/** A 303 (never 307: the browser must not re-POST the credentials, RFC 9700 4.12). */
const seeOther = (reply: FastifyReply, location: string): FastifyReply => reply.code(303).header('location', location).send();

const authorizeUrl = (params: Readonly<Record<string, string>>): string => `/oauth/authorize?${new URLSearchParams(params).toString()}`;

/** The authorization request's parameters inside a form body (everything but the form's own fields). */
function requestFields(body: unknown): Form {
  const fields: Form = { ...((body ?? {}) as Form) };
  for (const own of ['_csrf', 'username', 'password', 'decision', 'team']) delete fields[own];
  return fields;
}

export async function oauthPages(app: FastifyInstance, options: PagesOptions): Promise<void> {
  const ctx = options.context;
  const db = ctx.storage.db;
  const secure = ctx.issuer.startsWith('https:');
  const cookieOptions = { path: '/oauth', httpOnly: true, sameSite: 'lax' as const, secure, signed: true };

  await app.register(formbody, { bodyLimit: 16 * 1024 });
  // Cookies are signed with the current `cookie` key and verified with every live one, so a
  // rotation (rollcall keys rotate) leaves cookies signed just before it valid for one session
  // lifetime. The keys are re-read every REFRESH_SECONDS (keys/store.ts) before a page answers.
  const keys = options.keys;
  let signer: { version: number; signer: Signer } | undefined;
  const current = (): Signer => {
    if (signer?.version !== keys.version) signer = { version: keys.version, signer: new Signer([...keys.secrets('cookie')]) };
    return signer.signer;
  };
  app.addHook('onRequest', async () => keys.refreshIfStale());
  await app.register(cookie, { secret: { sign: (value: string) => current().sign(value), unsign: (value: string) => current().unsign(value) } });
  await app.register(csrf, { cookieKey: 'rollcall_csrf', cookieOpts: { ...cookieOptions, sameSite: 'strict' } });
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'"],
        baseUri: ["'none'"],
        frameAncestors: ["'none'"],
      },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    hsts: secure,
    crossOriginEmbedderPolicy: false,
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof OAuthError && error.status === 429) {
      reply.header('retry-after', error.headers['retry-after'] ?? '60');
      return html(reply, 429, errorPage('Too many attempts', error.message));
    }
    if (error.code === 'FST_CSRF_MISSING_SECRET' || error.code === 'FST_CSRF_INVALID_TOKEN') {
      return html(reply, 403, errorPage('This form has expired', 'The page was open too long or came from another site. Go back to the application and start again.'));
    }
    const status = error.statusCode;
    if (status !== undefined && status >= 400 && status < 500) return html(reply, status, errorPage('Something is wrong with this request', error.message));
    request.log.error({ err: error }, 'unhandled error on the authorization pages');
    return html(reply, 500, errorPage('Something went wrong', 'Rollcall could not complete the request. Try again in a moment.'));
  });

  // Text the database cannot store is refused before any lookup (see text.ts).
  app.addHook('preHandler', async (request, reply) => {
    if (unstorableText(request.query) !== undefined || unstorableText(request.body) !== undefined) {
      return html(reply, 400, errorPage('This sign-in link is not valid', 'The link holds characters that are not valid text.'));
    }
  });

  /** The session id in the (signature-checked) cookie, if any. */
  function sessionId(request: FastifyRequest): string | undefined {
    const raw = request.cookies[SESSION_COOKIE];
    if (!raw) return undefined;
    const unsigned = request.unsignCookie(raw);
    return unsigned.valid && unsigned.value !== null ? unsigned.value : undefined;
  }

  /** The signed-in user, if the session is live server-side (sessions.ts decides). */
  async function sessionUser(request: FastifyRequest): Promise<UserRow | undefined> {
    const id = sessionId(request);
    return id === undefined ? undefined : resumeSession(ctx, SESSION_KIND, id);
  }

  /** Runs the request checks; answers the error page or the error redirect itself. */
  async function checked(raw: Form, reply: FastifyReply): Promise<AuthorizationRequest | undefined> {
    const check = await checkAuthorizationRequest(db, raw);
    if (check.kind === 'page') {
      html(reply, check.status, errorPage(check.title, check.message));
      return undefined;
    }
    if (check.kind === 'redirect') {
      seeOther(reply, redirectTo(check.redirectUri, ctx.issuer, { error: check.error, error_description: check.description, state: check.state }));
      return undefined;
    }
    return check.request;
  }

  async function showConsent(reply: FastifyReply, request: AuthorizationRequest, user: UserRow): Promise<FastifyReply> {
    const team = await teamById(db, user.team_id);
    return html(
      reply,
      200,
      consentPage({
        clientName: request.client.name,
        teamName: team?.name ?? user.team_id,
        userName: user.user_name,
        scope: request.scope,
        params: request.params,
        csrf: reply.generateCsrf(),
      }),
    );
  }

  const showSignIn = (reply: FastifyReply, request: AuthorizationRequest, status = 200, error?: string, username?: string, teams?: readonly string[], team?: string): FastifyReply =>
    html(
      reply,
      status,
      signInPage({
        clientName: request.client.name,
        params: request.params,
        csrf: reply.generateCsrf(),
        // A client bound to a team decides the team; any other may be told which one.
        askTeam: request.client.team_id === null,
        ...(error !== undefined ? { error } : {}),
        ...(username !== undefined ? { username } : {}),
        ...(teams !== undefined ? { teams } : {}),
        ...(team !== undefined ? { team } : {}),
      }),
    );

  app.get('/oauth/assets/rollcall.css', async (_request, reply) =>
    reply.code(200).header('content-type', 'text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(STYLESHEET),
  );

  app.get('/oauth/authorize', async (request, reply) => {
    const authorization = await checked(request.query as Form, reply);
    if (!authorization) return reply;
    const user = await sessionUser(request);
    if (user && userMayAuthorize(authorization, user)) return showConsent(reply, authorization, user);
    return showSignIn(reply, authorization);
  });

  // Sign-in posts are counted per source address before the body or the CSRF token is read.
  const signinPerAddress = async (request: FastifyRequest) => ctx.limits.attempt('signinPerAddress', request.ip);

  app.post('/oauth/authorize', { onRequest: signinPerAddress, preHandler: app.csrfProtection }, async (request, reply) => {
    const authorization = await checked(requestFields(request.body), reply);
    if (!authorization) return reply;
    const body = request.body as Form;
    const username = typeof body.username === 'string' ? body.username : '';
    const password = typeof body.password === 'string' ? body.password : '';
    const team = typeof body.team === 'string' && body.team !== '' ? body.team : undefined;
    let user: UserRow;
    try {
      // A client bound to a team decides the team: no other team's passwords are checked.
      const result = await signIn(ctx, username, password, {
        clientId: authorization.client.id,
        requestId: request.id,
        method: 'form',
        address: request.ip,
        clientTeamId: authorization.client.team_id,
        ...(team !== undefined ? { teamName: team } : {}),
      });
      if (result.kind === 'choose') return showSignIn(reply, authorization, 200, undefined, username, result.teams);
      user = result.user;
    } catch (error) {
      if (error instanceof OAuthError && error.error === 'invalid_grant') return showSignIn(reply, authorization, 401, error.message, username, undefined, team);
      throw error;
    }
    // Never true (signIn only looks in the client's team); kept so a session never serves another team.
    if (!userMayAuthorize(authorization, user)) return showSignIn(reply, authorization, 401, WRONG_CREDENTIALS, username);
    const session = await openSession(ctx, SESSION_KIND, user);
    reply.setCookie(SESSION_COOKIE, session, { ...cookieOptions, maxAge: SESSION_TTL_SECONDS });
    return seeOther(reply, authorizeUrl(authorization.params));
  });

  app.post('/oauth/authorize/decision', { preHandler: app.csrfProtection }, async (request, reply) => {
    const authorization = await checked(requestFields(request.body), reply);
    if (!authorization) return reply;
    const user = await sessionUser(request);
    if (!user || !userMayAuthorize(authorization, user)) return showSignIn(reply, authorization, 401, 'Your session has ended; sign in again.');
    const decision = (request.body as Form).decision;
    const state = authorization.state;
    if (decision !== 'approve') {
      return seeOther(reply, redirectTo(authorization.redirectUri, ctx.issuer, { error: 'access_denied', error_description: 'The user denied the request', state }));
    }
    const code = await issueCode(db, ctx.clock, authorization, user);
    return seeOther(reply, redirectTo(authorization.redirectUri, ctx.issuer, { code, state }));
  });

  app.post('/oauth/signout', { preHandler: app.csrfProtection }, async (request, reply) => {
    // The row goes, so a copy of the cookie kept elsewhere is worthless too.
    const id = sessionId(request);
    if (id !== undefined) await endSession(ctx, id);
    reply.clearCookie(SESSION_COOKIE, { path: '/oauth' });
    const fields = requestFields(request.body);
    const params = Object.fromEntries(Object.entries(fields).filter((e): e is [string, string] => typeof e[1] === 'string'));
    return seeOther(reply, authorizeUrl(params));
  });
}
