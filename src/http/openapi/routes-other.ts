/**
 * Declarations of the OAuth machine endpoints (oauth-plugin.ts), the events surface
 * (events-plugin.ts) and the team administration API (admin-plugin.ts). Their request bodies are
 * validated by Fastify against these very schemas (`validateBody`, body-validation.ts), then by
 * the domain modules for what JSON Schema cannot say (grants, subscription and extension rules). Events' `after` and `limit` are strings as queryInteger reads them.
 */
import { errors, jsonAnswer, NO_CONTENT, ref } from './responses.ts';
import type { Security, JsonSchema, RouteDoc } from './route-doc.ts';
import { listResponse } from './components.ts';

const FORM = 'application/x-www-form-urlencoded';
const TOKEN_CLIENT: Security = [{ clientBasic: [] }, {}];
const OAUTH_ERRORS = [400, 401, 413, 429, 500];
const oauthJson = (description: string, schema: JsonSchema) => jsonAnswer(description, schema, ['application/json']);
const ID: JsonSchema = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] };

export const oauthDocs = {
  token: {
    summary: 'Issue tokens',
    description: 'RFC 6749 section 3.2. The client authenticates with HTTP Basic (client_secret_basic), client_id and client_secret in the body (client_secret_post), or a JWT assertion (private_key_jwt, RFC 7523). A source address with too many failed requests is refused with 429 slow_down.',
    tags: ['OAuth'],
    operationId: 'token',
    security: TOKEN_CLIENT,
    requestBody: { required: true, content: { [FORM]: ref('TokenRequest') } },
    validateBody: true,
    responses: { '200': oauthJson('The tokens.', ref('TokenResponse')), ...errors('oauth', OAUTH_ERRORS) },
    errors: 'oauth',
  } satisfies RouteDoc,
  revoke: {
    summary: 'Revoke a token',
    description: 'RFC 7009.',
    tags: ['OAuth'],
    operationId: 'revoke',
    security: TOKEN_CLIENT,
    requestBody: { required: true, content: { [FORM]: ref('TokenReference') } },
    validateBody: true,
    responses: { '200': oauthJson('Revoked (or nothing to revoke).', { type: 'object' }), ...errors('oauth', OAUTH_ERRORS) },
    errors: 'oauth',
  } satisfies RouteDoc,
  introspect: {
    summary: 'Introspect a token',
    description: 'RFC 7662.',
    tags: ['OAuth'],
    operationId: 'introspect',
    security: TOKEN_CLIENT,
    requestBody: { required: true, content: { [FORM]: ref('TokenReference') } },
    validateBody: true,
    responses: { '200': oauthJson('Whether the token is active, and what it grants.', ref('IntrospectionResponse')), ...errors('oauth', OAUTH_ERRORS) },
    errors: 'oauth',
  } satisfies RouteDoc,
  postOnly: (path: string): RouteDoc => ({
    summary: `${path} accepts POST only`,
    tags: ['OAuth'],
    operationId: `${path.split('/').pop()}Get`,
    security: [],
    responses: errors('oauth', [405, 429]),
    errors: 'oauth',
  }),
  metadata: {
    summary: 'Authorization server metadata',
    description: 'RFC 8414.',
    tags: ['OAuth'],
    operationId: 'authorizationServerMetadata',
    security: [],
    responses: { '200': oauthJson('The metadata.', ref('AuthorizationServerMetadata')) },
    errors: 'oauth',
  } satisfies RouteDoc,
};

const EVENTS_READ: Security = [{ oauth2: ['read'] }, { bearerToken: ['read'] }];
const EVENTS_ADMIN: Security = [{ oauth2: ['write'] }, { bearerToken: ['write'] }];
const ADMIN_ERRORS = [400, 401, 403, 404, 500];
const json = (description: string, schema: JsonSchema) => jsonAnswer(description, schema, ['application/json']);
const jsonBody = (schema: JsonSchema, required = true) => ({ required, content: { 'application/json': schema } });
const ADMIN_NOTE = 'Needs an administrator\'s token of the team (write scope); a provisioning token is refused (403).';

