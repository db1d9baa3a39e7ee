/**
 * The SSF 1.0 transmitter's HTTP surface (OpenID Shared Signals Framework 1.0 sections 7 and 8):
 * `GET /.well-known/ssf-configuration` (public, the Transmitter Configuration Metadata), and the
 * stream management API under `/v2/ssf`: the configuration endpoint `/v2/ssf/stream` (POST
 * create, GET read one or all, PATCH update, PUT replace, DELETE), the status endpoint
 * `/v2/ssf/status` (GET, POST), `/v2/ssf/subjects/add`, `/v2/ssf/subjects/remove` and
 * `/v2/ssf/verify`. Every management request needs a bearer token of the team with the `ssf`
 * scope (401 without a valid token, 403 without the scope); a stream of another team is a 404.
 * SSF signals errors by HTTP status; the body is `{"error", "error_description"}` as in RFC 6749
 * section 5.2 (the shape the OAuth surface answers in), with the WWW-Authenticate header of RFC
 * 6750 on 401 and 403. It parses and authenticates; the rules live in events/ssf/streams.ts.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OverBudget } from '../budgets.ts';
import type { Clock } from '../clock.ts';
import { EventsError } from '../events/errors.ts';
import type { ReceiverPolicy } from '../events/receivers.ts';
import { changeSubject, createStream, deleteStream, listStreams, readStatus, readStream, replaceStream, requestVerification, setStatus, streamIdOf, transmitterConfiguration, updateStream, VerificationTooSoon } from '../events/ssf/streams.ts';
import type { StreamDeps } from '../events/ssf/streams.ts';
import type { ChangeOrigin } from '../events/subscriptions.ts';
import type { SecretBox } from '../keys/sealed.ts';
import type { BearerCache } from '../oauth/bearer-cache.ts';
import type { Bearer } from '../oauth/tokens.ts';
import { bearerActor } from '../oauth/tokens.ts';
import type { Storage } from '../storage/connect.ts';
import { unstorableText } from '../text.ts';
import type { AccessLog } from './access-log.ts';
import { addJsonBodyParser } from './json-body.ts';
import { documented } from './openapi/route-doc.ts';
import type { RouteDoc } from './openapi/route-doc.ts';
import { ssfDocs } from './openapi/routes-other.ts';
import { bearerToken } from './scim-plugin.ts';

/** An SSF management error: its status, an RFC 6749-style code, a message safe to show, extra headers. */
export class SsfError extends Error {
  readonly status: number;
  readonly code: string;
  readonly headers: Readonly<Record<string, string>>;
  constructor(status: number, code: string, description: string, headers: Record<string, string> = {}) {
    super(description);
    this.name = 'SsfError';
    this.status = status;
    this.code = code;
    this.headers = headers;
  }
}

const CODES: Readonly<Record<number, string>> = { 400: 'invalid_request', 404: 'not_found', 409: 'conflict', 410: 'gone', 413: 'invalid_request', 415: 'invalid_request' };

/** What any error thrown under this plugin answers as. */
function ssfErrorOf(error: unknown): SsfError | undefined {
  if (error instanceof SsfError) return error;
  if (error instanceof EventsError) return new SsfError(error.status, CODES[error.status] ?? 'invalid_request', error.message);
  if (error instanceof VerificationTooSoon) return new SsfError(429, 'too_many_requests', error.message, { 'retry-after': String(error.retryAfterSeconds) });
  // SSF 1.0 section 8.1.1.1: 403 when the receiver may not create a stream (its team's budget is spent).
  if (error instanceof OverBudget) {
    if (error.budget === 'ssf.streams') return new SsfError(403, 'stream_limit_reached', error.message);
    return error.retryAfterSeconds === undefined ? new SsfError(400, 'invalid_request', error.message) : new SsfError(429, 'too_many_requests', error.message, { 'retry-after': String(Math.max(1, Math.ceil(error.retryAfterSeconds))) });
  }
  return undefined;
}

const doc = (d: RouteDoc) => documented(d, (message) => new SsfError(400, 'invalid_request', message));

export interface SsfPluginOptions {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly baseUrl: string;
  readonly bearers: BearerCache;
  /** Where push endpoints may be (events/receivers.ts), as for push subscriptions. */
  readonly receivers: ReceiverPolicy;
  /** Seals the receivers' authorization headers (KeyStore.box(STREAM_SECRETS), stream-config.ts). */
  readonly box: SecretBox;
  readonly accessLog?: AccessLog;
}

/** The bearer of a management request: a valid token of the team with the `ssf` scope (RFC 6750 3.1 errors). */
export async function requireSsfBearer(options: Pick<SsfPluginOptions, 'bearers' | 'accessLog'>, request: FastifyRequest): Promise<Bearer> {
  const token = bearerToken(request.headers.authorization);
  if (token === undefined) throw new SsfError(401, 'invalid_token', 'Authentication required: send a bearer token of your team with the ssf scope', { 'www-authenticate': 'Bearer realm="rollcall", scope="ssf"' });
  const bearer = await options.bearers.verify(token);
  if (!bearer) throw new SsfError(401, 'invalid_token', 'The access token is invalid, expired or revoked', { 'www-authenticate': 'Bearer realm="rollcall", error="invalid_token"' });
  options.accessLog?.team(request, bearer.team);
  if (!bearer.scopes.has('ssf')) throw new SsfError(403, 'insufficient_scope', 'This request needs the "ssf" scope', { 'www-authenticate': 'Bearer realm="rollcall", error="insufficient_scope", scope="ssf"' });
  return bearer;
}

