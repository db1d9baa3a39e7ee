/**
 * Which rows hold an entry a request names (a role by value; an entitlement by type and value),
 * under the team's catalog: the one rule the access API (src/access/effective.ts) and the `access`
 * filter of user lists (access-filter.ts) share. An entitlement's value names one entitlement of
 * the catalog whatever its type, so a catalog entitlement is held whatever `type` the provider
 * sent with it, and asked for under another type (one it does not name, schema/catalog.ts
 * `namesType`) nobody holds it. A value outside the catalog is matched with the type exactly as
 * stored. Pure: no storage, no HTTP. It lives in src/scim (not src/access) because a SCIM list's
 * filter needs it and src/access builds on src/scim, not the other way round.
 */
import { entitlementOf, namesType } from './schema/catalog.ts';
import type { Catalog } from './schema/catalog.ts';
import type { HeldEntry } from '../storage/repos/access.ts';

/** An entry as a request names it. */
export type GrantRef = { readonly kind: 'role'; readonly value: string } | { readonly kind: 'entitlement'; readonly type: string; readonly value: string };

/** The entry storage matches for `grant`; undefined when nobody can hold it (a catalog entitlement asked under another type). */
export function heldEntry(catalog: Catalog | undefined, grant: GrantRef): HeldEntry | undefined {
  if (grant.kind === 'role') return { kind: 'role', value: grant.value };
  const known = entitlementOf(catalog, grant.value);
  if (known) return namesType(grant.type, known.type) ? { kind: 'entitlement', value: grant.value } : undefined;
  return { kind: 'entitlement', value: grant.value, directType: grant.type, mappedTypeKey: grant.type.toLowerCase() };
}