export const eventsDocs = {
  jwks: {
    summary: 'The keys that verify SETs',
    tags: ['Events'],
    operationId: 'jwks',
    security: [],
    responses: { '200': jsonAnswer('The JWKS.', ref('Jwks'), ['application/jwk-set+json']) },
    errors: 'scim',
  } satisfies RouteDoc,
  feed: {
    summary: 'The change feed',
    description: 'Events of the token\'s team after a sequence number, oldest first.',
    tags: ['Events'],
    operationId: 'listEvents',
    security: EVENTS_READ,
    querystring: {
      type: 'object',
      properties: {
        after: { type: 'string', description: 'A whole number: the sequence to read after (0 by default; the previous page\'s next).' },
        limit: { type: 'string', description: 'A whole number from 1 to the maximum page size.' },
      },
    },
    responses: { '200': json('A page of events.', ref('EventPage')), ...errors('scim', [400, 401, 403, 410, 500]) },
    errors: 'scim',
  } satisfies RouteDoc,
  poll: {
    summary: 'Poll for SETs (RFC 8936)',
    description: 'Authenticated with the poll subscription\'s own token.',
    tags: ['Events'],
    operationId: 'poll',
    security: [{ pollToken: [] }],
    requestBody: jsonBody(ref('PollRequest'), false),
    validateBody: true,
    responses: { '200': json('Pending SETs.', ref('PollResponse')), ...errors('poll', [400, 401, 403, 404, 413, 415, 500]) },
    errors: 'poll',
  } satisfies RouteDoc,
  create: {
    summary: 'Create an event subscription',
    description: `${ADMIN_NOTE} A webhook subscription's answer carries its signing secret once.`,
    tags: ['Event subscriptions'],
    operationId: 'createSubscription',
    security: EVENTS_ADMIN,
    requestBody: jsonBody(ref('SubscriptionCreate')),
    validateBody: true,
    responses: { '201': json('The subscription and its one-time credential.', ref('SubscriptionCreated')), ...errors('scim', [...ADMIN_ERRORS, 409, 413, 415]) },
    errors: 'scim',
  } satisfies RouteDoc,
  list: {
    summary: 'List event subscriptions',
    tags: ['Event subscriptions'],
    operationId: 'listSubscriptions',
    security: EVENTS_READ,
    responses: { '200': json('The subscriptions.', ref('SubscriptionList')), ...errors('scim', [400, 401, 403, 500]) },
    errors: 'scim',
  } satisfies RouteDoc,
  get: {
    summary: 'Get an event subscription',
    tags: ['Event subscriptions'],
    operationId: 'getSubscription',
    security: EVENTS_READ,
    params: ID,
    responses: { '200': json('The subscription with its recent delivery attempts.', ref('Subscription')), ...errors('scim', ADMIN_ERRORS) },
    errors: 'scim',
  } satisfies RouteDoc,
  remove: {
    summary: 'Delete an event subscription',
    description: ADMIN_NOTE,
    tags: ['Event subscriptions'],
    operationId: 'deleteSubscription',
    security: EVENTS_ADMIN,
    params: ID,
    responses: { '204': NO_CONTENT, ...errors('scim', ADMIN_ERRORS) },
    errors: 'scim',
  } satisfies RouteDoc,
  action: (action: 'pause' | 'resume' | 'replay'): RouteDoc => ({
    summary: `${action[0]!.toUpperCase()}${action.slice(1)} an event subscription`,
    description: ADMIN_NOTE,
    tags: ['Event subscriptions'],
    operationId: `${action}Subscription`,
    security: EVENTS_ADMIN,
    params: ID,
    ...(action === 'replay' ? { requestBody: jsonBody(ref('ReplayRequest')), validateBody: true } : {}),
    responses: { '200': json('The subscription.', ref('Subscription')), ...errors('scim', [...ADMIN_ERRORS, 409, 413, 415]) },
    errors: 'scim',
  }),
  rotateSecret: {
    summary: 'Rotate a webhook subscription\'s signing secret',
    description: `${ADMIN_NOTE} The new secret is shown once; the old one keeps signing during the overlap.`,
    tags: ['Event subscriptions'],
    operationId: 'rotateSubscriptionSecret',
    security: EVENTS_ADMIN,
    params: ID,
    requestBody: jsonBody(ref('SecretRotateRequest'), false),
    validateBody: true,
    responses: { '200': json('The new secret.', ref('SecretRotated')), ...errors('scim', [...ADMIN_ERRORS, 409]) },
    errors: 'scim',
  } satisfies RouteDoc,
};

