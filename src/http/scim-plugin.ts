/**
 * The SCIM HTTP surface, mounted at /v2/scim (canonical) and /scim (alias): the scim+json body
 * parser, the bearer-token check (bare token or `Bearer <token>`, RFC 6750 section 2.1), the
 * scope check (reads need `read`: GET, HEAD and the POST of a `/.search`, RFC 7644 3.4.3; every
 * other request `write`), and one error handler and one not-found handler that answer in RFC 7644
 * section 3.12 bodies. Routes live in scim-routes.ts. Whether a request is public (discovery) or
 * a search is decided from the route the router matched, never from the raw URL.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import type { PasswordHasher } from '../oauth/passwords.ts';
import type { BearerCache } from '../oauth/bearer-cache.ts';
import type { Bearer } from '../oauth/tokens.ts';
import { bearerActor } from '../oauth/tokens.ts';
import type { TeamTypes } from '../scim/schema/extensions.ts';
import type { ScimContext } from '../scim/context.ts';
import { typesOf } from '../scim/context.ts';
import { CORE_TYPES } from '../scim/schema/extensions.ts';
import type { TeamTypesCache } from '../scim/team-schemas.ts';
import type { DiscoveryCache } from '../scim/discovery-cache.ts';
import { ScimError, scimErrorOf } from '../scim/errors.ts';
import type { Storage } from '../storage/connect.ts';
import type { AccessLog } from './access-log.ts';
import type { LastUsed } from './last-used.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.ts';
import type { RequestJournal } from './request-journal.ts';
import { noSuchEndpoint, registerScimRoutes } from './scim-routes.ts';
import { bulkBodyTooLarge } from './scim-bulk.ts';
import { responseType, scimBody } from './scim-payload.ts';
import { ScanGate } from '../scim/scan-gate.ts';
import { unstorableText } from '../text.ts';
import type { AsyncQueue } from '../async/queue.ts';
import { registerAsync } from './scim-async.ts';

export interface ScimPluginOptions {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly baseUrl: string;
  /** The secret that signs list cursors (RFC 9865), the same on every instance. */
  readonly cursorSecret: string;
  readonly passwords: PasswordHasher;
  /** The bearer check, with verified tokens kept briefly in memory (oauth/bearer-cache.ts). */
  readonly bearers: BearerCache;
  /** Each team's resource types (its schema extensions), kept per app. */
  readonly types: TeamTypesCache;
  /** Each team's rendered /Schemas and /ResourceTypes, kept per app (both prefixes share it). */
  readonly discovery: DiscoveryCache;
  /** Notes each use of a token without a client (a provisioning token's "last used"). */
  readonly lastUsed?: LastUsed;
  /** The request log the console shows (one per app, shared by both prefixes). */
  readonly journal?: RequestJournal;
  /** This instance's scans in progress per team (scim/scan-gate.ts), shared with the console. */
  readonly scans?: ScanGate;
  /** The access log, told the team of each authenticated request. */
  readonly accessLog?: AccessLog;
  /** The queue of asynchronous requests (Prefer: respond-async, scim-async.ts); without it every request is answered synchronously. */
  readonly asyncQueue?: AsyncQueue;
  /** This instance's Bulk requests in progress per team (scim/bulk/gate.ts), shared by both prefixes. */
  readonly bulks?: ScanGate;
  /** The change feed's retention in days: ServiceProviderConfig's deltaTokenExpiry (scim/delta.ts). */
  readonly eventRetentionDays?: number;
  /** The feed rows one delta query page examines at most (scim/delta.ts DELTA_WALK_ROWS unless set). */
  readonly deltaWalkRows?: number;
}

/** Route templates under the prefix that answer without a token: service discovery (RFC 7644 section 4). */
const PUBLIC = /^\/(ServiceProviderConfigs?|Schemas|ResourceTypes)(\/:id)?$/;

/** Route templates of searches: a POST that only reads (RFC 7644 3.4.3; a delta query's `/.delta`). */
const SEARCH = /(^|\/)\.(search|delta)$/;

export function sendScimError(request: FastifyRequest, reply: FastifyReply, error: ScimError): FastifyReply {
  for (const [k, v] of Object.entries(error.headers)) reply.header(k, v);
  return reply.code(error.status).header('content-type', responseType(request)).send(scimBody(error.toBody()));
}

/** The bearer token of a request: `Bearer <token>` (scheme in any case) or the bare token. */
export function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const trimmed = header.trim();
  const match = /^bearer\s+(\S+)$/i.exec(trimmed);
  if (match) return match[1];
  return /^\S+$/.test(trimmed) ? trimmed : undefined;
}

function classify(error: FastifyError, request: FastifyRequest): ScimError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return bulkBodyTooLarge(request) ?? new ScimError(413, 'The request body is larger than 1 MiB');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ScimError(415, 'Send JSON with Content-Type application/scim+json or application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ScimError(400, 'The request body is empty', 'invalidSyntax');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ScimError(400, 'Content-Length does not match the body', 'invalidSyntax');
    default:
      break;
  }
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new ScimError(400, 'The request body is not valid JSON', 'invalidSyntax');
  }
  const status = error.statusCode;
  if (status !== undefined && status >= 400 && status < 500) return new ScimError(status, error.message);
  return undefined;
}

