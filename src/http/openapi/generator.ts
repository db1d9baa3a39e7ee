/**
 * The OpenAPI 3.1 document, generated from the routes themselves: `collectRoutes` registers an
 * onRoute hook (before the plugins) that keeps every route's declaration (route-doc.ts), and
 * `buildDocument` turns them into paths, parameters, request bodies, responses, components and
 * security schemes. The rule for what is public: every route under a public prefix (PUBLIC
 * below: SCIM at /v2/scim and /scim, OAuth's machine endpoints, /.well-known, /v2/events,
 * /v2/admin) must carry a declaration, or building fails; routes outside them (console, sign-in
 * pages, /docs, /health, /metrics) are not part of the API and are left out. HEAD routes Fastify
 * adds for GET ones are left out. Output is deterministic: paths, methods, components sorted.
 */
import type { FastifyInstance } from 'fastify';
import type { TeamTypes } from '../../scim/schema/extensions.ts';
import { CORE_TYPES } from '../../scim/schema/extensions.ts';
import { catalogPaths } from './catalog-paths.ts';
import { STATIC_COMPONENTS } from './components.ts';
import type { JsonSchema, RouteDoc } from './route-doc.ts';
import { resourceComponents } from './scim-schemas.ts';

export const PUBLIC = /^\/(v2\/scim|scim|oauth\/(token|revoke|introspect)|\.well-known|v2\/events|v2\/admin|v2\/access|v2\/ssf|v2\/openapi\.json)(\/|$)/;

export interface CollectedRoute {
  readonly method: string;
  readonly url: string;
  readonly doc: RouteDoc | undefined;
  /** The body schema Fastify validates this route with (body-validation.ts), if any. */
  readonly body?: unknown;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The routes collectRoutes saw, with their declarations and validated body schemas. */
    openapiRoutes?: readonly CollectedRoute[];
  }
}

/** Keeps every route registered after this call (register it before the plugins). */
export function collectRoutes(app: FastifyInstance): CollectedRoute[] {
  const routes: CollectedRoute[] = [];
  app.decorate('openapiRoutes', routes);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) routes.push({ method: method.toUpperCase(), url: route.url, doc: route.config?.openapi, body: route.schema?.body });
  });
  return routes;
}

/** Fastify's `/Users/:id` is OpenAPI's `/Users/{id}`. */
export const openapiPath = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

const sortKeys = <T>(record: Record<string, T>): Record<string, T> => Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

function parameters(doc: RouteDoc): JsonSchema[] {
  const out: JsonSchema[] = [];
  for (const [where, schema] of [['path', doc.params], ['query', doc.querystring]] as const) {
    if (!schema) continue;
    const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((schema.required ?? []) as string[]);
    for (const [name, s] of Object.entries(props)) {
      const { description, ...rest } = s;
      out.push({ name, in: where, required: where === 'path' || required.has(name), ...(description ? { description } : {}), schema: rest });
    }
  }
  for (const h of doc.headers ?? []) out.push({ name: h.name, in: 'header', required: false, description: h.description, schema: h.schema });
  return out;
}

function operation(doc: RouteDoc, alias: boolean): JsonSchema {
  const responses: Record<string, JsonSchema> = {};
  for (const [status, r] of Object.entries(doc.responses)) {
    responses[status] = {
      description: r.description,
      ...(r.headers ? { headers: sortKeys(r.headers) } : {}),
      ...(r.content ? { content: Object.fromEntries(Object.entries(r.content).map(([type, schema]) => [type, { schema }])) } : {}),
    };
  }
  const params = parameters(doc);
  return {
    operationId: alias ? `${doc.operationId}_alias` : doc.operationId,
    summary: doc.summary,
    ...(doc.description || alias ? { description: [doc.description, alias ? 'The same operation under /scim, an alias of /v2/scim.' : undefined].filter(Boolean).join(' ') } : {}),
    tags: [...doc.tags],
    security: doc.security.map((r) => ({ ...r })),
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(doc.requestBody
      ? { requestBody: { required: doc.requestBody.required, ...(doc.requestBody.description ? { description: doc.requestBody.description } : {}), content: Object.fromEntries(Object.entries(doc.requestBody.content).map(([t, schema]) => [t, { schema }])) } }
      : {}),
    responses: sortKeys(responses),
  };
}

function securitySchemes(baseUrl: string): JsonSchema {
  const scopes = { read: 'Read SCIM resources, events and subscriptions', write: 'Create, change and delete them', scim: 'Both (the contract\'s scope)', ssf: 'Manage and poll the team\'s Shared Signals streams (SSF 1.0); granted only when asked for' };
  return {
    oauth2: {
      type: 'oauth2',
      description: 'Access tokens of Rollcall\'s own authorization server, sent as `Authorization: Bearer <token>`.',
      flows: {
        clientCredentials: { tokenUrl: `${baseUrl}/oauth/token`, refreshUrl: `${baseUrl}/oauth/token`, scopes },
        authorizationCode: { authorizationUrl: `${baseUrl}/oauth/authorize`, tokenUrl: `${baseUrl}/oauth/token`, refreshUrl: `${baseUrl}/oauth/token`, scopes },
      },
    },
    bearerToken: { type: 'http', scheme: 'bearer', description: 'A provisioning or administrator token (console, or `rollcall token issue`); the bare token without "Bearer " is accepted too.' },
    clientBasic: { type: 'http', scheme: 'basic', description: 'Token endpoint client authentication, client_secret_basic. The alternatives go in the form body: client_id and client_secret (client_secret_post), or client_assertion_type and client_assertion (private_key_jwt, RFC 7523), as TokenRequest describes.' },
    pollToken: { type: 'http', scheme: 'bearer', description: 'A poll subscription\'s own token (RFC 8936), printed once when the subscription is created.' },
  };
}

export interface DocumentOptions {
  readonly baseUrl: string;
  readonly version: string;
}

/** The document for a team's types (CORE_TYPES: the anonymous document). */
export function buildDocument(routes: readonly CollectedRoute[], options: DocumentOptions, types: TeamTypes = CORE_TYPES): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    if (route.method === 'HEAD' || !PUBLIC.test(route.url)) continue;
    if (!route.doc) throw new Error(`The public route ${route.method} ${route.url} has no OpenAPI declaration (src/http/openapi)`);
    const path = openapiPath(route.url);
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route.doc, route.url.startsWith('/scim/') || route.url === '/scim');
  }
  // A team's catalog endpoints by name, beside the parametric routes that serve them.
  Object.assign(paths, catalogPaths(paths, types));
  const sortedPaths = Object.fromEntries(Object.entries(sortKeys(paths)).map(([p, ops]) => [p, sortKeys(ops)]));
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: {
      title: 'Rollcall API',
      version: options.version,
      description: 'SCIM 2.0 (RFC 7643, RFC 7644) provisioning at /v2/scim (alias /scim), the OAuth 2.0 authorization server, the change feed and event subscriptions, and team administration. SCIM attribute names are case-insensitive. Requested with a team\'s access token, this document includes that team\'s schema extensions.',
    },
    servers: [{ url: options.baseUrl }],
    paths: sortedPaths,
    components: {
      schemas: sortKeys({ ...STATIC_COMPONENTS, ...resourceComponents(types) }),
      securitySchemes: securitySchemes(options.baseUrl),
    },
  };
}
