/**
 * The catalog's SCIM endpoints (DESIGN.md section 12): `GET /Roles`, `/Entitlements` (every
 * entitlement type's entitlements, each with its `type`) and each entitlement type's own endpoint
 * (`/Licenses`), and `GET <endpoint>/{id}`, the id being the entry's value, compared exactly.
 * The catalog is read from the team's types (one value per request, never a query), so lists
 * are answered in memory:
 * - index paging as /Users pages (startIndex below 1 means 1, count 0..1000, default 100); a
 *   cursor (RFC 9865) is refused with a 400 saying to page by index (a catalog is small);
 * - `filter` is bound to the endpoint's schema (schema/catalog-schemas.ts: `id`, `displayName`,
 *   `type`, ... in the Okta form; `value`, `display`, ... in the IETF draft's) and evaluated by
 *   filter/evaluate.ts, the same evaluator that is the oracle of the SQL filters;
 * - `sortBy` sorts by the attribute's value (absent values last); without it, entries are ordered
 *   by value (code points), the same on every engine;
 * - `attributes` / `excludedAttributes` shape each resource as project.ts shapes Users.
 * Writes are refused: the catalog is managed by the CLI, the admin API and the console, and a
 * write through SCIM answers 405 with `Allow: GET`. A path that is not one of the team's catalog
 * endpoints (or any path, for a team without a catalog) is not answered here: callers answer it
 * as the unknown SCIM path it is. No storage, no HTTP.
 */
import { ScimError, badRequest, notFound } from './errors.ts';
import { leafOf } from './filter/bind.ts';
import type { BoundSort } from './filter/bind.ts';
import { foldCase, isCaseInsensitive, matches } from './filter/evaluate.ts';
import { projectResource } from './project.ts';
import { parseListQuery, parseProjection } from './query.ts';
import type { RawListParams } from './query.ts';
import type { ListResult, Resource } from './representation.ts';
import { typesOf } from './context.ts';
import type { ScimContext } from './context.ts';
import { hasCatalog } from './schema/catalog.ts';
import type { Catalog, CatalogEntry, CatalogSchemas, EntitlementType } from './schema/catalog.ts';
import { byValue, catalogDocument, catalogSchema, orderedTypes } from './schema/catalog-schemas.ts';
import type { CatalogKind } from './schema/catalog-schemas.ts';
import type { TeamTypes } from './schema/extensions.ts';
import type { ResourceTypeDef } from './schema/types.ts';
import { compareCodePoints } from '../text.ts';

/** What a path's first segment names in the team's catalog. */
export interface CatalogEndpoint {
  readonly catalog: Catalog;
  readonly kind: CatalogKind;
  /** `Role`, `Entitlement` (the /Entitlements aggregate) or the entitlement type's name. */
  readonly name: string;
  /** `/Roles`, `/Entitlements` or the type's endpoint. */
  readonly endpoint: string;
  /** The types whose entitlements it serves: all of them at /Entitlements, none at /Roles. */
  readonly types: readonly EntitlementType[];
}

/**
 * The catalog endpoint `segment` (a path segment, `Roles`, `Licenses`) names, compared exactly as
 * the router compares `/Users`; undefined when the team has no catalog or no such endpoint.
 */
export function catalogEndpoint(types: TeamTypes, segment: string): CatalogEndpoint | undefined {
  const catalog = types.catalog;
  if (!hasCatalog(catalog)) return undefined;
  const endpoint = `/${segment}`;
  if (endpoint === '/Roles') return { catalog, kind: 'role', name: 'Role', endpoint, types: [] };
  if (endpoint === '/Entitlements') return { catalog, kind: 'entitlement', name: 'Entitlement', endpoint, types: orderedTypes(catalog) };
  const type = catalog.types.find((t) => t.endpoint === endpoint);
  return type ? { catalog, kind: 'entitlement', name: type.name, endpoint, types: [type] } : undefined;
}

/**
 * One catalog entry as the SCIM endpoints show it (and as change events carry it): the form's
 * attributes, `meta.resourceType` the resource type discovery lists for it (Role; an entitlement's
 * type name in Okta's form, `Entitlement` in the IETF form), `meta.location` under that resource
 * type's endpoint (`/Roles`, the type's endpoint, or `/Entitlements`), the value percent-encoded.
 */
export function catalogEntryResource(baseUrl: string, form: CatalogSchemas, entry: CatalogEntry, type?: EntitlementType): Resource {
  const kind: CatalogKind = type ? 'entitlement' : 'role';
  const [resourceType, endpoint] = !type ? ['Role', '/Roles'] : form === 'ietf' ? ['Entitlement', '/Entitlements'] : [type.name, type.endpoint];
  return {
    ...catalogDocument(form, kind, entry, type?.name),
    meta: { resourceType, location: `${baseUrl}/v2/scim${endpoint}/${encodeURIComponent(entry.value)}` },
  };
}

