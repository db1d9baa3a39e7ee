/**
 * Declarations of the SCIM routes (scim-routes.ts), mounted at /v2/scim and at /scim (the
 * generator names the alias's operations apart). Query parameters are strings exactly as the
 * handlers read them (scim/query.ts): numbers are parsed, clamped or refused there with SCIM's
 * own messages, so the schemas only say what type arrives; attributes lists, filter and sort
 * parameters may also repeat (the values are joined with commas, as a SearchRequest's arrays are).
 */
import { errors, jsonAnswer, NO_CONTENT, ref } from './responses.ts';
import type { Security, JsonSchema, ResponseDoc, RouteDoc } from './route-doc.ts';
import { listResponse } from './components.ts';

const stringOrList = (description: string): JsonSchema => ({ anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }], description });
const PROJECTION: Record<string, JsonSchema> = {
  attributes: stringOrList('Comma-separated attribute paths to return (RFC 7644 3.9); names are case-insensitive.'),
  excludedAttributes: stringOrList('Comma-separated attribute paths not to return (RFC 7644 3.9).'),
};
const LISTING: Record<string, JsonSchema> = {
  ...PROJECTION,
  filter: stringOrList('A SCIM filter (RFC 7644 3.4.2.2), e.g. userName eq "bjensen".'),
  sortBy: stringOrList('The attribute path to sort by (RFC 7644 3.4.2.3).'),
  sortOrder: stringOrList('ascending (default) or descending.'),
  startIndex: { type: 'string', description: 'Index paging: the 1-based index of the first result (an integer; values under 1 count as 1). Not with cursor.' },
  count: { type: 'string', description: 'The most results per page (an integer; clamped to the server\'s maximum, negative counts as 0).' },
  cursor: { type: 'string', description: 'Cursor paging (RFC 9865): empty for the first page, then a nextCursor or previousCursor value. Not with startIndex.' },
};
/** Delta query (draft-sehgal-scim-delta-query, a draft; scim/delta.ts) on the Users and Groups lists. */
const DELTA: Record<string, JsonSchema> = {
  deltaQuery: { type: 'string', description: 'Delta query (draft-sehgal-scim-delta-query): present (empty) or true asks for it. Without deltaToken: a full scan paged by cursor whose last page carries nextDeltaToken. Not with filter, sortBy, sortOrder, access or startIndex.' },
  deltaToken: { type: 'string', description: 'With deltaQuery: the changes since this token (a nextDeltaToken value): changed resources as they are now, deleted and hidden ones as tombstones (meta.isDeleted true), paged by cursor; the last page carries the next token. 400 expiredDeltaToken when the change feed no longer holds every change after it.' },
};
const DELTA_ANSWER = { type: 'object', additionalProperties: true, description: 'A resource as it is now, or a tombstone: schemas, id, meta {resourceType, isDeleted: true, location}.' };
const DELTA_REQUEST: JsonSchema = {
  type: 'object',
  title: 'DeltaRequest',
  description: 'A SearchRequest carrying the delta query draft\'s parameters.',
  properties: {
    schemas: { type: 'array', items: { type: 'string' }, description: 'Contains urn:ietf:params:scim:api:messages:2.0:SearchRequest.' },
    deltaQuery: { anyOf: [{ type: 'boolean' }, { type: 'string' }], description: 'true (the default here).' },
    deltaToken: { type: 'string', description: 'A nextDeltaToken value.' },
    cursor: { type: 'string', description: 'A nextCursor value of the same delta.' },
    count: { type: 'integer', description: 'The most resources per page (1 to the maximum page size).' },
    attributes: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
    excludedAttributes: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
  },
  required: ['deltaToken'],
  additionalProperties: true,
};
/** Users only: effective access (direct or through a mapped group), ANDed with filter. */
const ACCESS: JsonSchema = { type: 'string', description: 'Only users that hold this entry, directly or through a mapped group (active users): role:VALUE or entitlement:TYPE:VALUE, e.g. role:admin, entitlement:License:e5. ANDed with filter.' };
const query = (properties: Record<string, JsonSchema>): JsonSchema => ({ type: 'object', properties });
const ID: JsonSchema = { type: 'object', properties: { id: { type: 'string', description: 'The resource id.' } }, required: ['id'] };

