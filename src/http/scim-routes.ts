/**
 * SCIM routes (RFC 7644 section 3; the contract's paths): each handler parses the request,
 * calls one service function and replies with the status codes of DESIGN.md section 4. No rules,
 * no SQL, no attribute names here.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ScimContext } from '../scim/context.ts';
import { typesOf } from '../scim/context.ts';
import type { TeamTypes } from '../scim/schema/extensions.ts';
import type { DiscoveryCache } from '../scim/discovery-cache.ts';
import {
  resourceTypeByName,
  schemaById,
  serviceProviderConfig,
} from '../scim/discovery.ts';
import { catalogWriteRefusal, getCatalogResource, listCatalog } from '../scim/catalog-resources.ts';
import { badRequest, ScimError } from '../scim/errors.ts';
import * as groups from '../scim/groups.ts';
import { searchRoot } from '../scim/search.ts';
import { asksDelta, deltaQuery, newDeltaToken } from '../scim/delta.ts';
import type { DeltaParams } from '../scim/delta.ts';
import type { ListResult } from '../scim/representation.ts';
import { parseListQuery, parseProjection } from '../scim/query.ts';
import { withAccess } from '../scim/access-filter.ts';
import type { RawListParams } from '../scim/query.ts';
import { listResponse } from '../scim/representation.ts';
import type { Resource } from '../scim/representation.ts';
import type { ResourceTypeDef } from '../scim/schema/types.ts';
import { SEARCH_REQUEST } from '../scim/schema/urns.ts';
import * as users from '../scim/users.ts';
import type { Preconditions, Versioned } from '../scim/users.ts';
import { responseType, scimPayload } from './scim-payload.ts';
import { documented } from './openapi/route-doc.ts';
import type { RouteDoc } from './openapi/route-doc.ts';
import { scimDocs } from './openapi/routes-scim.ts';
import { registerBulkRoute } from './scim-bulk.ts';
import type { ScanGate } from '../scim/scan-gate.ts';

/** A declared route's options; a parameter that fails its schema is a SCIM 400 (cursor: invalidCursor). */
const doc = (d: RouteDoc) => documented(d, (message, parameter) => new ScimError(400, message, parameter === 'cursor' ? 'invalidCursor' : 'invalidValue'));

export interface RouteOptions {
  readonly baseUrl: string;
  readonly context: (request: FastifyRequest) => ScimContext;
  /** The resource types of the request's team (its extensions), the core ones without a token. */
  readonly types: (request: FastifyRequest) => TeamTypes;
  /** The team's /Schemas and /ResourceTypes, rendered once per schema version. */
  readonly discovery: DiscoveryCache;
  /** This instance's Bulk requests in progress per team (scim/bulk/gate.ts). */
  readonly bulks: ScanGate;
  /** The change feed's retention in days (EVENT_RETENTION_DAYS): how long a delta token lasts at least. */
  readonly eventRetentionDays?: number;
}

type Params = { id: string };
type CatalogParams = { endpoint: string; id?: string };

/** The answer to a path no route serves; the plugin's not-found handler answers with it too. */
export const noSuchEndpoint = (request: FastifyRequest): ScimError =>
  new ScimError(404, `No SCIM endpoint ${request.method} ${request.url.split('?')[0]}`);
type Query = Record<string, string | undefined>;

function send(request: FastifyRequest, reply: FastifyReply, status: number, body: unknown, etag?: string): FastifyReply {
  if (etag) reply.header('etag', etag);
  return reply.code(status).header('content-type', responseType(request)).send(scimPayload(body));
}

function sendResource(request: FastifyRequest, reply: FastifyReply, status: number, v: Versioned): FastifyReply {
  if (status === 201) {
    const meta = v.resource.meta as { location?: string } | undefined;
    if (meta?.location) reply.header('location', meta.location);
  }
  return send(request, reply, status, v.resource, v.etag);
}

function preconditions(request: FastifyRequest): Preconditions {
  const ifMatch = request.headers['if-match'];
  return typeof ifMatch === 'string' ? { ifMatch } : {};
}

