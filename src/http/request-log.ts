/**
 * What a request leaves in the log and in its id: the logged request line never
 * carries a credential (query parameters such as client_secret, password, code or token are
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

/** `url` with the value of every credential parameter of its query replaced. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
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
  return `${url.slice(0, q)}?${parts.join('&')}`;
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