export const SCIM_READ: Security = [{ oauth2: ['read'] }, { bearerToken: ['read'] }];
export const SCIM_WRITE: Security = [{ oauth2: ['write'] }, { bearerToken: ['write'] }];
/** Discovery answers without a token; with one of a team it shows that team's extensions. */
const DISCOVERY_SECURITY: Security = [{}, { oauth2: [] }, { bearerToken: [] }];

const IF_MATCH = { name: 'If-Match', description: 'The version (ETag) the change applies to; 412 when it is not the current one.', schema: { type: 'string' } };
const IF_NONE_MATCH = { name: 'If-None-Match', description: 'A version the client holds; 304 when it is still current.', schema: { type: 'string' } };
const ETAG = { etag: { description: 'The resource version (weak ETag).', schema: { type: 'string' } } };
const LOCATION = { location: { description: 'The new resource\'s URL.', schema: { type: 'string' } } };

/** RFC 7240 / RFC 9967 2.5.1.1: the asynchronous request's preference, and the 202 it gets. */
const PREFER = { name: 'Prefer', description: 'respond-async (RFC 9967 2.5.1.1) queues the request and answers 202; wait=N (seconds, at most 10) first waits that long for the outcome. A request that cannot be queued (the team\'s async.queued or async.bytes is full) is answered synchronously, without Preference-Applied.', schema: { type: 'string' } };
const TEXT = { type: 'string' };
const ACCEPTED: ResponseDoc = {
  description: 'Queued (Prefer: respond-async); no body. The outcome arrives as an RFC 9967 asyncresp event whose txn is Set-Txn (a Bulk: one per operation, txn Set-Txn:i), and at the status URL in Location.',
  headers: {
    'set-txn': { description: 'The request\'s transaction id (RFC 9967 section 3): the txn of its completion events.', schema: TEXT },
    'preference-applied': { description: 'respond-async.', schema: TEXT },
    location: { description: 'The status URL (GET, read scope): /AsyncRequests/{txn} under the prefix the request used.', schema: TEXT },
    'retry-after': { description: 'Seconds before the status is worth reading.', schema: TEXT },
  },
};
const ASYNC_STATUS: JsonSchema = {
  type: 'object',
  title: 'AsyncRequest',
  description: 'Where an asynchronous request stands; once done, its outcome: a single write\'s as a BulkResponse operation (method, version, location, status, response on error), a Bulk\'s BulkResponse.',
  properties: {
    schemas: { type: 'array', items: TEXT },
    id: TEXT,
    status: { type: 'string', enum: ['queued', 'running', 'done'] },
    method: TEXT,
    path: TEXT,
    operations: { type: 'integer' },
    completed: { type: 'integer' },
    accepted: { type: 'string', format: 'date-time' },
    finished: { type: 'string', format: 'date-time' },
    response: { type: 'object', additionalProperties: true },
  },
  required: ['schemas', 'id', 'status', 'method', 'path', 'operations', 'completed', 'accepted'],
  additionalProperties: false,
};

const AUTH_ERRORS = [400, 401, 403, 429, 500, 503];
const BODY_ERRORS = [413, 415];
const body = (schema: JsonSchema, description: string) => ({ required: true, description, content: { 'application/scim+json': schema, 'application/json': schema } });
const resource = (name: string, description: string, headers: ResponseDoc['headers'] = ETAG): ResponseDoc => ({ ...jsonAnswer(description, ref(name)), headers });

type Kind = 'User' | 'Group';

