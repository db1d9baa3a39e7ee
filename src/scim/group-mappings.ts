/**
 * A group's mappings to roles and entitlements as a SCIM write sees them (issue 31): recording a
 * mapping change (its audit row and its ONE feed event, a `patch` of the Role or Entitlement
 * resource with `groups` changed and the group in the members delta), and removing a deleted
 * group's mappings in the group's delete transaction (scim/groups.ts). The mapping operations
 * themselves (map, unmap, list: src/access/mappings.ts) record through here too. It lives in
 * src/scim, not src/access, because a SCIM group delete needs it and src/access builds on
 * src/scim, never the reverse.
 */
import type { Actor } from '../audit/events.ts';
import type { Clock } from '../clock.ts';
import { recordAuditedChange } from '../events/feed.ts';
import type { WriteOrigin } from '../events/feed.ts';
import { catalogRows, nextSchemaVersion } from '../storage/repos/catalog.ts';
import type { CatalogRows, CatalogTypeRow } from '../storage/repos/catalog.ts';
import { deleteMappingsOfGroup } from '../storage/repos/mappings.ts';
import type { MappingRow } from '../storage/repos/mappings.ts';
import type { Executor } from '../storage/types.ts';

/** The catalog's type of type key `typeKey` (its lower-cased name). */
export const typeOf = (catalog: CatalogRows, typeKey: string): CatalogTypeRow | undefined => catalog.types.find((t) => t.name_key === typeKey);

/** The Role or Entitlement resource as the catalog's SCIM endpoints show it (Okta's form), the event's document. */
export function resourceData(row: MappingRow, catalog: CatalogRows): string {
  const entry = catalog.entries.find((e) => e.kind === row.kind && e.value === row.value);
  const type = row.kind === 'entitlement' ? typeOf(catalog, row.type_key) : undefined;
  return JSON.stringify({
    id: row.value,
    ...(entry ? { displayName: entry.display_name } : {}),
    ...(entry?.description != null ? { description: entry.description } : {}),
    ...(type ? { type: type.name } : {}),
  });
}

/** Who records a mapping change, and when. */
export interface Recorder {
  readonly clock: Clock;
  readonly teamId: string;
  readonly actor: Actor;
  readonly requestId: string | null;
}

/**
 * A mapping's audit row and its one feed event, in the change's transaction: a `patch` of the
 * Role or Entitlement, `groups` changed, the group added to or removed from it.
 */
export async function recordMapping(by: Recorder, trx: Executor, action: 'access_mapped' | 'access_unmapped', row: MappingRow, catalog: CatalogRows, version: number, note: Record<string, unknown> = {}): Promise<void> {
  const resourceType = row.kind === 'role' ? 'Role' : 'Entitlement';
  const type = row.kind === 'entitlement' ? (typeOf(catalog, row.type_key)?.name ?? row.type_key) : undefined;
  await recordAuditedChange(
    by,
    trx,
    { teamId: by.teamId, actor: by.actor, requestId: by.requestId, action, resourceType, resourceId: row.value, detail: { group: row.group_id, kind: row.kind, ...(type !== undefined ? { type } : {}), value: row.value, ...note } },
    {
      teamId: by.teamId,
      type: 'patch',
      resourceType,
      resourceId: row.value,
      version,
      changed: ['groups'],
      actor: by.actor,
      txn: by.requestId,
      externalId: null,
      data: resourceData(row, catalog),
      members: action === 'access_mapped' ? { added: [row.group_id] } : { removed: [row.group_id] },
    },
  );
}

/**
 * A group's delete (scim/groups.ts), in its transaction: removes the group's mappings, each with
 * its `access_unmapped` audit row and its one event, as an unmapping would. One statement when
 * the group had none. Answers how many it removed.
 */
export async function unmapDeletedGroup(origin: WriteOrigin, trx: Executor, groupId: string): Promise<number> {
  const removed = await deleteMappingsOfGroup(trx, origin.team.id, groupId);
  if (removed.length === 0) return 0;
  const catalog = await catalogRows(trx, origin.team.id);
  const by: Recorder = { clock: origin.clock, teamId: origin.team.id, actor: origin.actor, requestId: origin.requestId };
  for (const row of removed) await recordMapping(by, trx, 'access_unmapped', row, catalog, await nextSchemaVersion(trx, by.teamId), { groupDeleted: true });
  return removed.length;
}