/** GET with If-None-Match naming the current version answers 304 (RFC 7232 section 3.2). */
function notModified(request: FastifyRequest, etag: string): boolean {
  const header = request.headers['if-none-match'];
  if (typeof header !== 'string') return false;
  return header.trim() === '*' || header.split(',').some((t) => t.trim() === etag);
}

function searchParams(body: unknown): RawListParams {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest('invalidSyntax', 'A search request body must be a SearchRequest object');
  }
  const b = body as Record<string, unknown>;
  if (b.schemas !== undefined && !(Array.isArray(b.schemas) && b.schemas.includes(SEARCH_REQUEST))) {
    throw badRequest('invalidSyntax', `A search request's schemas must contain ${SEARCH_REQUEST}`);
  }
  return b;
}

interface ResourceService {
  readonly endpoint: '/Users' | '/Groups';
  list(ctx: ScimContext, params: RawListParams): Promise<ListResult>;
  get(ctx: ScimContext, id: string, query: Query): Promise<Versioned>;
  create(ctx: ScimContext, body: unknown, query: Query): Promise<Versioned>;
  replace(ctx: ScimContext, id: string, body: unknown, pre: Preconditions, query: Query): Promise<Versioned>;
}

// Each request reads and writes through its team's resource types (core + extensions).
const userRt = (ctx: ScimContext): ResourceTypeDef => typesOf(ctx).User;
const groupRt = (ctx: ScimContext): ResourceTypeDef => typesOf(ctx).Group;

const userService: ResourceService = {
  endpoint: '/Users',
  list: (ctx, params) => users.listUsers(ctx, withAccess(ctx, parseListQuery(userRt(ctx), params), params.access)),
  get: (ctx, id, q) => users.getUser(ctx, id, parseProjection(userRt(ctx), q)),
  create: (ctx, body, q) => users.createUser(ctx, body, parseProjection(userRt(ctx), q)),
  replace: (ctx, id, body, pre, q) => users.replaceUser(ctx, id, body, pre, parseProjection(userRt(ctx), q)),
};

const groupService: ResourceService = {
  endpoint: '/Groups',
  list: (ctx, params) => groups.listGroups(ctx, parseListQuery(groupRt(ctx), params)),
  get: (ctx, id, q) => groups.getGroup(ctx, id, parseProjection(groupRt(ctx), q)),
  create: (ctx, body, q) => groups.createGroup(ctx, body, parseProjection(groupRt(ctx), q)),
  replace: (ctx, id, body, pre, q) => groups.replaceGroup(ctx, id, body, pre, parseProjection(groupRt(ctx), q)),
};

