/**
 * What a request leaves in the log and in its id: the logged request line never
 * carries a credential (query parameters such as client_secret, password, code or token, and a
 * path segment that is one of Rollcall's secrets, such as a setup link's `rc_setup_…`, are
 * replaced by "[redacted]"; the Authorization and Cookie headers are never logged), and an
 * incoming X-Request-Id is kept only when it is short and made of a safe alphabet, otherwise a
 * fresh UUID names the request. This module does not decide what is logged, only how.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { credentialName, redactUrlFilter } from './log-redaction.ts';

/** Query parameters that carry a credential (RFC 6749 2.3.1, 4.1.3, 4.3, 6; RFC 7009; RFC 7662; RFC 6750 2.3). */
const CREDENTIAL_PARAMS = new Set(['client_secret', 'password', 'refresh_token', 'code', 'code_verifier', 'token', 'access_token', 'client_assertion', 'assertion']);

/**
 * A path segment shaped like one of Rollcall's secrets (`rc_setup_`, `rc_pw_`, `rc_at_`, `rc_rt_`,
 * `rc_cs_`, `rc_ac_`..., `whsec_`): a route that takes a secret in its path (a setup link,
 * /console/setup/:token) would otherwise log it. Read as the router reads it (percent-decoded,
 * any case), so an encoded spelling is redacted too.
 */
const SECRET_SEGMENT = /^(rc_[a-z]+_|whsec_)/i;

function secretSegment(segment: string): boolean {
  if (SECRET_SEGMENT.test(segment)) return true;
  try {
    return SECRET_SEGMENT.test(decodeURIComponent(segment));
  } catch {
    return false;
  }
}

/** `path` (no query) with every secret-shaped segment replaced. */
const redactPath = (path: string): string => (path.includes('_') || path.includes('%') ? path.split('/').map((s) => (secretSegment(s) ? '[redacted]' : s)).join('/') : path);

/** `url` with every secret-shaped path segment and the value of every credential parameter of its query replaced. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return redactPath(url);
  const parts = url.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    let name: string;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
    } catch {
      name = rawName;
    }
    return CREDENTIAL_PARAMS.has(name.toLowerCase()) ? `${rawName}=[redacted]` : pair;
  });
  return `${redactPath(url.slice(0, q))}?${parts.join('&')}`;
}

/** The logged form of a request (Fastify's default fields, the URL and a filter naming a credential redacted). */
export function serializeRequest(request: FastifyRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: redactUrlFilter(redactUrl(request.url), credentialName),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

/** An X-Request-Id we keep: at most 128 characters of [A-Za-z0-9._:-] (no log or header injection). */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request's id: the client's X-Request-Id when it is safe, a new UUID otherwise. */
export function requestId(raw: IncomingMessage): string {
  const given = raw.headers['x-request-id'];
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}
