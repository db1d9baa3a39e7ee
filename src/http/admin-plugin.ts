/**
 * The team administration API under `/v2/admin` (what the console and scripts use to
 * manage a team's schema extensions and its catalog of roles and entitlements;
 * docs/ADMIN-API.md). Authenticated like SCIM, with a bearer access token of the team, which
 * must be an administrator's: a token issued by the operator (`rollcall token issue`: no
 * client, no user) or on behalf of a user whose userType is admin, with the `write` scope for
 * changes. A machine client's token (client credentials) is refused
 * (403). Errors are RFC 7644 3.12 bodies. Routes parse, call one function of
 * scim/team-schemas.ts or access/catalog.ts, and reply.
 */
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import type { Actor } from '../audit/events.ts';
import type { Clock } from '../clock.ts';
import { administersTeam } from '../oauth/administrators.ts';
import type { BearerCache } from '../oauth/bearer-cache.ts';
import type { Bearer } from '../oauth/tokens.ts';
import { bearerActor } from '../oauth/tokens.ts';
import { ScimError, scimErrorOf } from '../scim/errors.ts';
import { addSchema, listSchemas, removeSchema, showSchema } from '../scim/team-schemas.ts';
import { getCatalog, putCatalog } from '../access/catalog.ts';
import type { Storage } from '../storage/connect.ts';
import { unstorableText } from '../text.ts';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.ts';
import type { AccessLog } from './access-log.ts';
import { bearerToken, sendScimError } from './scim-plugin.ts';
import { documented } from './openapi/route-doc.ts';
import { addComponentSchemas } from './openapi/body-validation.ts';
import type { RouteDoc } from './openapi/route-doc.ts';
import { adminDocs } from './openapi/routes-other.ts';
import { registerMappingRoutes } from './admin-mappings.ts';

/** A declared route's options; a parameter that fails its schema is a SCIM 400 invalidValue. */
const doc = (d: RouteDoc) => documented(d, (message, _field, syntax) => new ScimError(400, message, syntax ? 'invalidSyntax' : 'invalidValue'));

export interface AdminPluginOptions {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly baseUrl: string;
  readonly bearers: BearerCache;
  /** Told after a schema change commits (scim/index-builder.ts). */
  readonly indexes: { kick(): void };
  /** The access log, told the team of each authenticated request. */
  readonly accessLog?: AccessLog;
}

const LIST_RESPONSE = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';

