/**
 * The events' HTTP surface: `GET /.well-known/jwks.json` (public: the keys that verify
 * every SET), `GET /v2/events` (the plain JSON feed listing; bearer token with scope `read`, team
 * of the token), `POST /v2/events/poll` (RFC 8936, with a poll subscription's own token), and
 * the subscription API under `/v2/events/subscriptions` (scope `read` to look; to change,
 * scope `write` and an administrator's token, never a provisioning token; the team of the
 * token; docs/events.md). Errors answer in RFC 7644 3.12
 * bodies like the rest of /v2. It parses and authenticates; the rules live in src/events.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import { listEvents, DEFAULT_LIMIT, MAX_LIMIT, queryInteger } from '../events/listing.ts';
import type { ReceiverPolicy } from '../events/receivers.ts';
import type { SetSigner } from '../events/set.ts';
import type { BearerCache } from '../oauth/bearer-cache.ts';
import { notAnAdministrator } from '../oauth/administrators.ts';
import type { Scope } from '../oauth/scopes.ts';
import type { Bearer } from '../oauth/tokens.ts';
import { bearerActor } from '../oauth/tokens.ts';
import { badRequest, ScimError, scimErrorOf } from '../scim/errors.ts';
import { parsePollRequest, poll, PollError, pollSubscription } from '../events/poll.ts';
import { createSubscription, getSubscription, listSubscriptions, pauseSubscription, removeSubscription, replaySubscription, resumeSubscription } from '../events/subscriptions.ts';
import type { Storage } from '../storage/connect.ts';
import type { SecretBox } from '../keys/sealed.ts';
import { rotateWebhookSecret } from '../events/webhook-secrets.ts';
import { unstorableText } from '../text.ts';
import { addJsonBodyParser } from './json-body.ts';
import type { AccessLog } from './access-log.ts';
import { bearerToken, sendScimError } from './scim-plugin.ts';
import { scimBody } from './scim-payload.ts';
import { documented } from './openapi/route-doc.ts';
import type { RouteDoc } from './openapi/route-doc.ts';
import { eventsDocs } from './openapi/routes-other.ts';
import { addComponentSchemas } from './openapi/body-validation.ts';

/**
 * A declared route's options; a parameter or body that fails its schema is a SCIM 400
 * invalidValue (invalidSyntax for a body that is no object), on the poll endpoint RFC 8936's
 * invalid_request.
 */
const doc = (d: RouteDoc) =>
  documented(d, (message, _field, syntax) => (d.errors === 'poll' ? new PollError(400, 'invalid_request', message) : new ScimError(400, message, syntax ? 'invalidSyntax' : 'invalidValue')));

export interface EventsPluginOptions {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly baseUrl: string;
  readonly signer: SetSigner;
  readonly bearers: BearerCache;
  /** Where push receivers may be (events/receivers.ts). */
  readonly receivers: ReceiverPolicy;
  /** The access log, told the team of each authenticated request. */
  readonly accessLog?: AccessLog;
  /** Seals webhook subscriptions' secrets (KeyStore.box). */
  readonly box: SecretBox;
}

/** The bearer of a request with `scope`, or a 401 / 403 in the SCIM error shape. */
export async function requireBearer(options: Pick<EventsPluginOptions, 'bearers' | 'accessLog'>, request: FastifyRequest, scope: Scope): Promise<Bearer> {
  const token = bearerToken(request.headers.authorization);
  if (token === undefined) {
    throw new ScimError(401, 'Authentication required: send the access token in the Authorization header', undefined, { 'www-authenticate': 'Bearer realm="rollcall"' });
  }
  const bearer = await options.bearers.verify(token);
  if (!bearer) {
    throw new ScimError(401, 'The access token is invalid, expired or revoked', undefined, { 'www-authenticate': 'Bearer realm="rollcall", error="invalid_token"' });
  }
  options.accessLog?.team(request, bearer.team);
  if (!bearer.scopes.has(scope)) {
    throw new ScimError(403, `This request needs the "${scope}" scope`, undefined, { 'www-authenticate': `Bearer realm="rollcall", error="insufficient_scope", scope="${scope}"` });
  }
  return bearer;
}

/**
 * The bearer of a request that changes subscriptions: `write` scope and an administrator's token
 * (oauth/administrators.ts), or a 403 in the SCIM error shape.
 */
async function requireAdministrator(options: Pick<EventsPluginOptions, 'bearers' | 'storage'>, request: FastifyRequest): Promise<Bearer> {
  const bearer = await requireBearer(options, request, 'write');
  const not = await notAnAdministrator(options.storage.db, bearer);
  if (not !== undefined) throw new ScimError(403, `Only a team administrator's token manages event subscriptions; this is ${not}`);
  return bearer;
}