function resourceRoutes(app: FastifyInstance, options: RouteOptions, service: ResourceService): void {
  const base = service.endpoint;
  const kind = base === '/Users' ? 'User' : 'Group';
  const ctx = options.context;
  const rtOf = (c: ScimContext): ResourceTypeDef => typesOf(c)[kind];
  // A list or search page, or, when it asks for deltaQuery, a delta query page (scim/delta.ts).
  const listOrDelta = (c: ScimContext, params: DeltaParams): Promise<ListResult> =>
    asksDelta(params) ? deltaQuery(c, kind, params, parseProjection(rtOf(c), params), (p) => service.list(c, p)) : service.list(c, params);

  app.get<{ Querystring: Query }>(base, doc(scimDocs.list(kind)), async (request, reply) =>
    send(request, reply, 200, listResponse(await listOrDelta(ctx(request), request.query))),
  );
  app.post(`${base}/.search`, doc(scimDocs.search(kind)), async (request, reply) =>
    send(request, reply, 200, listResponse(await listOrDelta(ctx(request), searchParams(request.body)))),
  );
  // DESIGN.md section 14's paths for delta query: a token for the changes from now on, and a
  // delta asked with the draft's request message (a SearchRequest carrying deltaToken).
  app.get(`${base}/.deltaToken`, doc(scimDocs.deltaToken(kind)), async (request, reply) =>
    send(request, reply, 200, listResponse({ totalResults: 0, resources: [], nextDeltaToken: await newDeltaToken(ctx(request), kind) })),
  );
  app.post(`${base}/.delta`, doc(scimDocs.delta(kind)), async (request, reply) => {
    const params: DeltaParams = searchParams(request.body);
    if (params.deltaToken === undefined) throw badRequest('invalidValue', `A delta request carries the deltaToken of a previous answer (GET ${base}/.deltaToken gives a first one)`);
    return send(request, reply, 200, listResponse(await listOrDelta(ctx(request), { ...params, deltaQuery: params.deltaQuery ?? true })));
  });
  app.get<{ Params: Params; Querystring: Query }>(`${base}/:id`, doc(scimDocs.get(kind)), async (request, reply) => {
    const v = await service.get(ctx(request), request.params.id, request.query);
    if (notModified(request, v.etag)) return reply.code(304).header('etag', v.etag).send();
    return sendResource(request, reply, 200, v);
  });
  app.post<{ Querystring: Query }>(base, doc(scimDocs.create(kind)), async (request, reply) =>
    sendResource(request, reply, 201, await service.create(ctx(request), request.body, request.query)),
  );
  app.put<{ Params: Params; Querystring: Query }>(`${base}/:id`, doc(scimDocs.replace(kind)), async (request, reply) =>
    sendResource(
      request,
      reply,
      200,
      await service.replace(ctx(request), request.params.id, request.body, preconditions(request), request.query),
    ),
  );
}

