/**
 * ServiceProviderConfig, ResourceTypes and Schemas (RFC 7643 sections 5-7; RFC 7644 section 4),
 * rendered from the schema registry so that they cannot drift from what the server does. Each
 * document tells the truth: PATCH, filters, sorting, ETags and password changes (PUT or PATCH of
 * the write-only `password`) are supported; bulk and /Me are not; lists page by index (the default) or by cursor (RFC 9865 section 4).
 * Filtering and sorting hold at the server root too (scim/search.ts), with the same page sizes;
 * there, index paging only (the root refuses a cursor, naming the endpoints that take one).
 */
import { EVENT_DELIVERY_METHODS, EVENT_URIS } from '../events/set.ts';
import { notFound } from './errors.ts';
import { CURSOR_TIMEOUT_SECONDS } from './cursor.ts';
import { DEFAULT_COUNT, MAX_COUNT } from './query.ts';
import { allSchemas } from './schema/registry.ts';
import type { TeamTypes } from './schema/extensions.ts';
import type { AttributeDef, ResourceTypeDef, SchemaDef } from './schema/types.ts';
import {
  LIST_RESPONSE,
  RESOURCE_TYPE_SCHEMA,
  SCHEMA_SCHEMA,
  SERVICE_PROVIDER_CONFIG_SCHEMA,
} from './schema/urns.ts';

const MAX_FILTER_RESULTS = MAX_COUNT;

export function serviceProviderConfig(baseUrl: string): Record<string, unknown> {
  return {
    schemas: [SERVICE_PROVIDER_CONFIG_SCHEMA],
    documentationUri: `${baseUrl}/docs`,
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_FILTER_RESULTS },
    // A password is set by PUT or PATCH of the write-only `password` attribute (Okta O7).
    changePassword: { supported: true },
    sort: { supported: true },
    etag: { supported: true },
    // RFC 9967 section 5: the events this server emits (every one of them is emitted) and no
    // asynchronous requests (Prefer: respond-async is not implemented). The delivery methods
    // are the RFC 8935 push and RFC 8936 poll profiles Rollcall serves (docs/events.md).
    securityEvents: { eventUris: [...EVENT_URIS], asyncRequest: 'none', deliveryMethods: [...EVENT_DELIVERY_METHODS] },
    pagination: {
      cursor: true,
      index: true,
      defaultPaginationMethod: 'index',
      defaultPageSize: DEFAULT_COUNT,
      maxPageSize: MAX_COUNT,
      cursorTimeout: CURSOR_TIMEOUT_SECONDS,
    },
    authenticationSchemes: [
      {
        type: 'oauthbearertoken',
        name: 'OAuth Bearer Token',
        description: 'Authentication with an OAuth 2.0 bearer token (RFC 6750) in the Authorization header; the bare token is accepted too.',
        specUri: 'https://www.rfc-editor.org/rfc/rfc6750',
        primary: true,
      },
    ],
    meta: {
      resourceType: 'ServiceProviderConfig',
      location: `${baseUrl}/v2/scim/ServiceProviderConfig`,
    },
  };
}

function renderAttribute(a: AttributeDef): Record<string, unknown> {
  return {
    name: a.name,
    type: a.type,
    multiValued: a.multiValued,
    description: a.description,
    required: a.required,
    caseExact: a.caseExact,
    mutability: a.mutability,
    returned: a.returned,
    uniqueness: a.uniqueness,
    ...(a.canonicalValues && a.canonicalValues.length > 0 ? { canonicalValues: a.canonicalValues } : {}),
    ...(a.referenceTypes ? { referenceTypes: a.referenceTypes } : {}),
    ...(a.subAttributes ? { subAttributes: a.subAttributes.map(renderAttribute) } : {}),
  };
}

export function schemaDocument(schema: SchemaDef, baseUrl: string): Record<string, unknown> {
  return {
    schemas: [SCHEMA_SCHEMA],
    id: schema.id,
    name: schema.name,
    description: schema.description,
    attributes: schema.attributes.map(renderAttribute),
    meta: { resourceType: 'Schema', location: `${baseUrl}/v2/scim/Schemas/${schema.id}` },
  };
}

export function resourceTypeDocument(rt: ResourceTypeDef, baseUrl: string): Record<string, unknown> {
  return {
    schemas: [RESOURCE_TYPE_SCHEMA],
    id: rt.name,
    name: rt.name,
    endpoint: rt.endpoint,
    description: rt.description,
    schema: rt.schema.id,
    ...(rt.extensions.length > 0
      ? { schemaExtensions: rt.extensions.map((e) => ({ schema: e.schema.id, required: e.required })) }
      : {}),
    meta: { resourceType: 'ResourceType', location: `${baseUrl}/v2/scim/ResourceTypes/${rt.name}` },
  };
}

const listOf = (resources: Record<string, unknown>[]): Record<string, unknown> => ({
  schemas: [LIST_RESPONSE],
  totalResults: resources.length,
  startIndex: 1,
  itemsPerPage: resources.length,
  Resources: resources,
});

/** Every schema a team's resources use: the core ones, then the team's extensions. */
const schemasOf = (types: TeamTypes): SchemaDef[] => {
  const team = [...types.User.extensions, ...types.Group.extensions].map((e) => e.schema).filter((s) => !allSchemas.includes(s));
  return [...allSchemas, ...team];
};

export const schemasList = (baseUrl: string, types: TeamTypes): Record<string, unknown> =>
  listOf(schemasOf(types).map((s) => schemaDocument(s, baseUrl)));

export function schemaById(id: string, baseUrl: string, types: TeamTypes): Record<string, unknown> {
  const schema = schemasOf(types).find((s) => s.id.toLowerCase() === id.toLowerCase());
  if (!schema) throw notFound(`Schema ${id} not found`);
  return schemaDocument(schema, baseUrl);
}

export const resourceTypesList = (baseUrl: string, types: TeamTypes): Record<string, unknown> =>
  listOf([types.User, types.Group].map((rt) => resourceTypeDocument(rt, baseUrl)));

export function resourceTypeByName(name: string, baseUrl: string, types: TeamTypes): Record<string, unknown> {
  const rt = [types.User, types.Group].find((r) => r.name.toLowerCase() === name.toLowerCase());
  if (!rt) throw notFound(`ResourceType ${name} not found`);
  return resourceTypeDocument(rt, baseUrl);
}
