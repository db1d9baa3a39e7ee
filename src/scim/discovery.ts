/**
 * ServiceProviderConfig, ResourceTypes and Schemas (RFC 7643 sections 5-7; RFC 7644 section 4),
 * rendered from the schema registry so that they cannot drift from what the server does. Each
 * document tells the truth: PATCH, filters, sorting, ETags and password changes (PUT or PATCH of
 * the write-only `password`) are supported, and bulk (RFC 7644 3.7, scim/bulk/) with its
 * maxOperations and maxPayloadSize; /Me is not; lists page by index (the default) or by cursor (RFC 9865 section 4).
 * Filtering and sorting hold at the server root too (scim/search.ts), with the same page sizes;
 * there, index paging only (the root refuses a cursor, naming the endpoints that take one).
 * A team with a catalog of roles and entitlements (DESIGN.md section 12) also lists Role and its
 * entitlement types (Okta's form) or the draft's Entitlement (IETF form), their schemas
 * (schema/catalog-schemas.ts), and the draft's
 * ServiceProviderConfig extension; a team without one sees exactly what it saw before.
 */
import { EVENT_DELIVERY_METHODS, EVENT_URIS } from '../events/set.ts';
import { BULK_MAX_OPERATIONS, BULK_MAX_PAYLOAD } from './bulk/parse.ts';
import { notFound } from './errors.ts';
import { CURSOR_TIMEOUT_SECONDS } from './cursor.ts';
import { DEFAULT_COUNT, MAX_COUNT } from './query.ts';
import { allSchemas } from './schema/registry.ts';
import { hasCatalog } from './schema/catalog.ts';
import type { Catalog } from './schema/catalog.ts';
import { catalogResourceTypes } from './schema/catalog-schemas.ts';
import type { CatalogResourceType } from './schema/catalog-schemas.ts';
import type { TeamTypes } from './schema/extensions.ts';
import type { AttributeDef, ResourceTypeDef, SchemaDef } from './schema/types.ts';
import {
  LIST_RESPONSE,
  RESOURCE_TYPE_SCHEMA,
  SCHEMA_SCHEMA,
  SERVICE_PROVIDER_CONFIG_SCHEMA,
} from './schema/urns.ts';

const MAX_FILTER_RESULTS = MAX_COUNT;

/**
 * draft-ietf-scim-roles-entitlements-01 section 3.1, "ServiceProviderConfig Extension": a server
 * serving /Roles or /Entitlements advertises which elements it implements, `roles` and
 * `entitlements` each with `supported` ("supports the /Roles endpoint", ".../Entitlements
 * endpoint") and optionally `multiple...Supported` (more than one value in the User's attribute),
 * `primarySupported` and `typeSupported` (its `primary` and `type` sub-attributes) and `types`
 * ("list of types supported"). Roles: /Roles is served for every team with a catalog; any number
 * per user, `primary` at most once (checked), `type` accepted and kept as sent (the catalog has no
 * role types, so no `types`). Entitlements: supported only when the catalog declares an
 * entitlement type (a team with roles only has nothing to assign there, and the IETF form lists
 * no Entitlement resource type then), and only then the optional members: more than one per
 * user unless the team's only type is single-valued; `type` names the entitlement type, one of
 * `types` (the type names).
 */
function rolesAndEntitlements(catalog: Catalog): Record<string, unknown> {
  return {
    roles: { supported: true, multipleRolesSupported: true, primarySupported: true, typeSupported: true },
    entitlements:
      catalog.types.length === 0
        ? { supported: false }
        : {
            supported: true,
            multipleEntitlementsSupported: catalog.types.length > 1 || catalog.types.some((t) => t.multiValued),
            primarySupported: true,
            typeSupported: true,
            types: catalog.types.map((t) => t.name),
          },
  };
}

/** The configuration; a team with a catalog (`types`) also advertises its roles and entitlements. */
/**
 * The configuration; `retentionDays` (the change feed's, EVENT_RETENTION_DAYS) bounds how long a
 * delta token stays good, advertised as the delta query draft's deltaTokenExpiry in minutes.
 */