export async function adminPlugin(app: FastifyInstance, options: AdminPluginOptions): Promise<void> {
  const teams = new WeakMap<FastifyRequest, Bearer['team']>();
  const actors = new WeakMap<FastifyRequest, Actor>();
  const deps = { storage: options.storage, clock: options.clock, baseUrl: options.baseUrl, indexes: options.indexes };
  addComponentSchemas(app);

  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/scim+json', 'application/json'], { parseAs: 'string', bodyLimit: 256 * 1024 }, (_request, body, done) => {
    if (nestsDeeperThan(body as string)) {
      done(new ScimError(400, `The request body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels`, 'invalidSyntax'), undefined);
      return;
    }
    let parsed: unknown;
    try {
      parsed = body === '' ? undefined : JSON.parse(body as string);
    } catch {
      done(new ScimError(400, 'The request body is not valid JSON', 'invalidSyntax'), undefined);
      return;
    }
    if (unstorableText(parsed) !== undefined) {
      done(new ScimError(400, 'The body holds text that is not valid Unicode or contains NUL characters', 'invalidValue'), undefined);
      return;
    }
    done(null, parsed);
  });

  // The same rule for the path and the query (a schema id reaches the database).
  app.addHook('preValidation', async (request) => {
    if (unstorableText(request.params) !== undefined || unstorableText(request.query) !== undefined) {
      throw new ScimError(400, 'The URL holds text that is not valid Unicode or contains NUL characters', 'invalidValue');
    }
  });

  app.addHook('onRequest', async (request) => {
    const token = bearerToken(request.headers.authorization);
    if (token === undefined) throw new ScimError(401, 'Authentication required: send an administrator\'s access token of the team', undefined, { 'www-authenticate': 'Bearer realm="rollcall"' });
    const bearer = await options.bearers.verify(token);
    if (!bearer) throw new ScimError(401, 'The access token is invalid, expired or revoked', undefined, { 'www-authenticate': 'Bearer realm="rollcall", error="invalid_token"' });
    if (!(await administersTeam(options.storage.db, bearer))) {
      throw new ScimError(403, 'The team administration API needs an administrator\'s token (rollcall token issue, or a sign-in of a user whose userType is admin)');
    }
    const needed = request.method === 'GET' || request.method === 'HEAD' ? 'read' : 'write';
    if (!bearer.scopes.has(needed)) throw new ScimError(403, `This request needs the "${needed}" scope`);
    teams.set(request, bearer.team);
    options.accessLog?.team(request, bearer.team);
    actors.set(request, bearerActor(bearer));
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = scimErrorOf(error);
    if (known) return sendScimError(request, reply, known);
    if (error.statusCode === 413) return sendScimError(request, reply, new ScimError(413, 'The request body is too large'));
    request.log.error({ err: error }, 'unhandled error');
    return sendScimError(request, reply, new ScimError(500, 'Internal server error'));
  });
  app.setNotFoundHandler((request, reply) => sendScimError(request, reply, new ScimError(404, `No admin endpoint ${request.method} ${request.url.split('?')[0]}`)));

  const team = (request: FastifyRequest): Bearer['team'] => {
    const found = teams.get(request);
    if (!found) throw new ScimError(401, 'Authentication required');
    return found;
  };
  const change = (request: FastifyRequest) => ({ actor: actors.get(request) ?? { via: 'scim' as const, clientId: null, userId: null }, requestId: request.id });
  const json = 'application/scim+json; charset=utf-8';

  app.get('/Schemas', doc(adminDocs.list), async (request, reply) => {
    const views = await listSchemas(deps, team(request));
    return reply.header('content-type', json).send({ schemas: [LIST_RESPONSE], totalResults: views.length, Resources: views });
  });
  app.get<{ Params: { id: string } }>('/Schemas/:id', doc(adminDocs.get), async (request, reply) =>
    reply.header('content-type', json).send(await showSchema(deps, team(request), request.params.id, options.baseUrl)),
  );
  app.post('/Schemas', doc(adminDocs.create), async (request, reply) => {
    const body = request.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ScimError(400, 'The body must be {"resourceType": "User" | "Group", "required": boolean, "schema": {RFC 7643 section 7 schema}}', 'invalidSyntax');
    const b = body as Record<string, unknown>;
    const view = await addSchema(deps, team(request), { resourceType: b.resourceType ?? 'User', required: b.required, schema: b.schema }, change(request));
    return reply.code(201).header('content-type', json).send(view);
  });
  // The team's catalog of roles and entitlements (src/access/catalog.ts): a whole catalog may be
  // larger than a schema, so its PUT takes up to 4 MiB.
  app.get('/Catalog', doc(adminDocs.getCatalog), async (request, reply) => reply.header('content-type', json).send(await getCatalog(deps, team(request))));
  app.put<{ Querystring: { force?: string } }>('/Catalog', { ...doc(adminDocs.putCatalog), bodyLimit: 4 * 1024 * 1024 }, async (request, reply) =>
    reply.header('content-type', json).send(await putCatalog(deps, team(request), request.body, change(request), { force: request.query.force === 'true' })),
  );
  app.delete<{ Params: { id: string } }>('/Schemas/:id', doc(adminDocs.remove), async (request, reply) => {
    await removeSchema(deps, team(request), request.params.id, change(request));
    return reply.code(204).send();
  });
  // Groups mapped to roles and entitlements (admin-mappings.ts).
  registerMappingRoutes(app, { deps, team, change, doc });
}
