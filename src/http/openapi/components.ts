/**
 * The protocol message schemas of the OpenAPI document (components.schemas), besides the SCIM
 * resources (scim-schemas.ts): SCIM messages (RFC 7644 3.4.2, 3.4.3, 3.5.2, 3.12), discovery
 * documents (RFC 7643 5-7), OAuth answers (RFC 6749 5.1/5.2, RFC 7662, RFC 8414), the JWKS
 * (RFC 7517), the event feed, poll (RFC 8936) and subscriptions. Objects admit properties not
 * named here: the server may add fields, and clients must ignore what they do not know.
 */
import type { JsonSchema } from './route-doc.ts';

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const open = (properties: Record<string, JsonSchema>, required: string[] = [], description?: string): JsonSchema => ({
  type: 'object',
  ...(description ? { description } : {}),
  properties,
  ...(required.length > 0 ? { required } : {}),
  additionalProperties: true,
});
/**
 * An OAuth form body (RFC 6749 3.1): every parameter a single string; parameters not named here
 * are ignored, but none, named or not, may be sent twice (a repeated one arrives as an array).
 */
const form = (properties: Record<string, JsonSchema>, required: string[], description: string): JsonSchema => ({
  type: 'object',
  description: `${description} Unknown parameters are ignored; no parameter may be repeated; an empty value counts as absent.`,
  properties,
  required,
  additionalProperties: { type: 'string' },
});
const str = (description?: string): JsonSchema => ({ type: 'string', ...(description ? { description } : {}) });
const urns = { type: 'array', items: { type: 'string' } };

export const listResponse = (items: JsonSchema): JsonSchema =>
  open(
    {
      schemas: urns,
      totalResults: { type: 'integer', minimum: 0, description: 'Absent on cursor pages, where counting every match is not done (RFC 9865 allows it).' },
      startIndex: { type: 'integer' },
      itemsPerPage: { type: 'integer', minimum: 0 },
      nextCursor: str('The cursor of the next page (RFC 9865), absent on the last page.'),
      previousCursor: str('The cursor of the previous page (RFC 9865).'),
      nextDeltaToken: str('Delta query (draft-sehgal-scim-delta-query): on the last page of a delta or of a full scan asked with deltaQuery, the token of the next delta.'),
      Resources: { type: 'array', items },
    },
    ['schemas'],
    'A SCIM ListResponse (RFC 7644 3.4.2); cursor paging per RFC 9865.',
  );

const SUBSCRIPTION_FORMAT = {
  type: 'string',
  enum: ['set', 'webhook'],
  default: 'set',
  description: '`set`: RFC 8935 Security Event Tokens; `webhook`: a JSON body signed per the Standard Webhooks specification with a `whsec_` secret shown once.',
};

