/**
 * Which rows hold an entry a request names (a role by value; an entitlement by type and value),
 * under the team's catalog: the one rule the access API (effective.ts) and the `access` filter of
 * user lists (scim/access-filter.ts) share. An entitlement's value names one entitlement of the
 * catalog whatever its type, so a catalog entitlement is held whatever `type` the provider sent
 * with it, and asked for under another type (neither its name nor its endpoint without the slash,
 * case-insensitively) nobody holds it. A value outside the catalog is matched with the type
 * exactly as stored. Pure: no storage, no HTTP.
 */
import type { Catalog, EntitlementType } from '../scim/schema/catalog.ts';
import type { HeldEntry } from '../storage/repos/access.ts';

/** An entry as a request names it. */
export type GrantRef = { readonly kind: 'role'; readonly value: string } | { readonly kind: 'entitlement'; readonly type: string; readonly value: string };

/** The catalog type of entitlement `value`, with its entry's displayName. */
export function entitlementOf(catalog: Catalog | undefined, value: string): { type: EntitlementType; displayName: string } | undefined {
  for (const type of catalog?.types ?? []) {
    const entry = type.entitlements.find((e) => e.value === value);
    if (entry) return { type, displayName: entry.displayName };
  }
  return undefined;
}

/** Whether `name` names `type`: its name or its endpoint without the slash, case-insensitively. */
export const namesType = (name: string, type: EntitlementType): boolean => {
  const n = name.toLowerCase();
  return n === type.name.toLowerCase() || n === type.endpoint.slice(1).toLowerCase();
};

/** The entry storage matches for `grant`; undefined when nobody can hold it (a catalog entitlement asked under another type). */
export function heldEntry(catalog: Catalog | undefined, grant: GrantRef): HeldEntry | undefined {
  if (grant.kind === 'role') return { kind: 'role', value: grant.value };
  const known = entitlementOf(catalog, grant.value);
  if (known) return namesType(grant.type, known.type) ? { kind: 'entitlement', value: grant.value } : undefined;
  return { kind: 'entitlement', value: grant.value, directType: grant.type, mappedTypeKey: grant.type.toLowerCase() };
}