export function serviceProviderConfig(baseUrl: string, types?: TeamTypes, retentionDays?: number): Record<string, unknown> {
  const catalog = types?.catalog;
  return {
    schemas: [SERVICE_PROVIDER_CONFIG_SCHEMA],
    documentationUri: `${baseUrl}/docs`,
    patch: { supported: true },
    bulk: { supported: true, maxOperations: BULK_MAX_OPERATIONS, maxPayloadSize: BULK_MAX_PAYLOAD },
    filter: { supported: true, maxResults: MAX_FILTER_RESULTS },
    // A password is set by PUT or PATCH of the write-only `password` attribute (Okta O7).
    changePassword: { supported: true },
    sort: { supported: true },
    etag: { supported: true },
    // RFC 9967 section 5: the events this server emits (every one of them is emitted), and
    // asynchronous requests completed when the client asks (Prefer: respond-async, src/async;
    // "request"). The delivery methods
    // are the RFC 8935 push and RFC 8936 poll profiles Rollcall serves (docs/events.md).
    securityEvents: { eventUris: [...EVENT_URIS], asyncRequest: 'request', deliveryMethods: [...EVENT_DELIVERY_METHODS] },
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
    // draft-sehgal-scim-delta-query section 8 (scim/delta.ts); a draft, so said in its own words.
    deltaQuery: {
      supported: true,
      ...(retentionDays !== undefined ? { deltaTokenExpiry: retentionDays * 24 * 60 } : {}),
      description: 'A draft implementation of draft-sehgal-scim-delta-query (an IETF Internet-Draft, subject to change): GET /Users or /Groups with deltaQuery (and deltaToken), POST /.search with them, GET /{Users,Groups}/.deltaToken and POST /{Users,Groups}/.delta. Tokens last while the change feed keeps the changes after them (deltaTokenExpiry minutes at least).',
      specUri: 'https://datatracker.ietf.org/doc/draft-sehgal-scim-delta-query/',
    },
    ...(hasCatalog(catalog) ? { RolesAndEntitlements: rolesAndEntitlements(catalog) } : {}),
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

/** A resource type of the team's catalog (Role, an entitlement type); its name may hold a space. */
function catalogResourceTypeDocument(rt: CatalogResourceType, baseUrl: string): Record<string, unknown> {
  return {
    schemas: [RESOURCE_TYPE_SCHEMA],
    id: rt.name,
    name: rt.name,
    endpoint: rt.endpoint,
    description: rt.description,
    schema: rt.schema.id,
    meta: { resourceType: 'ResourceType', location: `${baseUrl}/v2/scim/ResourceTypes/${encodeURIComponent(rt.name)}` },
  };
}

const listOf = (resources: Record<string, unknown>[]): Record<string, unknown> => ({
  schemas: [LIST_RESPONSE],
  totalResults: resources.length,
  startIndex: 1,
  itemsPerPage: resources.length,
  Resources: resources,
});

/** The catalog's resource types; none for a team without a catalog. */
const catalogTypesOf = (types: TeamTypes): CatalogResourceType[] => (hasCatalog(types.catalog) ? catalogResourceTypes(types.catalog) : []);

/**
 * Every schema a team's resources use: the core ones, the team's extensions, then the schemas of
 * its catalog's resource types (Role's always, Entitlement's when it has an entitlement type).
 */
const schemasOf = (types: TeamTypes): SchemaDef[] => {
  const team = [...types.User.extensions, ...types.Group.extensions].map((e) => e.schema).filter((s) => !allSchemas.includes(s));
  const all = [...allSchemas, ...team];
  for (const rt of catalogTypesOf(types)) if (!all.some((s) => s.id === rt.schema.id)) all.push(rt.schema);
  return all;
};

export const schemasList = (baseUrl: string, types: TeamTypes): Record<string, unknown> =>
  listOf(schemasOf(types).map((s) => schemaDocument(s, baseUrl)));

export function schemaById(id: string, baseUrl: string, types: TeamTypes): Record<string, unknown> {
  const schema = schemasOf(types).find((s) => s.id.toLowerCase() === id.toLowerCase());
  if (!schema) throw notFound(`Schema ${id} not found`);
  return schemaDocument(schema, baseUrl);
}

export const resourceTypesList = (baseUrl: string, types: TeamTypes): Record<string, unknown> =>
  listOf([
    ...[types.User, types.Group].map((rt) => resourceTypeDocument(rt, baseUrl)),
    ...catalogTypesOf(types).map((rt) => catalogResourceTypeDocument(rt, baseUrl)),
  ]);

export function resourceTypeByName(name: string, baseUrl: string, types: TeamTypes): Record<string, unknown> {
  const key = name.toLowerCase();
  const rt = [types.User, types.Group].find((r) => r.name.toLowerCase() === key);
  if (rt) return resourceTypeDocument(rt, baseUrl);
  const catalogType = catalogTypesOf(types).find((r) => r.name.toLowerCase() === key);
  if (!catalogType) throw notFound(`ResourceType ${name} not found`);
  return catalogResourceTypeDocument(catalogType, baseUrl);
}