export async function scimPlugin(app: FastifyInstance, options: ScimPluginOptions): Promise<void> {
  const contexts = new WeakMap<FastifyRequest, ScimContext>();
  /** The authenticated request's token hash (an asynchronous request keeps it to check the token before it runs). */
  const tokenHashes = new WeakMap<FastifyRequest, string>();

  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    ['application/scim+json', 'application/json'],
    { parseAs: 'string', bodyLimit: 1024 * 1024 },
    (_request, body, done) => {
      if (body === '') {
        done(null, undefined);
        return;
      }
      if (nestsDeeperThan(body as string)) {
        done(new ScimError(400, `The request body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels`, 'invalidSyntax'), undefined);
        return;
      }
      let parsed: unknown;
      try {
        parsed = JSON.parse(body as string);
      } catch {
        done(new ScimError(400, 'The request body is not valid JSON', 'invalidSyntax'), undefined);
        return;
      }
      if (unstorableText(parsed) !== undefined) {
        done(new ScimError(400, 'The body holds text that is not valid Unicode or contains NUL characters', 'invalidValue'), undefined);
        return;
      }
      done(null, parsed);
    },
  );

  // The same rule for the path and the query (ids, filters, attribute lists).
  app.addHook('preValidation', (request, _reply, done) => {
    if (unstorableText(request.params) !== undefined || unstorableText(request.query) !== undefined) {
      done(new ScimError(400, 'The URL holds text that is not valid Unicode or contains NUL characters', 'invalidValue'));
      return;
    }
    done();
  });

  app.addHook('onRequest', async (request, reply) => {
    // The matched route's template (undefined when nothing matched): no query, no encoding tricks.
    const template = request.routeOptions.url;
    const route = template !== undefined && template.startsWith(app.prefix) ? template.slice(app.prefix.length) : undefined;
    const token = bearerToken(request.headers.authorization);
    if (route !== undefined && (request.method === 'GET' || request.method === 'HEAD') && PUBLIC.test(route)) {
      // Discovery is public and shows the core schemas; with a valid token of a team it shows
      // that team's extensions too (docs/ADMIN-API.md). A bad token here is not an error.
      const bearer = token !== undefined ? await options.bearers.verify(token) : undefined;
      if (bearer) contexts.set(request, contextOf(request, bearer, await options.types.typesOf(options.storage.db, bearer.team)));
      return;
    }
    if (token === undefined) {
      throw new ScimError(401, 'Authentication required: send the access token in the Authorization header', undefined, {
        'www-authenticate': 'Bearer realm="rollcall"',
      });
    }
    const bearer = await options.bearers.verify(token);
    if (!bearer) {
      throw new ScimError(401, 'The access token is invalid, expired or revoked', undefined, {
        'www-authenticate': 'Bearer realm="rollcall", error="invalid_token"',
      });
    }
    // A provisioning token's use, or a connection's (through its clients too), is remembered.
    if (bearer.clientId === null || bearer.connectionId !== null) options.lastUsed?.used(bearer.tokenHash, bearer.connectionId);
    const types = await options.types.typesOf(options.storage.db, bearer.team);
    options.journal?.authenticated(request, { teamId: bearer.team.id, clientId: bearer.clientId, tokenHash: bearer.tokenHash, connectionId: bearer.connectionId, types });
    options.accessLog?.team(request, bearer.team);
    const reads = request.method === 'GET' || request.method === 'HEAD' || (request.method === 'POST' && route !== undefined && SEARCH.test(route));
    const needed = reads ? 'read' : 'write';
    if (!bearer.scopes.has(needed)) {
      throw new ScimError(403, `This request needs the "${needed}" scope`, undefined, {
        'www-authenticate': `Bearer realm="rollcall", error="insufficient_scope", scope="${needed}"`,
      });
    }
    contexts.set(request, contextOf(request, bearer, types));
    tokenHashes.set(request, bearer.tokenHash);
    void reply;
  });

  const contextOf = (request: FastifyRequest, bearer: Bearer, types: TeamTypes): ScimContext => ({
    storage: options.storage,
    clock: options.clock,
    baseUrl: options.baseUrl,
    team: bearer.team,
    actor: bearerActor(bearer),
    requestId: request.id,
    cursorSecret: options.cursorSecret,
    passwords: options.passwords,
    types,
    ...(options.scans ? { scans: options.scans } : {}),
    ...(options.deltaWalkRows !== undefined ? { deltaWalkRows: options.deltaWalkRows } : {}),
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = scimErrorOf(error) ?? classify(error, request);
    if (known) return sendScimError(request, reply, known);
    // A statement the database stopped outside a scan's deadline (an operator's cancel): the
    // server's trouble, worth a retry, not an unknown failure.
    if (options.storage.hooks.isDeadline(error)) {
      request.log.warn({ err: error }, 'statement stopped by the database');
      return sendScimError(request, reply, new ScimError(503, 'The database stopped a statement of this request before it finished; retry later', undefined, { 'retry-after': '1' }));
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendScimError(request, reply, new ScimError(500, 'Internal server error'));
  });

  app.setNotFoundHandler((request, reply) => sendScimError(request, reply, noSuchEndpoint(request)));

  options.journal?.register(app);

  // Before the routes: its preHandler queues the writes that prefer an asynchronous answer.
  if (options.asyncQueue) registerAsync(app, { queue: options.asyncQueue, baseUrl: options.baseUrl, context: (request) => contexts.get(request), tokenHash: (request) => tokenHashes.get(request) });

  registerScimRoutes(app, {
    baseUrl: options.baseUrl,
    discovery: options.discovery,
    bulks: options.bulks ?? new ScanGate(),
    ...(options.eventRetentionDays !== undefined ? { eventRetentionDays: options.eventRetentionDays } : {}),
    context: (request) => {
      const ctx = contexts.get(request);
      if (!ctx) throw new ScimError(401, 'Authentication required');
      return ctx;
    },
    types: (request) => {
      const ctx = contexts.get(request);
      return ctx ? typesOf(ctx) : CORE_TYPES;
    },
  });
}
