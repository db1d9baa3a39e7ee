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
