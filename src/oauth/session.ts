/**
 * The sign-in session of the authorization pages: which user signed in, and until when. It is
 * carried in a cookie that @fastify/cookie signs with the server's secret (kept in the database,
 * so every instance can read every session), HttpOnly and SameSite=Lax, and it expires after
 * SESSION_TTL_SECONDS by its own clock, whatever the browser does with the cookie.
 */
import type { Clock } from '../clock.ts';

export const SESSION_COOKIE = 'rollcall_session';
export const SESSION_TTL_SECONDS = 30 * 60;

export interface Session {
  readonly userId: string;
  readonly teamId: string;
}

export function encodeSession(session: Session, clock: Clock): string {
  const expires = clock.now().getTime() + SESSION_TTL_SECONDS * 1000;
  return `${session.userId}.${session.teamId}.${expires}`;
}

/** The session in an (already signature-checked) cookie value, unless it has expired. */
export function decodeSession(value: string, clock: Clock): Session | undefined {
  const match = /^([A-Z0-9]{20})\.([A-Z0-9]{20})\.(\d{1,16})$/.exec(value);
  if (!match) return undefined;
  if (Number(match[3]) <= clock.now().getTime()) return undefined;
  return { userId: match[1]!, teamId: match[2]! };
}
