/**
 * What the sign-in pages (the console's and the authorization pages') share for second factors
 * (oauth/factors.ts, oauth/passkeys.ts), besides the page shell:
 *
 * - The pending sign-in: an admin whose password was right but who has a second factor still to
 *   pass holds a server-side session of its own kind (sessions.ts, `<kind>:pending`, five
 *   minutes) behind a cookie of its own; it opens no page, and passing the factor ends it and
 *   opens the real session. Like every session it ends with a password change or a deactivation.
 * - The WebAuthn challenge cookie: the challenge of the ceremony this browser started, signed,
 *   HttpOnly, SameSite=Strict, as long-lived as the challenge, taken (and cleared) by the post
 *   that answers it.
 * - The JSON answer of an options request (no-store).
 * No SQL and no domain rule here.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CHALLENGE_SECONDS } from '../oauth/passkeys.ts';
import { endSession, openSession, resumeSignedIn } from '../sessions.ts';
import type { SessionContext, SessionUser, SignedIn } from '../sessions.ts';

/** How long the second step may wait after the password. */
export const PENDING_SECONDS = 5 * 60;

export interface FactorCookies {
  /** Opens the pending sign-in of `user` (the password was right; a factor is still to pass). */
  openPending(reply: FastifyReply, user: SessionUser): Promise<void>;
  /** The admin of the request's pending sign-in, if it is live. */
  resumePending(request: FastifyRequest): Promise<SignedIn | undefined>;
  /** Ends the pending sign-in, if any. */
  endPending(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** Hands the browser the challenge of the ceremony it started. */
  setChallenge(reply: FastifyReply, challenge: string): void;
  /** The challenge this browser holds (cleared either way). */
  takeChallenge(request: FastifyRequest, reply: FastifyReply): string;
}

export interface FactorCookieOptions {
  readonly sessions: SessionContext;
  /** The session kind of the family's real sessions ('console', 'oauth'). */
  readonly kind: string;
  /** The family's path ('/console', '/oauth'). */
  readonly path: string;
  /** Cookie names: the pending sign-in's and the challenge's. */
  readonly pendingCookie: string;
  readonly challengeCookie: string;
  readonly secure: boolean;
}

export function factorCookies(options: FactorCookieOptions): FactorCookies {
  const kind = `${options.kind}:pending`;
  const base = { path: options.path, httpOnly: true, secure: options.secure, signed: true };
  const unsigned = (request: FastifyRequest, name: string): string | undefined => {
    const raw = request.cookies[name];
    if (!raw) return undefined;
    const value = request.unsignCookie(raw);
    return value.valid && value.value !== null ? value.value : undefined;
  };
  return {
    openPending: async (reply, user) => {
      const id = await openSession(options.sessions, kind, user, PENDING_SECONDS);
      reply.setCookie(options.pendingCookie, id, { ...base, sameSite: 'lax', maxAge: PENDING_SECONDS });
    },
    resumePending: async (request) => {
      const id = unsigned(request, options.pendingCookie);
      return id === undefined ? undefined : resumeSignedIn(options.sessions, kind, id);
    },
    endPending: async (request, reply) => {
      const id = unsigned(request, options.pendingCookie);
      if (id !== undefined) await endSession(options.sessions, id);
      reply.clearCookie(options.pendingCookie, { path: options.path });
    },
    setChallenge: (reply, challenge) => void reply.setCookie(options.challengeCookie, challenge, { ...base, sameSite: 'strict', maxAge: CHALLENGE_SECONDS }),
    takeChallenge: (request, reply) => {
      const challenge = unsigned(request, options.challengeCookie) ?? '';
      reply.clearCookie(options.challengeCookie, { path: options.path });
      return challenge;
    },
  };
}

/** Sends a ceremony's options to the page's script. */
export const sendOptions = (reply: FastifyReply, options: unknown): FastifyReply =>
  reply.code(200).header('content-type', 'application/json; charset=utf-8').header('cache-control', 'no-store').send(JSON.stringify(options));