const ADMIN_SECURITY: Security = [{ oauth2: ['read'] }, { bearerToken: ['read'] }];
const ADMIN_WRITE: Security = [{ oauth2: ['write'] }, { bearerToken: ['write'] }];
const scimJson = (description: string, schema: JsonSchema) => jsonAnswer(description, schema, ['application/scim+json']);

export const adminDocs = {
  list: {
    summary: 'List the team\'s schema extensions',
    tags: ['Team administration'],
    operationId: 'listExtensions',
    security: ADMIN_SECURITY,
    responses: { '200': scimJson('The extensions.', listResponse(ref('ExtensionView'))), ...errors('scim', [401, 403, 500]) },
    errors: 'scim',
  } satisfies RouteDoc,
  get: {
    summary: 'Show one schema extension',
    tags: ['Team administration'],
    operationId: 'getExtension',
    security: ADMIN_SECURITY,
    params: ID,
    responses: { '200': scimJson('The extension\'s schema.', ref('Schema')), ...errors('scim', [400, 401, 403, 404, 500]) },
    errors: 'scim',
  } satisfies RouteDoc,
  create: {
    summary: 'Declare a schema extension',
    tags: ['Team administration'],
    operationId: 'createExtension',
    security: ADMIN_WRITE,
    requestBody: { required: true, content: { 'application/scim+json': ref('ExtensionDeclaration'), 'application/json': ref('ExtensionDeclaration') } },
    validateBody: true,
    responses: { '201': scimJson('The declared extension.', ref('ExtensionView')), ...errors('scim', [400, 401, 403, 409, 413, 415, 500]) },
    errors: 'scim',
  } satisfies RouteDoc,
  getCatalog: {
    summary: 'Show the team\'s catalog of roles and entitlements',
    tags: ['Team administration'],
    operationId: 'getCatalog',
    security: ADMIN_SECURITY,
    responses: { '200': scimJson('The catalog.', ref('Catalog')), ...errors('scim', [401, 403, 500]) },
    errors: 'scim',
  } satisfies RouteDoc,
  putCatalog: {
    summary: 'Replace the team\'s catalog of roles and entitlements',
    description:
      'Idempotent: what the document names is added or changed, what it omits is removed, and the same document again changes nothing (no audit row, no event). An entry users hold or groups map is removed only with force=true (taken from those users, its mappings deleted); otherwise 409 with the counts. Over the team\'s budget catalog.entries: 400. The body is checked by the catalog\'s own rules (each refusal names the JSON location).',
    tags: ['Team administration'],
    operationId: 'putCatalog',
    security: ADMIN_WRITE,
    querystring: { type: 'object', properties: { force: { type: 'string', enum: ['true', 'false'], description: 'Remove entries users hold or groups map, from them.' } } },
    requestBody: { required: true, content: { 'application/scim+json': ref('Catalog'), 'application/json': ref('Catalog') } },
    responses: { '200': scimJson('The catalog after the change, with counts.', ref('CatalogPutResult')), ...errors('scim', [400, 401, 403, 409, 413, 415, 500]) },
    errors: 'scim',
  } satisfies RouteDoc,
  remove: {
    summary: 'Remove a schema extension',
    tags: ['Team administration'],
    operationId: 'deleteExtension',
    security: ADMIN_WRITE,
    params: ID,
    responses: { '204': NO_CONTENT, ...errors('scim', [400, 401, 403, 404, 409, 500]) },
    errors: 'scim',
  } satisfies RouteDoc,
};

