/**
 * A team's catalog of roles and entitlements (DESIGN.md section 12), as its requests see it:
 * plain frozen data, loaded with the team's resource types (team-schemas.ts) and carried on
 * `TeamTypes.catalog`, so discovery, the catalog's SCIM endpoints and the validation of users'
 * `roles` and `entitlements` read one value per request and never query for it. Pure: no
 * storage, no HTTP.
 */

/** A role or an entitlement: `value` is its SCIM `id`, what a user's `roles[].value` holds. */
export interface CatalogEntry {
  readonly value: string;
  readonly displayName: string;
  readonly description?: string;
}

/** An entitlement type: a SCIM resource type of its own (`License` at `/Licenses`). */
export interface EntitlementType {
  /** The resource type name, e.g. `License`. */
  readonly name: string;
  /** Its endpoint, e.g. `/Licenses` (a leading slash, one path segment). */
  readonly endpoint: string;
  readonly description?: string;
  /** A user must hold at least one entitlement of this type. */
  readonly required: boolean;
  /** A user may hold more than one entitlement of this type. */
  readonly multiValued: boolean;
  readonly entitlements: readonly CatalogEntry[];
}

export type CatalogSchemas = 'okta' | 'ietf';

export interface Catalog {
  /** Which schemas discovery shows: Okta's (the default) or the IETF draft's. */
  readonly schemas: CatalogSchemas;
  /** Ordered by value. */
  readonly roles: readonly CatalogEntry[];
  /** Ordered by name. */
  readonly types: readonly EntitlementType[];
}

/** A team "has a catalog" when it declared a role or an entitlement type; else none of it shows. */
export const hasCatalog = (catalog: Catalog | undefined): catalog is Catalog =>
  catalog !== undefined && (catalog.roles.length > 0 || catalog.types.length > 0);

/**
 * Whether `name`, as a client or an administrator sent it, names the entitlement type `type`: its
 * name or its endpoint without the slash, case-insensitively. The one rule for users'
 * `entitlements[].type`, the access API's and the `access` filter's types, and mappings.
 */
export const namesType = (name: string, type: { readonly name: string; readonly endpoint: string }): boolean => {
  const key = name.toLowerCase();
  return key === type.name.toLowerCase() || key === type.endpoint.slice(1).toLowerCase();
};

/** The entitlement type `name` names (namesType), if any. */
export const typeNamed = (catalog: Catalog, name: string): EntitlementType | undefined => catalog.types.find((t) => namesType(name, t));

/** The catalog entitlement of value `value` (values are unique across types), with its type. */
export function entitlementOf(catalog: Catalog | undefined, value: string): { type: EntitlementType; entry: CatalogEntry } | undefined {
  for (const type of catalog?.types ?? []) {
    const entry = type.entitlements.find((e) => e.value === value);
    if (entry) return { type, entry };
  }
  return undefined;
}