export const STATIC_COMPONENTS: Record<string, JsonSchema> = {
  ScimError: open(
    {
      schemas: { type: 'array', items: { type: 'string', const: 'urn:ietf:params:scim:api:messages:2.0:Error' } },
      status: { type: 'string', pattern: '^[1-5][0-9][0-9]$', description: 'The HTTP status, as a string.' },
      scimType: str('The SCIM error type (RFC 7644 3.12), e.g. invalidValue, invalidSyntax, invalidFilter, uniqueness, mutability, invalidCursor.'),
      detail: str(),
    },
    ['schemas', 'status'],
    'A SCIM error (RFC 7644 section 3.12).',
  ),
  OAuthError: open(
    { error: str('RFC 6749 5.2 error code: invalid_request, invalid_client, invalid_grant, unauthorized_client, unsupported_grant_type, invalid_scope, slow_down, server_error.'), error_description: str(), error_uri: str() },
    ['error'],
    'An OAuth 2.0 error (RFC 6749 section 5.2).',
  ),
  PollError: open({ err: str(), description: str() }, ['err'], 'A poll error (RFC 8936 section 2.4).'),
  ListResponse: listResponse({ type: 'object', additionalProperties: true }),
  SearchRequest: open(
    {
      schemas: { type: 'array', items: { type: 'string' }, description: 'Contains urn:ietf:params:scim:api:messages:2.0:SearchRequest.' },
      attributes: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
      excludedAttributes: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
      filter: str('A SCIM filter (RFC 7644 3.4.2.2).'),
      sortBy: str(),
      sortOrder: { type: 'string', description: 'ascending or descending.' },
      startIndex: { type: 'integer' },
      count: { type: 'integer' },
      cursor: str('Empty for the first page, then a nextCursor or previousCursor value (RFC 9865).'),
    },
    [],
    'A search request (RFC 7644 3.4.3). Parameter names are case-insensitive.',
  ),
  PatchOp: open(
    {
      schemas: { type: 'array', items: { type: 'string' }, description: 'Contains urn:ietf:params:scim:api:messages:2.0:PatchOp.' },
      Operations: {
        type: 'array',
        items: open({ op: { type: 'string', description: 'add, remove or replace (case-insensitive).' }, path: str('An attribute path (RFC 7644 3.5.2).'), value: {} }, ['op']),
      },
    },
    ['Operations'],
    'A PATCH request (RFC 7644 3.5.2). Attribute names are case-insensitive.',
  ),
  ServiceProviderConfig: open({ schemas: urns, documentationUri: str(), patch: open({}), bulk: open({}), filter: open({}), changePassword: open({}), sort: open({}), etag: open({}), authenticationSchemes: { type: 'array', items: open({}) } }, ['schemas'], 'RFC 7643 section 5.'),
  ResourceType: open({ schemas: urns, id: str(), name: str(), endpoint: str(), description: str(), schema: str(), schemaExtensions: { type: 'array', items: open({ schema: str(), required: { type: 'boolean' } }) }, meta: open({}) }, ['schemas', 'name', 'endpoint', 'schema'], 'RFC 7643 section 6.'),
  Schema: open({ schemas: urns, id: str(), name: str(), description: str(), attributes: { type: 'array', items: open({}) }, meta: open({}) }, ['id'], 'RFC 7643 section 7.'),
  TokenResponse: open(
    {
      access_token: str(),
      token_type: { type: 'string', description: '"bearer".' },
      refresh_token: str(),
      expires_in: { type: 'integer' },
      Expires_in: str('The same lifetime as a string (the contract spells it so).'),
      scope: str(),
    },
    ['access_token', 'token_type'],
    'RFC 6749 section 5.1.',
  ),
  IntrospectionResponse: open(
    { active: { type: 'boolean' }, scope: str(), client_id: str(), username: str(), token_type: str(), exp: { type: 'integer' }, iat: { type: 'integer' }, sub: str(), aud: {}, iss: str() },
    ['active'],
    'RFC 7662 section 2.2.',
  ),
  AuthorizationServerMetadata: open({ issuer: str(), authorization_endpoint: str(), token_endpoint: str(), grant_types_supported: urns }, ['issuer', 'token_endpoint'], 'RFC 8414 section 2.'),
  TokenRequest: form(
    {
      grant_type: { type: 'string', examples: ['client_credentials', 'authorization_code', 'refresh_token', 'password'], description: 'client_credentials, authorization_code, refresh_token, or password where the operator enabled it; any other value is answered unsupported_grant_type.' },
      scope: str(),
      code: str(),
      redirect_uri: str(),
      code_verifier: str(),
      refresh_token: str(),
      username: str(),
      password: str(),
      client_id: str(),
      client_secret: str('client_secret_post.'),
      client_assertion_type: str('urn:ietf:params:oauth:client-assertion-type:jwt-bearer (private_key_jwt).'),
      client_assertion: str(),
    },
    ['grant_type'],
    'RFC 6749 section 4; client authentication by HTTP Basic, client_secret_post or private_key_jwt (RFC 7523).',
  ),
  TokenReference: form({ token: str(), token_type_hint: str('access_token or refresh_token.'), client_id: str(), client_secret: str(), client_assertion_type: str(), client_assertion: str() }, ['token'], 'RFC 7009 2.1 / RFC 7662 2.1.'),
  Jwks: open({ keys: { type: 'array', items: open({ kty: str(), kid: str(), alg: str(), use: str() }, ['kty']) } }, ['keys'], 'RFC 7517 section 5.'),
  Event: open(
    {
      seq: { type: 'integer' },
      at: { type: 'string', format: 'date-time' },
      event: str('The RFC 9967 event URI.'),
      change: str(),
      resourceType: str(),
      id: str(),
      externalId: { type: ['string', 'null'] },
      version: str(),
      changed: { type: 'array', items: { type: 'string' } },
      members: {},
      actor: {},
      txn: { type: ['string', 'null'] },
      outcome: open(
        { method: str(), bulkId: str(), version: str(), location: str(), status: str(), response: {} },
        ['method', 'status'],
        'An asyncresp event\'s (change "asyncresp", RFC 9967 section 2.5.1.3): the asynchronous write\'s result as one BulkResponse operation; response is the SCIM error when it failed. Such an event has id "" when the write created nothing, and version only when the outcome has one.',
      ),
    },
    ['seq', 'event', 'id'],
  ),
  EventPage: open({ events: { type: 'array', items: ref('Event') }, next: { type: 'integer' }, more: { type: 'boolean' } }, ['events', 'next', 'more'], 'A page of the change feed; ask again with after=next.'),
  PollRequest: open(
    {
      maxEvents: { type: ['integer', 'null'], minimum: 0, description: 'How many SETs at most (null or absent: the default).' },
      returnImmediately: { type: ['boolean', 'null'] },
      ack: { type: ['array', 'null'], items: { type: 'string' }, description: 'The jti of each SET received.' },
      setErrs: { type: ['object', 'null'], description: 'Errors per jti: {"<jti>": {"err": "...", "description": "..."}}.' },
    },
    [],
    'RFC 8936 section 2.4; null counts as absent.',
  ),
  PollResponse: open({ sets: { type: 'object', additionalProperties: { type: 'string' } }, moreAvailable: { type: 'boolean' } }, ['sets'], 'RFC 8936 section 2.4.'),
  SubscriptionCreate: open(
    {
      method: { type: ['string', 'null'], enum: ['push', 'poll', null], default: 'push', description: 'push (the default; also when null) or poll.' },
      url: { type: 'string', description: 'The receiver (push).' },
      events: { type: 'array', items: { type: 'string' }, description: 'Only these events: create, put, patch, delete, activate, deactivate, asyncresp, or their RFC 9967 URIs. Absent: every event.' },
      full: { type: 'boolean', description: 'Whether events carry the full resource.' },
      format: SUBSCRIPTION_FORMAT,
    },
    [],
    'A new event subscription.',
  ),
  Subscription: {
    type: 'object',
    description: 'An event subscription as the API shows it (never its secret or poll token).',
    properties: {
      id: str(),
      method: { type: 'string', enum: ['push', 'poll'] },
      format: { type: 'string', enum: ['set', 'webhook', 'ssf'], description: 'set (RFC 8935 SETs), webhook (Standard Webhooks JSON), or ssf: an SSF 1.0 stream, managed through /v2/ssf (its receiver sets its status; here it may be resumed, replayed or deleted, not paused).' },
      url: { type: ['string', 'null'], description: 'The receiver (push).' },
      events: { type: ['array', 'null'], items: { type: 'string' }, description: 'The event URIs asked for; null for all.' },
      full: { type: 'boolean' },
      state: { type: 'string', enum: ['active', 'paused'] },
      pausedReason: { type: ['string', 'null'] },
      cursor: { type: 'integer', description: 'The last seq delivered (push) or acknowledged (poll).' },
      failures: { type: 'integer' },
      failingSince: { type: ['string', 'null'], format: 'date-time' },
      nextAttemptAt: { type: 'string', format: 'date-time' },
      createdAt: { type: 'string', format: 'date-time' },
      attempts: {
        type: 'array',
        description: 'The latest delivery attempts (GET of one subscription).',
        items: open({ at: { type: 'string', format: 'date-time' }, seq: { type: 'integer' }, status: { type: ['integer', 'null'] }, latencyMs: { type: 'number' }, error: { type: ['string', 'null'] } }, ['at', 'seq', 'status', 'latencyMs', 'error']),
      },
    },
    required: ['id', 'method', 'format', 'url', 'events', 'full', 'state', 'pausedReason', 'cursor', 'failures', 'failingSince', 'nextAttemptAt', 'createdAt'],
  },
  SubscriptionCreated: {
    allOf: [ref('Subscription')],
    description: 'The subscription, with its one-time credential: `pollToken` (a poll subscription), `secret` (a `webhook` subscription, `whsec_...`, shown only here).',
    properties: { secret: { type: 'string', pattern: '^whsec_' }, pollToken: str() },
  },
  SubscriptionList: open({ subscriptions: { type: 'array', items: ref('Subscription') } }, ['subscriptions']),
  ReplayRequest: open({ from: { type: 'integer', minimum: 1, description: 'The sequence number to deliver from.' } }, ['from']),
  SecretRotateRequest: open(
    { overlapSeconds: { type: 'integer', minimum: 0, maximum: 604800, default: 86400, description: 'How long the previous secret keeps signing (a second signature).' } },
    [],
    'Optional: the overlap of the previous secret.',
  ),
  SecretRotated: {
    allOf: [ref('Subscription')],
    description: 'The subscription with its new signing secret, shown only here.',
    properties: {
      secret: { type: 'string', pattern: '^whsec_', description: 'The new secret, shown once.' },
      previousSecretValidUntil: { type: 'string', format: 'date-time', description: 'Until when signatures with the previous secret are also sent (the overlap).' },
    },
    required: ['secret', 'previousSecretValidUntil'],
  },
  ExtensionDeclaration: open(
    { resourceType: { type: ['string', 'null'], enum: ['User', 'Group', null], default: 'User', description: 'User (the default; also when null) or Group.' }, required: { type: 'boolean' }, schema: { ...ref('Schema'), description: 'An RFC 7643 section 7 schema.' } },
    ['schema'],
    'A team schema extension to declare.',
  ),
  ExtensionView: open({}, [], 'A declared team extension.'),
  GroupMappingCreate: open(
    {
      group: { type: 'string', minLength: 1, maxLength: 64, description: 'The group\'s id.' },
      kind: { type: 'string', enum: ['role', 'entitlement'] },
      type: { type: 'string', minLength: 1, maxLength: 256, description: 'An entitlement\'s type: its name (e.g. "License") or its endpoint without the slash; none for a role.' },
      value: { type: 'string', minLength: 1, maxLength: 256, description: 'The role\'s or entitlement\'s value (its SCIM id).' },
    },
    ['group', 'kind', 'value'],
    'A group of the team and the role or entitlement of its catalog it maps to.',
  ),
  GroupMapping: open(
    {
      group: open({ id: str(), displayName: str() }, ['id', 'displayName']),
      kind: { type: 'string', enum: ['role', 'entitlement'] },
      type: str('An entitlement\'s type name (absent for a role).'),
      value: str('The role\'s or entitlement\'s value (its SCIM id).'),
      display: str('Its displayName in the catalog.'),
      created: { type: 'string', format: 'date-time' },
    },
    ['group', 'kind', 'value', 'created'],
    'A group mapped to a role or an entitlement: its members hold it.',
  ),
  CatalogEntry: open(
    { value: str('The entry\'s SCIM id: 1 to 256 characters, compared exactly.'), displayName: str('1 to 256 characters.'), description: str('At most 1,000 characters; omitted when none.') },
    ['value', 'displayName'],
    'A role or an entitlement of the team\'s catalog.',
  ),
  CatalogEntitlementType: open(
    {
      name: str('The SCIM resource type name, e.g. License; unique case-insensitively.'),
      endpoint: str('Its SCIM endpoint, e.g. /Licenses; unique case-insensitively.'),
      description: str('At most 1,000 characters; omitted when none.'),
      required: { type: 'boolean', description: 'A user must hold at least one entitlement of the type (default false).' },
      multiValued: { type: 'boolean', description: 'A user may hold more than one (default true).' },
      entitlements: { type: 'array', items: ref('CatalogEntry') },
    },
    ['name', 'endpoint'],
    'An entitlement type and its entitlements.',
  ),
  Catalog: open(
    {
      schemas: { type: 'string', enum: ['okta', 'ietf'], description: 'Which schemas discovery shows for the catalog: Okta\'s or the IETF draft\'s. Absent in a PUT: unchanged.' },
      roles: { type: 'array', items: ref('CatalogEntry') },
      entitlementTypes: { type: 'array', items: ref('CatalogEntitlementType') },
    },
    [],
    'A team\'s catalog of roles and entitlements (roles by value, types by name, entitlements by value).',
  ),
  CatalogPutResult: open(
    {
      catalog: ref('Catalog'),
      added: { type: 'integer', minimum: 0 },
      updated: { type: 'integer', minimum: 0 },
      removed: { type: 'integer', minimum: 0 },
    },
    ['catalog', 'added', 'updated', 'removed'],
    'The catalog after the PUT, and how many roles, entitlement types and entitlements it added, changed and removed (all 0 when the document was the catalog already).',
  ),
};
