/**
 * Post/redirect/get for a secret shown once: the POST hands a value to the redirected GET in a
 * cookie that is signed, HttpOnly, SameSite=Strict, scoped to the page's path, bound to the
 * admin and short-lived; the GET takes it and clears it, so a reload shows nothing and adds
 * nothing. The secret is never kept on the server, so the redirect may land on any instance.
 * Used by the client page (OAuth client secrets) and the Events page (webhook secrets).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

/** How long a handed secret waits for its GET. */
export const HANDOFF_SECONDS = 60;

/** Sets `cookie` on `reply` for `path`, carrying `value` for `userId` only. */
export function handOnce(reply: FastifyReply, cookie: string, path: string, userId: string, value: Record<string, string>, secure: boolean): void {
  reply.setCookie(cookie, JSON.stringify({ ...value, u: userId }), { path, httpOnly: true, sameSite: 'strict', secure, signed: true, maxAge: HANDOFF_SECONDS });
}

/**
 * The value handed for `userId` on `path`, if the request carries it (cleared either way);
 * undefined when absent, forged, or another admin's.
 */
export function takeOnce(request: FastifyRequest, reply: FastifyReply, cookie: string, path: string, userId: string): Record<string, unknown> | undefined {
  const raw = request.cookies[cookie];
  if (raw === undefined) return undefined;
  reply.clearCookie(cookie, { path });
  const unsigned = request.unsignCookie(raw);
  if (!unsigned.valid || unsigned.value === null) return undefined;
  try {
    const value = JSON.parse(unsigned.value) as Record<string, unknown> | null;
    if (value === null || typeof value !== 'object' || value.u !== userId) return undefined;
    return value;
  } catch {
    return undefined;
  }
}