const ACCESS_READ: Security = [{ oauth2: ['read'] }, { bearerToken: ['read'] }];
const ACCESS_ERRORS = [400, 401, 403, 404, 500];
const SOURCE: JsonSchema = {
  type: 'object',
  description: 'Where the access came from: `direct` (the identity provider assigned it to the user) or `group` (a group of the user is mapped to it; `value` the group id, `display` its displayName).',
  properties: { type: { type: 'string', enum: ['direct', 'group'] }, value: { type: 'string' }, display: { type: 'string' } },
  required: ['type'],
};
const SOURCES: JsonSchema = { type: 'array', items: SOURCE };
const USER_ACCESS: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    userName: { type: 'string' },
    active: { type: 'boolean' },
    roles: { type: 'array', items: { type: 'object', properties: { value: { type: 'string' }, display: { type: 'string' }, sources: SOURCES }, required: ['value', 'sources'] } },
    entitlements: { type: 'array', items: { type: 'object', properties: { type: { type: 'string' }, value: { type: 'string' }, display: { type: 'string' }, sources: SOURCES }, required: ['value', 'sources'] } },
  },
  required: ['id', 'userName', 'active', 'roles', 'entitlements'],
};
const HOLDERS: JsonSchema = {
  type: 'object',
  properties: {
    users: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, userName: { type: 'string' }, sources: SOURCES }, required: ['id', 'userName', 'sources'] } },
    nextCursor: { type: 'string', description: 'The next page\'s cursor; absent on the last page.' },
  },
  required: ['users'],
};
const HOLDERS_QUERY: JsonSchema = {
  type: 'object',
  properties: {
    count: { type: 'string', description: 'Users per page: an integer of at least 1; above 1000 counts as 1000 (a page holds at most 1000 users); 100 by default. Anything else is 400 invalidValue.' },
    cursor: { type: 'string', description: 'Empty or absent for the first page, then the previous page\'s nextCursor, unchanged (a cursor belongs to one entry).' },
  },
};
const HOLDERS_NOTE = 'Active users only, ordered by user id; the direct holders and the members of every group mapped to the entry. An entry not in the catalog answers too (its direct holders).';

export const accessDocs = {
  user: {
    summary: 'A user\'s effective access',
    description: 'The roles and entitlements the user holds, directly or through its groups, each with its sources. A deactivated user holds nothing.',
    tags: ['Access'],
    operationId: 'getUserAccess',
    security: ACCESS_READ,
    params: ID,
    responses: { '200': json('The user\'s access.', USER_ACCESS), ...errors('scim', ACCESS_ERRORS) },
    errors: 'scim',
  } satisfies RouteDoc,
  roleHolders: {
    summary: 'Who holds a role',
    description: HOLDERS_NOTE,
    tags: ['Access'],
    operationId: 'listRoleHolders',
    security: ACCESS_READ,
    params: { type: 'object', properties: { value: { type: 'string', description: 'The role\'s value.' } }, required: ['value'] },
    querystring: HOLDERS_QUERY,
    responses: { '200': json('A page of holders.', HOLDERS), ...errors('scim', ACCESS_ERRORS) },
    errors: 'scim',
  } satisfies RouteDoc,
  entitlementHolders: {
    summary: 'Who holds an entitlement',
    description: `${HOLDERS_NOTE} The type is the entitlement type's name or its endpoint without the slash (case-insensitive).`,
    tags: ['Access'],
    operationId: 'listEntitlementHolders',
    security: ACCESS_READ,
    params: { type: 'object', properties: { type: { type: 'string', description: 'The entitlement type.' }, value: { type: 'string', description: 'The entitlement\'s value.' } }, required: ['type', 'value'] },
    querystring: HOLDERS_QUERY,
    responses: { '200': json('A page of holders.', HOLDERS), ...errors('scim', ACCESS_ERRORS) },
    errors: 'scim',
  } satisfies RouteDoc,
};

const MAPPING = ref('GroupMapping');
const MAPPING_INPUT = ref('GroupMappingCreate');
const MAPPING_TAGS = ['Roles and entitlements'];