export function registerScimRoutes(app: FastifyInstance, options: RouteOptions): void {
  const { baseUrl } = options;
  const ctx = options.context;

  // Discovery (RFC 7644 section 4); the contract spells the first one /ServiceProviderConfigs.
  for (const path of ['/ServiceProviderConfig', '/ServiceProviderConfigs']) {
    app.get(path, doc(scimDocs.serviceProviderConfig(path)), async (request, reply) => send(request, reply, 200, serviceProviderConfig(baseUrl, options.types(request), options.eventRetentionDays)));
  }
  const rendered = (request: FastifyRequest, reply: FastifyReply, bytes: Buffer) => reply.code(200).header('content-type', responseType(request)).send(bytes);
  app.get('/Schemas', doc(scimDocs.schemas), async (request, reply) => rendered(request, reply, options.discovery.schemas(options.types(request), baseUrl)));
  app.get<{ Params: Params }>('/Schemas/:id', doc(scimDocs.schema), async (request, reply) =>
    send(request, reply, 200, schemaById(request.params.id, baseUrl, options.types(request))),
  );
  app.get('/ResourceTypes', doc(scimDocs.resourceTypes), async (request, reply) => rendered(request, reply, options.discovery.resourceTypes(options.types(request), baseUrl)));
  app.get<{ Params: Params }>('/ResourceTypes/:id', doc(scimDocs.resourceType), async (request, reply) =>
    send(request, reply, 200, resourceTypeByName(request.params.id, baseUrl, options.types(request))),
  );

  resourceRoutes(app, options, userService);
  resourceRoutes(app, options, groupService);

  // RFC 7644 3.4.2.1 / 3.4.3: queries at the server root span Users and Groups (scim/search.ts);
  // delta query is per resource type (scim/delta.ts), so asked here it is refused, not ignored.
  const rootQuery = (params: DeltaParams): DeltaParams => {
    if (params.deltaQuery !== undefined || params.deltaToken !== undefined) throw badRequest('invalidValue', 'Delta query is served by /Users and /Groups, not at the server root');
    return params;
  };
  app.get<{ Querystring: Query }>('/', doc(scimDocs.listRoot), async (request, reply) =>
    send(request, reply, 200, listResponse(await searchRoot(options.context(request), rootQuery(request.query)))),
  );
  app.post('/.search', doc(scimDocs.search('root')), async (request, reply) =>
    send(request, reply, 200, listResponse(await searchRoot(options.context(request), rootQuery(searchParams(request.body))))),
  );

  app.patch<{ Params: Params; Querystring: Query }>('/Users/:id', doc(scimDocs.patch('User')), async (request, reply) =>
    sendResource(
      request,
      reply,
      200,
      await users.patchUser(ctx(request), request.params.id, request.body, preconditions(request), parseProjection(userRt(ctx(request)), request.query)),
    ),
  );
  app.delete<{ Params: Params }>('/Users/:id', doc(scimDocs.remove('User')), async (request, reply) => {
    const v = await users.deleteUser(ctx(request), request.params.id, preconditions(request));
    return reply.code(204).header('etag', v.etag).send();
  });
  // The contract's DELETE /Users carries no id: a filter must pick exactly one user.
  app.delete<{ Querystring: Query }>('/Users', doc(scimDocs.deactivateByFilter), async (request, reply) => {
    const v = await users.deactivateByFilter(ctx(request), parseListQuery(userRt(ctx(request)), request.query));
    return reply.code(204).header('etag', v.etag).send();
  });
  app.put<{ Params: Params; Querystring: Query }>('/Users/:id/activate', doc(scimDocs.activate), async (request, reply) =>
    sendResource(
      request,
      reply,
      200,
      await users.activateUser(ctx(request), request.params.id, preconditions(request), parseProjection(userRt(ctx(request)), request.query)),
    ),
  );

  app.patch<{ Params: Params; Querystring: Query }>('/Groups/:id', doc(scimDocs.patch('Group')), async (request, reply) => {
    const q = request.query;
    const wantsBody = q.attributes !== undefined || q.excludedAttributes !== undefined;
    const result = await groups.patchGroup(
      ctx(request),
      request.params.id,
      request.body,
      preconditions(request),
      wantsBody ? parseProjection(groupRt(ctx(request)), q) : undefined,
    );
    if (result.resource) return sendResource(request, reply, 200, result.resource);
    return reply.code(204).header('etag', result.etag).send();
  });
  app.delete<{ Params: Params }>('/Groups/:id', doc(scimDocs.remove('Group')), async (request, reply) => {
    await groups.deleteGroup(ctx(request), request.params.id, preconditions(request));
    return reply.code(204).send();
  });

  registerBulkRoute(app, { context: ctx, bulks: options.bulks });

  catalogRoutes(app, options);
}

/**
 * The team's catalog endpoints (scim/catalog-resources.ts): /Roles, /Entitlements and each
 * entitlement type's endpoint, served by parametric routes, which the router tries after every
 * static one (/Users, /Schemas, ...). A name that is not one of the team's catalog endpoints
 * answers exactly what an unknown path answers. Writes are refused (405).
 */
function catalogRoutes(app: FastifyInstance, options: RouteOptions): void {
  const ctx = options.context;
  app.get<{ Params: CatalogParams; Querystring: Query }>('/:endpoint', doc(scimDocs.catalogList), async (request, reply) => {
    const page = listCatalog(ctx(request), request.params.endpoint, request.query);
    if (!page) throw noSuchEndpoint(request);
    return send(request, reply, 200, listResponse(page));
  });
  app.get<{ Params: CatalogParams & Params; Querystring: Query }>('/:endpoint/:id', doc(scimDocs.catalogGet), async (request, reply) => {
    const resource = getCatalogResource(ctx(request), request.params.endpoint, request.params.id, request.query);
    if (!resource) throw noSuchEndpoint(request);
    return send(request, reply, 200, resource);
  });
  for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'] as const) {
    for (const item of [false, true]) {
      app.route<{ Params: CatalogParams }>({
        method,
        url: item ? '/:endpoint/:id' : '/:endpoint',
        ...doc(scimDocs.catalogWrite(method, item)),
        handler: async (request) => {
          throw catalogWriteRefusal(ctx(request), request.params.endpoint) ?? noSuchEndpoint(request);
        },
      });
    }
  }
}