/**
 * The endpoint as a resource type for the filter binder and the projection, which read its
 * schema (and the common attributes) and use its name in their messages only. A catalog type is
 * neither User nor Group, which ResourceTypeDef's literal names and endpoints stand for: cast.
 */
const viewOf = (ep: CatalogEndpoint): ResourceTypeDef => ({
  name: ep.name as ResourceTypeDef['name'],
  endpoint: ep.endpoint as ResourceTypeDef['endpoint'],
  description: ep.name,
  schema: catalogSchema(ep.catalog.schemas, ep.kind),
  extensions: [],
});

/** Every resource of the endpoint, ordered by value (values are unique across types). */
function resourcesOf(baseUrl: string, ep: CatalogEndpoint): Resource[] {
  const form = ep.catalog.schemas;
  if (ep.kind === 'role') return [...ep.catalog.roles].sort(byValue).map((entry) => catalogEntryResource(baseUrl, form, entry));
  const held = ep.types.flatMap((type) => type.entitlements.map((entry) => ({ entry, type })));
  held.sort((a, b) => byValue(a.entry, b.entry));
  return held.map(({ entry, type }) => catalogEntryResource(baseUrl, form, entry, type));
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The value a sortBy reads from a resource: the first element of a multi-valued one. */
function sortKey(sort: BoundSort, resource: Resource): unknown {
  const { attr, sub } = sort.target;
  let value = resource[attr.name];
  if (Array.isArray(value)) value = value[0];
  if (sub) value = isObject(value) ? value[sub.name] : undefined;
  return value;
}

/** Sorts in place by `sort`: absent values last in both directions, ties keep the value order. */
function sortResources(resources: Resource[], sort: BoundSort, descending: boolean): void {
  const leaf = leafOf(sort.target);
  const folded = isCaseInsensitive(leaf);
  const keyed = resources.map((resource) => {
    const raw = sortKey(sort, resource);
    return { resource, key: typeof raw === 'string' && folded ? foldCase(raw) : raw };
  });
  keyed.sort((a, b) => {
    const absentA = a.key === undefined || a.key === null;
    const absentB = b.key === undefined || b.key === null;
    if (absentA || absentB) return absentA === absentB ? 0 : absentA ? 1 : -1;
    const order = typeof a.key === 'string' && typeof b.key === 'string' ? compareCodePoints(a.key, b.key) : Number(a.key) - Number(b.key);
    return descending ? -order : order;
  });
  keyed.forEach((k, i) => (resources[i] = k.resource));
}

/** A page of the endpoint `segment` names; undefined when it names no catalog endpoint. */
export function listCatalog(ctx: ScimContext, segment: string, params: RawListParams): ListResult | undefined {
  const ep = catalogEndpoint(typesOf(ctx), segment);
  if (!ep) return undefined;
  const view = viewOf(ep);
  const query = parseListQuery(view, params);
  if (query.paging.method === 'cursor') {
    throw badRequest('invalidValue', `Cursor paging (RFC 9865) is not offered at ${ep.endpoint}; page with startIndex and count`);
  }
  const filter = query.filter;
  const resources = resourcesOf(ctx.baseUrl, ep).filter((r) => filter === undefined || matches(filter, r));
  if (query.sortBy) sortResources(resources, query.sortBy, query.descending);
  const start = query.paging.startIndex;
  const page = resources.slice(start - 1, start - 1 + query.count);
  return { totalResults: resources.length, startIndex: start, resources: page.map((r) => projectResource(view, r, query.projection)) };
}

/** One entry of the endpoint `segment` names, by value; undefined when it names no catalog endpoint. */
export function getCatalogResource(ctx: ScimContext, segment: string, id: string, params: Pick<RawListParams, 'attributes' | 'excludedAttributes'>): Resource | undefined {
  const ep = catalogEndpoint(typesOf(ctx), segment);
  if (!ep) return undefined;
  const view = viewOf(ep);
  const projection = parseProjection(view, params);
  const form = ep.catalog.schemas;
  let found: Resource | undefined;
  if (ep.kind === 'role') {
    const entry = ep.catalog.roles.find((r) => r.value === id);
    if (entry) found = catalogEntryResource(ctx.baseUrl, form, entry);
  } else {
    for (const type of ep.types) {
      const entry = type.entitlements.find((e) => e.value === id);
      if (entry) found = catalogEntryResource(ctx.baseUrl, form, entry, type);
    }
  }
  if (!found) throw notFound(`${ep.name} ${id} not found`);
  return projectResource(view, found, projection);
}

/** The answer to a write at the endpoint `segment` names (405); undefined when it names no catalog endpoint. */
export function catalogWriteRefusal(ctx: ScimContext, segment: string): ScimError | undefined {
  const ep = catalogEndpoint(typesOf(ctx), segment);
  if (!ep) return undefined;
  return new ScimError(
    405,
    `${ep.endpoint} is read-only: the team's roles and entitlements are managed with the rollcall CLI (rollcall role ..., rollcall entitlement ...), the admin API (PUT /v2/admin/Catalog) or the console`,
    undefined,
    { allow: 'GET' },
  );
}
