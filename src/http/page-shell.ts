/**
 * The shell of Rollcall's browser pages, shared by the authorization pages (/oauth) and the
 * console (/console): everything a page family registers before its first route, so that both
 * answer alike and neither can forget a part.
 *
 * - Cookies are signed with the key store's current `cookie` key and verified with every live
 *   one, so a rotation (rollcall keys rotate) leaves cookies signed just before it valid for one
 *   session lifetime. The keys are re-read every REFRESH_SECONDS (keys/store.ts) before a page
 *   answers. Every cookie is HttpOnly, on the family's path, Secure when the site is https.
 * - CSRF: @fastify/csrf-protection, its secret in a SameSite=Strict cookie of the family.
 * - Headers: a Content-Security-Policy with default-src 'none' and only what the family needs,
 *   frame-ancestors 'none' and X-Frame-Options DENY, Referrer-Policy no-referrer, HSTS on https;
 *   every page is no-store, and no CORS header is ever added.
 * - The error page: one handler. A CSRF failure is a 403, a refused sign-in attempt a 429 with
 *   Retry-After, a request's own fault its 4xx with its message; anything else is logged and
 *   answered by a 500 with a bland message (never a stack or SQL). The family draws the body.
 * - The session is server-side (sessions.ts): the cookie holds only its random id, and `resume`
 *   turns the cookie into the signed-in user and team through sessions.ts.
 *
 * It knows no page's content, no SQL and no domain rule.
 */
import cookie, { Signer } from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { KeyStore } from '../keys/store.ts';
import { OAuthError } from '../oauth/errors.ts';
import { endSession, openSession, resumeSignedIn, SESSION_TTL_SECONDS } from '../sessions.ts';
import type { SessionContext, SessionUser, SignedIn } from '../sessions.ts';

/** Why a page failed, as the family's error page is told (the status is the shell's to set). */
export type PageFailure =
  | { readonly kind: 'csrf' }
  | { readonly kind: 'throttled'; readonly message: string; readonly retryAfter: string }
  | { readonly kind: 'failed'; readonly status: number; readonly message: string };

export interface ShellOptions {
  readonly sessions: SessionContext;
  readonly keys: KeyStore;
  /** The site's public base URL or issuer: cookies are Secure and HSTS is sent when it is https. */
  readonly baseUrl: string;
  /** The path of the family's pages and cookies ('/oauth', '/console'). */
  readonly path: string;
  readonly sessionCookie: string;
  readonly csrfCookie: string;
  /** The sessions.ts kind of the family's sessions: a session of one family never serves the other. */
  readonly sessionKind: string;
  /**
   * Whether the pages run their own scripts and post forms only to this site. The authorization
   * pages do neither: their decision form is answered by a redirect to the client, which a
   * form-action of 'self' would block.
   */
  readonly scriptsAndOwnForms: boolean;
  /** Whether the pages run Rollcall's own scripts though their forms may post elsewhere (the authorization pages' passkey sign-in). */
  readonly ownScripts?: boolean;
  /** Where an unexpected error is said to have happened, in the log. */
  readonly place: string;
  /** The status of the family's own errors that are the request's fault, if `error` is one. */
  statusOf?(error: unknown): number | undefined;
  /** The body of the family's error page (a page of its own, a sign-in form). */
  errorPage(request: FastifyRequest, reply: FastifyReply, failure: PageFailure): string;
}