export const mappingDocs = {
  list: {
    summary: 'List the team\'s group mappings',
    description: 'The groups mapped to roles and entitlements of the team\'s catalog (their members hold them), or one group\'s.',
    tags: MAPPING_TAGS,
    operationId: 'listMappings',
    security: ADMIN_SECURITY,
    querystring: { type: 'object', properties: { group: { type: 'string', description: 'Only this group\'s mappings (404 when the team has no such group).' } } },
    responses: { '200': scimJson('The mappings.', { type: 'object', properties: { mappings: { type: 'array', items: MAPPING } }, required: ['mappings'], additionalProperties: true }), ...errors('scim', [400, 401, 403, 404, 500]) },
    errors: 'scim',
  } satisfies RouteDoc,
  create: {
    summary: 'Map a group to a role or an entitlement',
    description: 'Idempotent: 201 with the new mapping (audited, one feed event: a patch of the Role or Entitlement naming the group), 200 with it when it already existed (nothing written). 404 for an unknown group; 400 invalidValue for a value not in the team\'s catalog, or over the team\'s budget access.mappings.',
    tags: MAPPING_TAGS,
    operationId: 'createMapping',
    security: ADMIN_WRITE,
    requestBody: { required: true, content: { 'application/scim+json': MAPPING_INPUT, 'application/json': MAPPING_INPUT } },
    validateBody: true,
    responses: { '200': scimJson('The mapping, which already existed.', MAPPING), '201': scimJson('The new mapping.', MAPPING), ...errors('scim', [400, 401, 403, 404, 413, 415, 500]) },
    errors: 'scim',
  } satisfies RouteDoc,
  remove: {
    summary: 'Unmap a group from a role or an entitlement',
    description: 'Audited, with one feed event (a patch of the Role or Entitlement naming the group). 404 when the group is not mapped to it.',
    tags: MAPPING_TAGS,
    operationId: 'deleteMapping',
    security: ADMIN_WRITE,
    querystring: {
      type: 'object',
      properties: {
        group: { type: 'string', minLength: 1, maxLength: 64, description: 'The group\'s id.' },
        kind: { type: 'string', enum: ['role', 'entitlement'] },
        type: { type: 'string', minLength: 1, maxLength: 256, description: 'An entitlement\'s type (name, or endpoint without the slash).' },
        value: { type: 'string', minLength: 1, maxLength: 256 },
      },
      required: ['group', 'kind', 'value'],
    },
    responses: { '204': NO_CONTENT, ...errors('scim', [400, 401, 403, 404, 500]) },
    errors: 'scim',
  } satisfies RouteDoc,
};

// The SSF 1.0 transmitter (ssf-plugin.ts): bodies are checked by events/ssf/streams.ts, which
// reads them as SSF says (unknown properties ignored, transmitter-supplied ones compared).
const SSF_TOKEN: Security = [{ oauth2: ['ssf'] }, { bearerToken: ['ssf'] }];
const SSF_TAGS = ['Shared Signals'];
const ssfJson = (description: string, schema: JsonSchema) => jsonAnswer(description, schema, ['application/json']);
const ssfErrors = (statuses: readonly number[]) => errors('oauth', statuses);
const URI_LIST: JsonSchema = { type: 'array', items: { type: 'string' } };
const SSF_DELIVERY: JsonSchema = {
  type: 'object',
  properties: {
    method: { type: 'string', description: 'urn:ietf:rfc:8935 (push) or urn:ietf:rfc:8936 (poll).' },
    endpoint_url: { type: 'string', description: 'Push: the receiver\'s URL (judged by the egress policy of push subscriptions). Poll: supplied by the transmitter.' },
    authorization_header: { type: 'string', description: 'Push only: the Authorization header sent with every push (one line of visible ASCII, spaces and tabs). Write-only: never shown again.' },
  },
  required: ['method'],
  additionalProperties: true,
};
const STREAM_CONFIG: JsonSchema = {
  type: 'object',
  description: 'An SSF 1.0 stream configuration (section 8.1.1).',
  properties: {
    stream_id: { type: 'string' },
    iss: { type: 'string' },
    aud: { oneOf: [{ type: 'string' }, URI_LIST] },
    delivery: SSF_DELIVERY,
    events_supported: URI_LIST,
    events_requested: URI_LIST,
    events_delivered: URI_LIST,
    description: { type: 'string' },
    min_verification_interval: { type: 'integer', minimum: 0 },
  },
  required: ['stream_id', 'iss', 'aud', 'delivery', 'events_delivered'],
  additionalProperties: true,
};
const STREAM_INPUT: JsonSchema = {
  type: 'object',
  description: 'The receiver-supplied properties (delivery, events_requested, description); with stream_id to update or replace. Transmitter-supplied properties may be sent back but must match.',
  properties: { stream_id: { type: 'string' }, delivery: SSF_DELIVERY, events_requested: URI_LIST, description: { type: 'string' } },
  additionalProperties: true,
};
const STREAM_STATUS: JsonSchema = {
  type: 'object',
  properties: { stream_id: { type: 'string' }, status: { type: 'string', enum: ['enabled', 'paused', 'disabled'] }, reason: { type: 'string' } },
  required: ['stream_id', 'status'],
  additionalProperties: true,
};
const SUBJECT_INPUT: JsonSchema = {
  type: 'object',
  properties: { stream_id: { type: 'string' }, subject: { type: 'object', description: 'An RFC 9493 subject identifier: email, iss_sub, opaque, scim, aliases (or a complex subject\'s user).', additionalProperties: true }, verified: { type: 'boolean' } },
  required: ['stream_id', 'subject'],
  additionalProperties: true,
};
const STREAM_ID_QUERY = (required: boolean): JsonSchema => ({ type: 'object', properties: { stream_id: { type: 'string', minLength: 1, maxLength: 64 } }, ...(required ? { required: ['stream_id'] } : {}) });