export async function ssfPlugin(app: FastifyInstance, options: SsfPluginOptions): Promise<void> {
  const deps: StreamDeps = { storage: options.storage, clock: options.clock, receivers: options.receivers, box: options.box, issuer: options.baseUrl };
  addJsonBodyParser(app, (_why, message) => new SsfError(400, 'invalid_request', message));
  // Who may manage streams is settled before anything about the request is: a caller without
  // the right token learns 401/403, never the body's or the query's rules.
  const bearers = new WeakMap<FastifyRequest, Bearer>();
  app.addHook('preValidation', async (request) => {
    if (request.routeOptions.url === '/.well-known/ssf-configuration') return;
    bearers.set(request, await requireSsfBearer(options, request));
    if (unstorableText(request.query) !== undefined) throw new SsfError(400, 'invalid_request', 'The URL holds text that is not valid Unicode or contains NUL characters');
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    let known = ssfErrorOf(error);
    if (!known && error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      known = new SsfError(error.statusCode, CODES[error.statusCode] ?? 'invalid_request', error.statusCode === 413 ? 'The request body is too large' : error.statusCode === 415 ? 'The body must be JSON (application/json)' : error.message);
    }
    if (!known) {
      request.log.error({ err: error }, 'unhandled error');
      known = new SsfError(500, 'server_error', 'Internal server error');
    }
    return reply.code(known.status).headers({ ...known.headers, 'cache-control': 'no-store' }).type('application/json').send({ error: known.code, error_description: known.message });
  });

  const bearerOf = (request: FastifyRequest): Bearer => {
    const found = bearers.get(request);
    if (!found) throw new SsfError(401, 'invalid_token', 'Authentication required');
    return found;
  };
  const bodyOf = (request: FastifyRequest): Record<string, unknown> => {
    const body = request.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new SsfError(400, 'invalid_request', 'The body must be a JSON object');
    return body as Record<string, unknown>;
  };
  const streamIdInQuery = (request: FastifyRequest): string => streamIdOf((request.query as Record<string, unknown>).stream_id);
  /** The audit row's actor: the bearer's client and user, like a SCIM write's. */
  const originOf = (request: FastifyRequest, bearer: Bearer): ChangeOrigin => ({
    actor: bearerActor(bearer),
    requestId: request.id,
    credential: { tokenHash: bearer.tokenHash, userId: bearer.userId },
  });
  const send = (reply: FastifyReply, status: number, body: unknown) => reply.code(status).header('cache-control', 'no-store').type('application/json').send(body);

  app.get('/.well-known/ssf-configuration', doc(ssfDocs.configuration), async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=300').type('application/json').send(transmitterConfiguration(options.baseUrl)),
  );

  app.post('/v2/ssf/stream', doc(ssfDocs.create), async (request, reply) => {
    const bearer = bearerOf(request);
    // SSF 8.1.1.1: every property of a creation is optional, so no body at all is an empty one.
    const body = request.body === undefined ? {} : bodyOf(request);
    return send(reply, 201, await createStream(deps, { team: bearer.team, clientId: bearer.clientId }, body, originOf(request, bearer)));
  });
  app.get('/v2/ssf/stream', doc(ssfDocs.read), async (request, reply) => {
    const bearer = bearerOf(request);
    const query = request.query as Record<string, unknown>;
    return send(reply, 200, query.stream_id === undefined ? await listStreams(deps, bearer.team.id) : await readStream(deps, bearer.team.id, streamIdInQuery(request)));
  });
  app.patch('/v2/ssf/stream', doc(ssfDocs.update), async (request, reply) => {
    const bearer = bearerOf(request);
    return send(reply, 200, await updateStream(deps, bearer.team.id, bodyOf(request), originOf(request, bearer)));
  });
  app.put('/v2/ssf/stream', doc(ssfDocs.replace), async (request, reply) => {
    const bearer = bearerOf(request);
    return send(reply, 200, await replaceStream(deps, bearer.team.id, bodyOf(request), originOf(request, bearer)));
  });
  app.delete('/v2/ssf/stream', doc(ssfDocs.remove), async (request, reply) => {
    const bearer = bearerOf(request);
    await deleteStream(deps, bearer.team.id, streamIdInQuery(request), originOf(request, bearer));
    return reply.code(204).header('cache-control', 'no-store').send();
  });

  app.get('/v2/ssf/status', doc(ssfDocs.status), async (request, reply) => {
    const bearer = bearerOf(request);
    return send(reply, 200, await readStatus(deps, bearer.team.id, streamIdInQuery(request)));
  });
  app.post('/v2/ssf/status', doc(ssfDocs.setStatus), async (request, reply) => {
    const bearer = bearerOf(request);
    return send(reply, 200, await setStatus(deps, bearer.team.id, bodyOf(request), originOf(request, bearer)));
  });

  // SSF 1.0 8.1.3.2: an added subject is answered with an empty 200; 8.1.3.3: a removed one with 204.
  app.post('/v2/ssf/subjects/add', doc(ssfDocs.addSubject), async (request, reply) => {
    const bearer = bearerOf(request);
    await changeSubject(deps, bearer.team.id, bodyOf(request), originOf(request, bearer), true);
    return reply.code(200).header('cache-control', 'no-store').send();
  });
  app.post('/v2/ssf/subjects/remove', doc(ssfDocs.removeSubject), async (request, reply) => {
    const bearer = bearerOf(request);
    await changeSubject(deps, bearer.team.id, bodyOf(request), originOf(request, bearer), false);
    return reply.code(204).header('cache-control', 'no-store').send();
  });
  app.post('/v2/ssf/verify', doc(ssfDocs.verify), async (request, reply) => {
    const bearer = bearerOf(request);
    await requestVerification(deps, bearer.team.id, bodyOf(request), originOf(request, bearer));
    return reply.code(204).header('cache-control', 'no-store').send();
  });
}