/**
 * Runs a long poll's `work` with a signal that aborts when the client goes away (its socket's
 * 'close': the request itself counts as destroyed once its body is read, long before the client
 * leaves) or `closing` does (the server is closing). The listener goes with the poll, so a
 * keep-alive connection's polls never pile listeners up.
 */
export async function untilClientGone<T>(request: FastifyRequest, closing: AbortSignal, work: (stop: AbortSignal) => Promise<T>): Promise<T> {
  const gone = new AbortController();
  const socket = request.raw.socket;
  const leave = () => gone.abort();
  if (socket.destroyed) gone.abort();
  else socket.once('close', leave);
  try {
    return await work(AbortSignal.any([gone.signal, closing]));
  } finally {
    socket.off('close', leave);
  }
}

export async function eventsPlugin(app: FastifyInstance, options: EventsPluginOptions): Promise<void> {
  addComponentSchemas(app);
  addJsonBodyParser(app, (why, message, request) => {
    if (why === 'syntax') return undefined;
    if (request.routeOptions.url === '/v2/events/poll') return new PollError(400, 'invalid_request', message) as unknown as Error;
    return new ScimError(400, message, why === 'depth' ? 'invalidSyntax' : 'invalidValue');
  });
  // Ids and queries no database can store (PostgreSQL refuses NUL) are refused before any query.
  app.addHook('preValidation', async (request) => {
    if (unstorableText(request.params) !== undefined || unstorableText(request.query) !== undefined) {
      throw new ScimError(400, 'The URL holds text that is not valid Unicode or contains NUL characters', 'invalidValue');
    }
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = scimErrorOf(error);
    if (known) return sendScimError(request, reply, known);
    // The poll endpoint answers in RFC 8936's own error shape.
    if ((error as unknown) instanceof PollError) {
      const e = error as unknown as PollError;
      return reply.code(e.status).header('content-type', 'application/json').send(scimBody(e.toBody()));
    }
    const status = error.statusCode;
    if (status !== undefined && status >= 400 && status < 500) return sendScimError(request, reply, new ScimError(status, error.message));
    request.log.error({ err: error }, 'unhandled error');
    return sendScimError(request, reply, new ScimError(500, 'Internal server error'));
  });

  app.get('/.well-known/jwks.json', doc(eventsDocs.jwks), async (_request, reply) =>
    reply.header('content-type', 'application/jwk-set+json').header('cache-control', 'public, max-age=60').send(Buffer.from(JSON.stringify(await options.signer.jwks()))),
  );

  // A long poll answers at once when the server begins to close, so shutdown never waits on it.
  const closing = new AbortController();
  app.addHook('preClose', (done) => {
    closing.abort();
    done();
  });
  const pollDeps = { storage: options.storage, clock: options.clock, signer: options.signer, issuer: options.baseUrl };
  const send = (reply: FastifyReply, status: number, body: unknown) => reply.code(status).header('content-type', 'application/json').send(scimBody(body));
  /** An answer carrying a secret shown only once (a webhook secret, a poll token): no cache may keep it (as RFC 6749 5.1 asks of tokens). */
  const sendSecret = (reply: FastifyReply, status: number, body: unknown) => send(reply.header('cache-control', 'no-store').header('pragma', 'no-cache'), status, body);
  const bodyOf = (request: FastifyRequest): Record<string, unknown> => {
    const body = request.body ?? {};
    if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('invalidSyntax', 'the body must be a JSON object');
    return body as Record<string, unknown>;
  };
  const idOf = (request: FastifyRequest): string => (request.params as { id: string }).id;
  // Who may change subscriptions is settled before the body is validated: a caller without the
  // right token learns 401/403, never the body's rules (Fastify validates after preValidation).
  const administrators = new WeakMap<FastifyRequest, Bearer>();
  const asAdministrator = {
    preValidation: async (request: FastifyRequest) => {
      administrators.set(request, await requireAdministrator(options, request));
    },
  };
  const administrator = (request: FastifyRequest): Bearer => {
    const found = administrators.get(request);
    if (!found) throw new ScimError(401, 'Authentication required');
    return found;
  };
  /** The audit row's actor: the bearer's client and user, like a SCIM write's. */
  const originOf = (request: FastifyRequest, bearer: Bearer) => ({
    actor: bearerActor(bearer),
    requestId: request.id,
    credential: { tokenHash: bearer.tokenHash, userId: bearer.userId },
  });

  app.post('/v2/events/subscriptions', { ...doc(eventsDocs.create), ...asAdministrator }, async (request, reply) => {
    const bearer = administrator(request);
    const body = bodyOf(request);
    const events = body.events;
    if (events !== undefined && (!Array.isArray(events) || !events.every((e) => typeof e === 'string'))) throw badRequest('invalidValue', 'events must be an array of event names');
    if (body.full !== undefined && typeof body.full !== 'boolean') throw badRequest('invalidValue', 'full must be true or false');
    if (body.url !== undefined && typeof body.url !== 'string') throw badRequest('invalidValue', 'url must be a string');
    if (body.format !== undefined && typeof body.format !== 'string') throw badRequest('invalidValue', 'format must be "set" or "webhook"');
    const method = body.method ?? 'push';
    const created = await createSubscription(options, bearer.team, {
      method: method as 'push',
      ...(typeof body.url === 'string' ? { url: body.url } : {}),
      ...(events !== undefined ? { events: events as string[] } : {}),
      full: body.full === true,
      ...(typeof body.format === 'string' ? { format: body.format } : {}),
    }, originOf(request, bearer));
    // The poll token and the webhook secret are in this answer only: the database keeps a digest, a sealed copy.
    return (created.pollToken || created.secret ? sendSecret : send)(reply, 201, { ...created.subscription, ...(created.pollToken ? { pollToken: created.pollToken } : {}), ...(created.secret ? { secret: created.secret } : {}) });
  });
  app.get('/v2/events/subscriptions', doc(eventsDocs.list), async (request, reply) => {
    const bearer = await requireBearer(options, request, 'read');
    return send(reply, 200, { subscriptions: await listSubscriptions(options, bearer.team.id) });
  });
  app.get('/v2/events/subscriptions/:id', doc(eventsDocs.get), async (request, reply) => {
    const bearer = await requireBearer(options, request, 'read');
    return send(reply, 200, await getSubscription(options, bearer.team.id, idOf(request)));
  });
  app.delete('/v2/events/subscriptions/:id', doc(eventsDocs.remove), async (request, reply) => {
    const bearer = await requireAdministrator(options, request);
    await removeSubscription(options, bearer.team.id, idOf(request), originOf(request, bearer));
    return reply.code(204).send();
  });
  app.post('/v2/events/subscriptions/:id/pause', doc(eventsDocs.action('pause')), async (request, reply) => {
    const bearer = await requireAdministrator(options, request);
    return send(reply, 200, await pauseSubscription(options, bearer.team.id, idOf(request), undefined, originOf(request, bearer)));
  });
  app.post('/v2/events/subscriptions/:id/resume', doc(eventsDocs.action('resume')), async (request, reply) => {
    const bearer = await requireAdministrator(options, request);
    return send(reply, 200, await resumeSubscription(options, bearer.team.id, idOf(request), originOf(request, bearer)));
  });
  app.post('/v2/events/subscriptions/:id/replay', { ...doc(eventsDocs.action('replay')), ...asAdministrator }, async (request, reply) => {
    const bearer = administrator(request);
    const from = bodyOf(request).from;
    if (typeof from !== 'number') throw badRequest('invalidValue', 'from must be a sequence number');
    return send(reply, 200, await replaySubscription(options, bearer.team.id, idOf(request), from, originOf(request, bearer)));
  });

  app.post('/v2/events/subscriptions/:id/rotate-secret', { ...doc(eventsDocs.rotateSecret), ...asAdministrator }, async (request, reply) => {
    const bearer = administrator(request);
    const overlap = bodyOf(request).overlapSeconds;
    const rotated = await rotateWebhookSecret(options, bearer.team.id, idOf(request), overlap, originOf(request, bearer));
    return sendSecret(reply, 200, { ...rotated.subscription, secret: rotated.secret, previousSecretValidUntil: rotated.previousValidUntil });
  });

  // RFC 8936 poll: the subscription's own credential; pending SETs, acknowledgements, errors, long-poll.
  // The poll credential is checked before the body is validated (401 before any 400).
  const pollers = new WeakMap<FastifyRequest, Awaited<ReturnType<typeof pollSubscription>>>();
  const asPoller = {
    preValidation: async (request: FastifyRequest) => {
      pollers.set(request, await pollSubscription(pollDeps, bearerToken(request.headers.authorization)));
    },
  };
  app.post('/v2/events/poll', { ...doc(eventsDocs.poll), ...asPoller }, async (request, reply) => {
    const sub = pollers.get(request) ?? (await pollSubscription(pollDeps, bearerToken(request.headers.authorization)));
    const body = parsePollRequest(request.body);
    const answer = await untilClientGone(request, closing.signal, (stop) => poll(pollDeps, sub, body, stop));
    return reply.code(200).header('content-type', 'application/json').send(scimBody(answer));
  });

  app.get('/v2/events', doc(eventsDocs.feed), async (request, reply) => {
    const bearer = await requireBearer(options, request, 'read');
    const query = request.query as Record<string, unknown>;
    const after = queryInteger('after', query.after, 0, 0, Number.MAX_SAFE_INTEGER);
    const limit = queryInteger('limit', query.limit, DEFAULT_LIMIT, 1, MAX_LIMIT);
    const page = await listEvents(options.storage.db, bearer.team.id, after, limit);
    return reply.header('content-type', 'application/json').send(scimBody(page));
  });
}