export interface PageShell {
  /** Sends an HTML page, never stored by a cache. */
  html(reply: FastifyReply, status: number, body: string): FastifyReply;
  /** A 303 (never 307: the browser must not re-POST a form, RFC 9700 4.12). */
  seeOther(reply: FastifyReply, location: string): FastifyReply;
  /** Serves a static asset of the pages at `url`, cacheable for an hour. */
  asset(url: string, contentType: string, body: string): void;
  /** The signed-in user and team of the request's session cookie, if the session is live. */
  resume(request: FastifyRequest): Promise<SignedIn | undefined>;
  /** Opens a session for `user` and sets its cookie. */
  open(reply: FastifyReply, user: SessionUser): Promise<void>;
  /** Ends the request's session, if any, and clears its cookie: a copy of the cookie kept elsewhere is worthless too. */
  end(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** Clears the session cookie (for a session the domain has ended already). */
  forget(reply: FastifyReply): void;
}

const BLAND = 'Rollcall could not complete the request. Try again in a moment.';

function html(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').send(body);
}

const seeOther = (reply: FastifyReply, location: string): FastifyReply => reply.code(303).header('location', location).send();

/** What a page's failure is, and its status; anything not a request's own fault is a 500. */
function failureOf(options: ShellOptions, error: FastifyError): PageFailure {
  if (error.code === 'FST_CSRF_MISSING_SECRET' || error.code === 'FST_CSRF_INVALID_TOKEN') return { kind: 'csrf' };
  if (error instanceof OAuthError && error.status === 429) return { kind: 'throttled', message: error.message, retryAfter: error.headers['retry-after'] ?? '60' };
  const code = error.statusCode;
  const status = options.statusOf?.(error) ?? (code !== undefined && code >= 400 && code < 500 ? code : 500);
  return { kind: 'failed', status, message: status >= 500 ? BLAND : error.message };
}

const httpStatus = (failure: PageFailure): number => (failure.kind === 'csrf' ? 403 : failure.kind === 'throttled' ? 429 : failure.status);

/** Registers the shell on a page family's plugin instance; returns what its routes use. */
export async function pageShell(app: FastifyInstance, options: ShellOptions): Promise<PageShell> {
  const keys = options.keys;
  const secure = options.baseUrl.startsWith('https:');
  const cookieOptions = { path: options.path, httpOnly: true, sameSite: 'lax' as const, secure, signed: true };
  let signer: { version: number; signer: Signer } | undefined;
  const current = (): Signer => {
    if (signer?.version !== keys.version) signer = { version: keys.version, signer: new Signer([...keys.secrets('cookie')]) };
    return signer.signer;
  };

  await app.register(formbody, { bodyLimit: 16 * 1024 });
  app.addHook('onRequest', async () => keys.refreshIfStale());
  await app.register(cookie, { secret: { sign: (value: string) => current().sign(value), unsign: (value: string) => current().unsign(value) } });
  await app.register(csrf, { cookieKey: options.csrfCookie, cookieOpts: { ...cookieOptions, sameSite: 'strict' } });
  const own = options.scriptsAndOwnForms;
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        styleSrc: ["'self'"],
        // The scripts fetch only from this site (the wizard's Test state, the passkey script's ceremony options).
        ...(own || options.ownScripts === true ? { scriptSrc: ["'self'"], connectSrc: ["'self'"] } : {}),
        imgSrc: ["'self'"],
        ...(own ? { formAction: ["'self'"] } : {}),
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
    const failure = failureOf(options, error);
    if (failure.kind === 'throttled') reply.header('retry-after', failure.retryAfter);
    const status = httpStatus(failure);
    if (status >= 500) request.log.error({ err: error }, `unhandled error ${options.place}`);
    return html(reply, status, options.errorPage(request, reply, failure));
  });

  /** The session id in the (signature-checked) cookie, if any. */
  const sessionId = (request: FastifyRequest): string | undefined => {
    const raw = request.cookies[options.sessionCookie];
    if (!raw) return undefined;
    const unsigned = request.unsignCookie(raw);
    return unsigned.valid && unsigned.value !== null ? unsigned.value : undefined;
  };
  const forget = (reply: FastifyReply): void => void reply.clearCookie(options.sessionCookie, { path: options.path });

  return {
    html,
    seeOther,
    asset: (url, contentType, body) =>
      void app.get(url, async (_request, reply) => reply.code(200).header('content-type', contentType).header('cache-control', 'public, max-age=3600').send(body)),
    resume: async (request) => {
      const id = sessionId(request);
      return id === undefined ? undefined : resumeSignedIn(options.sessions, options.sessionKind, id);
    },
    open: async (reply, user) => {
      const session = await openSession(options.sessions, options.sessionKind, user);
      reply.setCookie(options.sessionCookie, session, { ...cookieOptions, maxAge: SESSION_TTL_SECONDS });
    },
    end: async (request, reply) => {
      const id = sessionId(request);
      if (id !== undefined) await endSession(options.sessions, id);
      forget(reply);
    },
    forget,
  };
}