/** The catalog endpoints (scim/catalog-resources.ts): one parametric route serves every one of them. */
const ENDPOINT = { type: 'string', description: 'Roles, Entitlements, or the endpoint of one of the team\'s entitlement types without its slash (e.g. Licenses), as /ResourceTypes lists them. Any other name answers 404, as an unknown path does.' };
const CATALOG_PARAMS: JsonSchema = { type: 'object', properties: { endpoint: ENDPOINT }, required: ['endpoint'] };
const CATALOG_ITEM_PARAMS: JsonSchema = { type: 'object', properties: { endpoint: ENDPOINT, id: { type: 'string', description: 'The role\'s or entitlement\'s value, compared exactly.' } }, required: ['endpoint', 'id'] };
const CATALOG_RESOURCE: JsonSchema = {
  type: 'object',
  title: 'CatalogResource',
  description: 'A role or an entitlement of the team\'s catalog. The Okta form (urn:okta:scim:schemas:core:1.0:Role / :Entitlement) carries displayName and description; the IETF draft\'s (urn:ietf:params:scim:schemas:core:2.0:Role / :Entitlement) value, display, supported and limitedAssignmentsPermitted; entitlements carry their type\'s name as type. Which attributes an answer holds follows attributes / excludedAttributes.',
  properties: {
    schemas: { type: 'array', items: { type: 'string' } },
    id: { type: 'string', description: 'The value.' },
    displayName: { type: 'string' },
    description: { type: 'string' },
    type: { type: 'string', description: 'The entitlement type\'s name.' },
    value: { type: 'string' },
    display: { type: 'string' },
    supported: { type: 'boolean' },
    limitedAssignmentsPermitted: { type: 'boolean' },
    meta: { type: 'object', properties: { resourceType: { type: 'string' }, location: { type: 'string' } }, additionalProperties: true },
  },
  required: ['schemas', 'id'],
  additionalProperties: true,
};
const CATALOG_TAG = 'SCIM roles and entitlements';
const BULK_REQUEST_SCHEMA: JsonSchema = {
  type: 'object',
  title: 'BulkRequest',
  properties: {
    schemas: { type: 'array', items: { type: 'string' }, description: 'Must contain urn:ietf:params:scim:api:messages:2.0:BulkRequest.' },
    failOnErrors: { type: 'integer', minimum: 1, description: 'Stop after this many failed operations.' },
    Operations: {
      type: 'array',
      maxItems: 1000,
      items: {
        type: 'object',
        properties: {
          method: { type: 'string', enum: ['POST', 'PUT', 'PATCH', 'DELETE'] },
          path: { type: 'string', description: 'Under the SCIM base: /Users or /Groups for POST, /Users/{id} or /Groups/{id} (or bulkId:<id> for an id this request creates) otherwise.' },
          bulkId: { type: 'string', description: 'Required on POST; unique within the request.' },
          version: { type: 'string', description: 'If-Match for this operation: the ETag it applies to.' },
          data: { type: 'object', additionalProperties: true, description: 'The body the single request would carry (a resource, or a PatchOp).' },
        },
        required: ['method', 'path'],
        additionalProperties: true,
      },
    },
  },
  required: ['schemas', 'Operations'],
  additionalProperties: true,
};
const BULK_RESPONSE_SCHEMA: JsonSchema = {
  type: 'object',
  title: 'BulkResponse',
  properties: {
    schemas: { type: 'array', items: { type: 'string' } },
    Operations: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          method: { type: 'string' },
          bulkId: { type: 'string' },
          version: { type: 'string' },
          location: { type: 'string', description: 'The resource\'s URL (absent for a failed POST).' },
          status: { type: 'string', description: 'The HTTP status the operation alone would have answered.' },
          response: { type: 'object', additionalProperties: true, description: 'The SCIM error of a failed operation (RFC 7644 3.12).' },
        },
        required: ['method', 'status'],
        additionalProperties: true,
      },
    },
  },
  required: ['schemas', 'Operations'],
  additionalProperties: true,
};
type WriteMethod = 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export const scimDocs = {
  serviceProviderConfig: (path: string): RouteDoc => ({
    summary: 'The service provider configuration',
    description: `RFC 7643 section 5 (${path}).`,
    tags: ['SCIM discovery'],
    operationId: path === '/ServiceProviderConfig' ? 'getServiceProviderConfig' : 'getServiceProviderConfigs',
    security: DISCOVERY_SECURITY,
    responses: { '200': jsonAnswer('The configuration.', ref('ServiceProviderConfig')), ...errors('scim', [400, 500]) },
    errors: 'scim',
  }),
  schemas: {
    summary: 'The schemas (core, enterprise and the team\'s extensions)',
    tags: ['SCIM discovery'],
    operationId: 'listSchemas',
    security: DISCOVERY_SECURITY,
    responses: { '200': jsonAnswer('The schemas.', listResponse(ref('Schema'))), ...errors('scim', [400, 500]) },
    errors: 'scim',
  } satisfies RouteDoc,
  schema: {
    summary: 'One schema by URN',
    tags: ['SCIM discovery'],
    operationId: 'getSchema',
    security: DISCOVERY_SECURITY,
    params: ID,
    responses: { '200': jsonAnswer('The schema.', ref('Schema')), ...errors('scim', [400, 404, 500]) },
    errors: 'scim',
  } satisfies RouteDoc,
  resourceTypes: {
    summary: 'The resource types',
    tags: ['SCIM discovery'],
    operationId: 'listResourceTypes',
    security: DISCOVERY_SECURITY,
    responses: { '200': jsonAnswer('The resource types.', listResponse(ref('ResourceType'))), ...errors('scim', [400, 500]) },
    errors: 'scim',
  } satisfies RouteDoc,
  resourceType: {
    summary: 'One resource type',
    tags: ['SCIM discovery'],
    operationId: 'getResourceType',
    security: DISCOVERY_SECURITY,
    params: ID,
    responses: { '200': jsonAnswer('The resource type.', ref('ResourceType')), ...errors('scim', [400, 404, 500]) },
    errors: 'scim',
  } satisfies RouteDoc,
  list: (kind: Kind): RouteDoc => ({
    summary: `List or filter ${kind}s`,
    tags: [`SCIM ${kind}s`],
    operationId: `list${kind}s`,
    security: SCIM_READ,
    querystring: query(kind === 'User' ? { ...LISTING, ...DELTA, access: ACCESS } : { ...LISTING, ...DELTA }),
    responses: { '200': jsonAnswer(`A page of ${kind}s (with deltaQuery and deltaToken: of changes, tombstones included).`, listResponse({ anyOf: [ref(kind), DELTA_ANSWER] })), ...errors('scim', AUTH_ERRORS) },
    errors: 'scim',
  }),
  deltaToken: (kind: Kind): RouteDoc => ({
    summary: `A delta token for ${kind}s: the changes from now on`,
    description: 'Delta query (draft-sehgal-scim-delta-query, a draft implementation): an empty ListResponse whose nextDeltaToken names the change feed\'s current end. Send it as deltaToken (GET ?deltaQuery&deltaToken= or POST /.delta) to read what changed since.',
    tags: [`SCIM ${kind}s`],
    operationId: `get${kind}DeltaToken`,
    security: SCIM_READ,
    responses: { '200': jsonAnswer('The token.', listResponse(DELTA_ANSWER)), ...errors('scim', AUTH_ERRORS) },
    errors: 'scim',
  }),
  delta: (kind: Kind): RouteDoc => ({
    summary: `The ${kind}s changed since a delta token`,
    description:
      'Delta query (draft-sehgal-scim-delta-query, a draft implementation), a read (scope read): each resource changed since the token once, at its last change, as it is now; deleted ones, and deactivated users a team hides, as tombstones (meta.isDeleted true). Paged by cursor (nextCursor); the last page carries nextDeltaToken. 400 invalidValue for a token this server did not issue for this team and type, expiredDeltaToken when the change feed no longer holds every change after it (start again with a full scan). A delta takes one of the team\'s scans.concurrent places (429 over it).',
    tags: [`SCIM ${kind}s`],
    operationId: `delta${kind}s`,
    security: SCIM_READ,
    requestBody: body(DELTA_REQUEST, 'The delta request.'),
    responses: { '200': jsonAnswer('A page of changes.', listResponse(DELTA_ANSWER)), ...errors('scim', [...AUTH_ERRORS, ...BODY_ERRORS]) },
    errors: 'scim',
  }),
  search: (kind: Kind | 'root'): RouteDoc => ({
    summary: kind === 'root' ? 'Search Users and Groups together' : `Search ${kind}s with a SearchRequest`,
    description: 'RFC 7644 3.4.3: a POST that only reads (scope read).',
    tags: [kind === 'root' ? 'SCIM search' : `SCIM ${kind}s`],
    operationId: kind === 'root' ? 'searchAll' : `search${kind}s`,
    security: SCIM_READ,
    requestBody: body(ref('SearchRequest'), 'The query.'),
    responses: { '200': jsonAnswer('A page of results (with deltaQuery and deltaToken: of changes, tombstones included).', listResponse(kind === 'root' ? { type: 'object', additionalProperties: true } : { anyOf: [ref(kind), DELTA_ANSWER] })), ...errors('scim', [...AUTH_ERRORS, ...BODY_ERRORS]) },
    errors: 'scim',
  }),
  listRoot: {
    summary: 'List Users and Groups together',
    description: 'RFC 7644 3.4.2.1: a query at the server root spans Users and Groups.',
    tags: ['SCIM search'],
    operationId: 'listAll',
    security: SCIM_READ,
    querystring: query(LISTING),
    responses: { '200': jsonAnswer('A page of Users and Groups.', listResponse({ type: 'object', additionalProperties: true })), ...errors('scim', AUTH_ERRORS) },
    errors: 'scim',
  } satisfies RouteDoc,
  get: (kind: Kind): RouteDoc => ({
    summary: `Get a ${kind}`,
    tags: [`SCIM ${kind}s`],
    operationId: `get${kind}`,
    security: SCIM_READ,
    params: ID,
    querystring: query(PROJECTION),
    headers: [IF_NONE_MATCH],
    responses: { '200': resource(kind, `The ${kind}.`), '304': { description: 'Not modified (If-None-Match).', headers: ETAG }, ...errors('scim', [...AUTH_ERRORS, 404]) },
    errors: 'scim',
  }),
  create: (kind: Kind): RouteDoc => ({
    summary: `Create a ${kind}`,
    tags: [`SCIM ${kind}s`],
    operationId: `create${kind}`,
    security: SCIM_WRITE,
    querystring: query(PROJECTION),
    headers: [PREFER],
    requestBody: body(ref(kind), `The new ${kind}. Attribute names are case-insensitive.`),
    responses: { '201': resource(kind, `The created ${kind}.`, { ...ETAG, ...LOCATION }), '202': ACCEPTED, ...errors('scim', [...AUTH_ERRORS, 404, 409, ...BODY_ERRORS]) },
    errors: 'scim',
  }),
  replace: (kind: Kind): RouteDoc => ({
    summary: `Replace a ${kind}`,
    tags: [`SCIM ${kind}s`],
    operationId: `replace${kind}`,
    security: SCIM_WRITE,
    params: ID,
    querystring: query(PROJECTION),
    headers: [IF_MATCH, PREFER],
    requestBody: body(ref(kind), `The ${kind}'s new state.`),
    responses: { '200': resource(kind, `The replaced ${kind}.`), '202': ACCEPTED, ...errors('scim', [...AUTH_ERRORS, 404, 409, 412, ...BODY_ERRORS]) },
    errors: 'scim',
  }),
  patch: (kind: Kind): RouteDoc => ({
    summary: `Modify a ${kind} (PATCH)`,
    description: kind === 'Group' ? 'Answers 204 unless attributes or excludedAttributes ask for the Group back.' : undefined,
    tags: [`SCIM ${kind}s`],
    operationId: `patch${kind}`,
    security: SCIM_WRITE,
    params: ID,
    querystring: query(PROJECTION),
    headers: [IF_MATCH, PREFER],
    requestBody: body(ref('PatchOp'), 'RFC 7644 3.5.2 operations.'),
    responses: {
      '200': resource(kind, `The modified ${kind}.`),
      '202': ACCEPTED,
      ...(kind === 'Group' ? { '204': { description: 'Modified; no body.', headers: ETAG } } : {}),
      ...errors('scim', [...AUTH_ERRORS, 404, 409, 412, ...BODY_ERRORS]),
    },
    errors: 'scim',
  }),
  remove: (kind: Kind): RouteDoc => ({
    summary: `Delete a ${kind}`,
    tags: [`SCIM ${kind}s`],
    operationId: `delete${kind}`,
    security: SCIM_WRITE,
    params: ID,
    headers: [IF_MATCH, PREFER],
    responses: { '204': NO_CONTENT, '202': ACCEPTED, ...errors('scim', [...AUTH_ERRORS, 404, 409, 412]) },
    errors: 'scim',
  }),
  deactivateByFilter: {
    summary: 'Deactivate the one User a filter picks',
    description: 'The contract\'s DELETE /Users: the filter must pick exactly one user.',
    tags: ['SCIM Users'],
    operationId: 'deactivateUserByFilter',
    security: SCIM_WRITE,
    querystring: query(LISTING),
    responses: { '204': NO_CONTENT, ...errors('scim', [...AUTH_ERRORS, 404, 409]) },
    errors: 'scim',
  } satisfies RouteDoc,
  catalogList: {
    summary: 'List or filter the team\'s roles or entitlements',
    description: 'GET /Roles, /Entitlements (every type\'s, each with its type) or a type\'s endpoint (/Licenses). Index paging only; filter on id, displayName, type (Okta form) or the draft\'s attributes.',
    tags: [CATALOG_TAG],
    operationId: 'listCatalogResources',
    security: SCIM_READ,
    params: CATALOG_PARAMS,
    querystring: query(LISTING),
    responses: { '200': jsonAnswer('A page of roles or entitlements.', listResponse(CATALOG_RESOURCE)), ...errors('scim', [...AUTH_ERRORS, 404]) },
    errors: 'scim',
  } satisfies RouteDoc,
  catalogGet: {
    summary: 'Get one role or entitlement by value',
    tags: [CATALOG_TAG],
    operationId: 'getCatalogResource',
    security: SCIM_READ,
    params: CATALOG_ITEM_PARAMS,
    querystring: query(PROJECTION),
    responses: { '200': jsonAnswer('The role or entitlement.', CATALOG_RESOURCE), ...errors('scim', [...AUTH_ERRORS, 404]) },
    errors: 'scim',
  } satisfies RouteDoc,
  catalogWrite: (method: WriteMethod, item: boolean): RouteDoc => ({
    summary: `${method} on a catalog endpoint: refused`,
    description: 'The catalog is read-only through SCIM: 405 with Allow: GET (manage it with the CLI, PUT /v2/admin/Catalog or the console). A name that is not a catalog endpoint answers 404, as an unknown path does.',
    tags: [CATALOG_TAG],
    operationId: `${method.toLowerCase()}Catalog${item ? 'Resource' : 'Resources'}`,
    security: SCIM_WRITE,
    params: item ? CATALOG_ITEM_PARAMS : CATALOG_PARAMS,
    responses: {
      ...errors('scim', [...AUTH_ERRORS, 404, ...BODY_ERRORS]),
      '405': { ...errors('scim', [405])['405']!, headers: { allow: { description: 'GET.', schema: { type: 'string' } } } },
    },
    errors: 'scim',
  }),
  activate: {
    summary: 'Activate a User',
    tags: ['SCIM Users'],
    operationId: 'activateUser',
    security: SCIM_WRITE,
    params: ID,
    querystring: query(PROJECTION),
    headers: [IF_MATCH, PREFER],
    responses: { '200': resource('User', 'The activated User.'), '202': ACCEPTED, ...errors('scim', [...AUTH_ERRORS, 404, 409, 412, ...BODY_ERRORS]) },
    errors: 'scim',
  } satisfies RouteDoc,
  asyncStatus: {
    summary: 'The status and outcome of an asynchronous request',
    description: 'The Location of a 202 answered to Prefer: respond-async (RFC 9967 2.5.1.1). The team\'s own requests only; another team\'s or an unknown txn answers 404, as does one pruned after the events\' retention. Retry-After: 1 while it is not done.',
    tags: ['SCIM asynchronous requests'],
    operationId: 'getAsyncRequest',
    security: SCIM_READ,
    params: { type: 'object', properties: { txn: { type: 'string', description: 'The Set-Txn of the 202.' } }, required: ['txn'] },
    responses: {
      '200': { ...jsonAnswer('The request\'s status.', ASYNC_STATUS), headers: { 'retry-after': { description: 'While not done: seconds before reading again.', schema: TEXT } } },
      ...errors('scim', [...AUTH_ERRORS, 404]),
    },
    errors: 'scim',
  } satisfies RouteDoc,
  bulk: {
    summary: 'Run a bulk request (RFC 7644 3.7)',
    description:
      'POST, PUT, PATCH and DELETE operations on Users and Groups, each its own transaction, audit row and event, run after the POSTs whose bulkId they reference (bulkId:<id> in data values and path segments). ' +
      'Each operation answers its own status and, on failure, its SCIM error; the request answers 200 whatever they answer. failOnErrors stops after that many errors (later operations are absent). ' +
      'Limits (ServiceProviderConfig bulk): maxOperations 1000 and maxPayloadSize 4194304 bytes, over either 413 before any operation runs; a team runs at most bulk.concurrent Bulk requests at once (429 with Retry-After).',
    tags: ['SCIM bulk'],
    operationId: 'bulk',
    security: SCIM_WRITE,
    headers: [PREFER],
    requestBody: body(BULK_REQUEST_SCHEMA, 'The BulkRequest.'),
    responses: { '200': jsonAnswer('Each operation\'s outcome, in request order.', BULK_RESPONSE_SCHEMA), '202': ACCEPTED, ...errors('scim', [...AUTH_ERRORS, ...BODY_ERRORS]) },
    errors: 'scim',
  } satisfies RouteDoc,
};
