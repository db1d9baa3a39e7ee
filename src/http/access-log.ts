/**
 * The access log: one line per answered request, at level info, with what an operator looks a
 * request up by: method, route template, the URL (credentials redacted: request-log.ts), status,
 * the team when the request authenticated as one, latency in milliseconds, the client's address,
 * and the request id every line of the request carries. It replaces Fastify's pair of lines
 * ("incoming request", "request completed") as Fastify's log controller; the line marking each
 * request as it arrives is kept at level debug, for following requests in flight. An error of
 * Fastify's default handler is logged only when it is the server's (5xx, with the error); a
 * client's error (4xx) is its access log line. Fastify's other lines are left as they are.
 *
 * The surfaces that authenticate (SCIM, admin, events, console) note the request's team here as
 * they learn it; this module does not authenticate and keeps nothing past the request.
 */
import { LogController } from 'fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { redactUrl } from './request-log.ts';

/** Whether the request's logger writes lines of `level` (a disabled logger has no level). */
const writes = (request: FastifyRequest, level: 'debug' | 'info' | 'error'): boolean => {
  const log = request.log as FastifyRequest['log'] & { isLevelEnabled?: (level: string) => boolean };
  return typeof log.isLevelEnabled === 'function' && log.isLevelEnabled(level);
};

export class AccessLog extends LogController {
  readonly #teams = new WeakMap<FastifyRequest, string>();

  /** The team `request` acts for, once authenticated: named on its access log line. */
  team(request: FastifyRequest, team: { readonly name: string }): void {
    this.#teams.set(request, team.name);
  }

  override incomingRequest(request: FastifyRequest): void {
    if (!writes(request, 'debug')) return;
    request.log.debug({ method: request.method, url: redactUrl(request.url), remoteAddress: request.ip }, 'incoming request');
  }

  override defaultErrorLog(error: Error, request: FastifyRequest, reply: FastifyReply): void {
    if (reply.statusCode >= 500) request.log.error({ err: error, status: reply.statusCode }, error.message);
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // Nothing is built for a line nobody writes (LOG_LEVEL above info, or silent: no logger).
    if (!writes(request, error ? 'error' : 'info')) return;
    const team = this.#teams.get(request);
    const line = {
      method: request.method,
      route: request.routeOptions.url ?? null,
      url: redactUrl(request.url),
      status: reply.statusCode,
      ...(team !== undefined ? { team } : {}),
      ms: Math.round(reply.elapsedTime * 100) / 100,
      remoteAddress: request.ip,
    };
    if (error) request.log.error({ ...line, err: error }, 'request errored');
    else request.log.info(line, 'request completed');
  }
}