export const ssfDocs = {
  configuration: {
    summary: 'SSF Transmitter Configuration Metadata',
    description: 'SSF 1.0 section 7: the issuer, the JWKS, the delivery methods and the stream management endpoints.',
    tags: SSF_TAGS,
    operationId: 'ssfConfiguration',
    security: [],
    responses: { '200': ssfJson('The transmitter configuration.', { type: 'object', required: ['issuer'], additionalProperties: true }) },
    errors: 'oauth',
  } satisfies RouteDoc,
  create: {
    summary: 'Create an SSF stream',
    description: 'SSF 1.0 section 8.1.1.1. Without delivery, a poll stream. 403 when the team holds its ssf.streams budget of streams; 400 for a push endpoint the egress policy refuses.',
    tags: SSF_TAGS,
    operationId: 'ssfCreateStream',
    security: SSF_TOKEN,
    requestBody: { required: false, content: { 'application/json': STREAM_INPUT } },
    responses: { '201': ssfJson('The stream\'s configuration.', STREAM_CONFIG), ...ssfErrors([400, 401, 403, 413, 415, 500]) },
    errors: 'oauth',
  } satisfies RouteDoc,
  read: {
    summary: 'Read an SSF stream, or all of the team\'s',
    description: 'SSF 1.0 section 8.1.1.2: with stream_id its configuration, without it an array of every stream of the team.',
    tags: SSF_TAGS,
    operationId: 'ssfReadStream',
    security: SSF_TOKEN,
    querystring: STREAM_ID_QUERY(false),
    responses: { '200': ssfJson('The configuration, or an array of them.', { oneOf: [STREAM_CONFIG, { type: 'array', items: STREAM_CONFIG }] }), ...ssfErrors([400, 401, 403, 404, 500]) },
    errors: 'oauth',
  } satisfies RouteDoc,
  update: {
    summary: 'Update an SSF stream',
    description: 'SSF 1.0 section 8.1.1.3: the receiver-supplied properties present are changed.',
    tags: SSF_TAGS,
    operationId: 'ssfUpdateStream',
    security: SSF_TOKEN,
    requestBody: { required: true, content: { 'application/json': STREAM_INPUT } },
    responses: { '200': ssfJson('The updated configuration.', STREAM_CONFIG), ...ssfErrors([400, 401, 403, 404, 413, 415, 500]) },
    errors: 'oauth',
  } satisfies RouteDoc,
  replace: {
    summary: 'Replace an SSF stream',
    description: 'SSF 1.0 section 8.1.1.4: every receiver-supplied property is given; a missing one is deleted.',
    tags: SSF_TAGS,
    operationId: 'ssfReplaceStream',
    security: SSF_TOKEN,
    requestBody: { required: true, content: { 'application/json': STREAM_INPUT } },
    responses: { '200': ssfJson('The new configuration.', STREAM_CONFIG), ...ssfErrors([400, 401, 403, 404, 413, 415, 500]) },
    errors: 'oauth',
  } satisfies RouteDoc,
  remove: {
    summary: 'Delete an SSF stream',
    description: 'SSF 1.0 section 8.1.1.5.',
    tags: SSF_TAGS,
    operationId: 'ssfDeleteStream',
    security: SSF_TOKEN,
    querystring: STREAM_ID_QUERY(true),
    responses: { '204': NO_CONTENT, ...ssfErrors([400, 401, 403, 404, 500]) },
    errors: 'oauth',
  } satisfies RouteDoc,
  status: {
    summary: 'Read an SSF stream\'s status',
    description: 'SSF 1.0 section 8.1.2.1.',
    tags: SSF_TAGS,
    operationId: 'ssfReadStatus',
    security: SSF_TOKEN,
    querystring: STREAM_ID_QUERY(true),
    responses: { '200': ssfJson('The status.', STREAM_STATUS), ...ssfErrors([400, 401, 403, 404, 500]) },
    errors: 'oauth',
  } satisfies RouteDoc,
  setStatus: {
    summary: 'Set an SSF stream\'s status',
    description: 'SSF 1.0 section 8.1.2.2: enabled delivers, paused holds events, disabled drops them.',
    tags: SSF_TAGS,
    operationId: 'ssfSetStatus',
    security: SSF_TOKEN,
    requestBody: { required: true, content: { 'application/json': STREAM_STATUS } },
    responses: { '200': ssfJson('The new status.', STREAM_STATUS), ...ssfErrors([400, 401, 403, 404, 413, 415, 500]) },
    errors: 'oauth',
  } satisfies RouteDoc,
  addSubject: {
    summary: 'Add a subject to an SSF stream',
    description: 'SSF 1.0 section 8.1.3.2. A subject naming no user of the team is answered 200 too (subject probing, section 9.1).',
    tags: SSF_TAGS,
    operationId: 'ssfAddSubject',
    security: SSF_TOKEN,
    requestBody: { required: true, content: { 'application/json': SUBJECT_INPUT } },
    responses: { '200': { description: 'Added; no body.' }, ...ssfErrors([400, 401, 403, 404, 413, 415, 500]) },
    errors: 'oauth',
  } satisfies RouteDoc,
  removeSubject: {
    summary: 'Remove a subject from an SSF stream',
    description: 'SSF 1.0 section 8.1.3.3. A subject naming no user of the team is answered 204 too.',
    tags: SSF_TAGS,
    operationId: 'ssfRemoveSubject',
    security: SSF_TOKEN,
    requestBody: { required: true, content: { 'application/json': SUBJECT_INPUT } },
    responses: { '204': NO_CONTENT, ...ssfErrors([400, 401, 403, 404, 413, 415, 500]) },
    errors: 'oauth',
  } satisfies RouteDoc,
  verify: {
    summary: 'Ask for a verification event',
    description: 'SSF 1.0 section 8.1.4.2: a verification event (state echoed) is delivered on this stream only. 429 with Retry-After sooner than min_verification_interval after the last.',
    tags: SSF_TAGS,
    operationId: 'ssfVerify',
    security: SSF_TOKEN,
    requestBody: { required: true, content: { 'application/json': { type: 'object', properties: { stream_id: { type: 'string' }, state: { type: 'string' } }, required: ['stream_id'], additionalProperties: true } } },
    responses: { '204': NO_CONTENT, ...ssfErrors([400, 401, 403, 404, 413, 415, 429, 500]) },
    errors: 'oauth',
  } satisfies RouteDoc,
};

/** The poll delivery of SSF streams (ssf-poll.ts, issue 33). */
export const ssfPollDocs = {
  poll: {
    summary: 'Poll an SSF stream for SETs (RFC 8936)',
    description: 'The `delivery.endpoint_url` of an SSF stream created with the poll method (urn:ietf:rfc:8936). A bearer token of the stream\'s team with the `ssf` scope. The request and answer are RFC 8936 section 2.4\'s (acknowledge with `ack`, report with `setErrs`, `returnImmediately` false waits for the next signal); subjects the receiver removed are left out. 404 for a stream the token\'s team does not have; 400 for a push stream (it has no poll endpoint).',
    tags: ['Shared Signals'],
    operationId: 'ssfPoll',
    security: SSF_TOKEN,
    params: { type: 'object', properties: { streamId: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' } }, required: ['streamId'] },
    requestBody: jsonBody(ref('PollRequest'), false),
    validateBody: true,
    responses: { '200': json('Pending SETs.', ref('PollResponse')), ...errors('poll', [400, 401, 403, 404, 409, 413, 415, 500]) },
    errors: 'poll',
  } satisfies RouteDoc,
};
