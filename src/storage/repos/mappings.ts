/**
 * Groups mapped to a role or an entitlement (`access_mappings`, migration 023): a group's members
 * hold what it is mapped to. Plain functions over the caller's executor; the rules (what may be
 * mapped, budgets, audit, events) are src/access/mappings.ts's. A mapping is keyed by team, kind,
 * value and group (values are unique per team and kind, whatever an entitlement's type), so "which
 * groups map to this entry" is a range read, and `access_mappings_group` gives a group's own.
 */
import type { AccessMappingsTable, Executor } from '../types.ts';

export type MappingRow = AccessMappingsTable;
export type MappingKind = AccessMappingsTable['kind'];

/** A mapping with its group's displayName, as lists show it. */
export interface MappingListRow extends MappingRow {
  readonly group_display_name: string;
}

/** Which mapping: its team, kind, value and group. */
export interface MappingKey {
  readonly team_id: string;
  readonly kind: MappingKind;
  readonly value: string;
  readonly group_id: string;
}

/** Adds the mapping; false when it was already there (the stored one is kept as it is). */
export async function insertMapping(ex: Executor, row: MappingRow): Promise<boolean> {
  const inserted = await ex.insertInto('access_mappings').values(row).onConflict((oc) => oc.columns(['team_id', 'kind', 'value', 'group_id']).doNothing()).returning('group_id').executeTakeFirst();
  return inserted !== undefined;
}

/** The mapping, if there is one. */
export async function mappingByKey(ex: Executor, key: MappingKey): Promise<MappingRow | undefined> {
  return ex
    .selectFrom('access_mappings')
    .selectAll()
    .where('team_id', '=', key.team_id)
    .where('kind', '=', key.kind)
    .where('value', '=', key.value)
    .where('group_id', '=', key.group_id)
    .executeTakeFirst();
}

/** Removes the mapping; the removed row, or undefined when there was none. */
export async function deleteMapping(ex: Executor, key: MappingKey): Promise<MappingRow | undefined> {
  return ex
    .deleteFrom('access_mappings')
    .where('team_id', '=', key.team_id)
    .where('kind', '=', key.kind)
    .where('value', '=', key.value)
    .where('group_id', '=', key.group_id)
    .returningAll()
    .executeTakeFirst();
}

/** Removes every mapping of a group (its delete); the removed rows. One statement, none when it had none. */
export async function deleteMappingsOfGroup(ex: Executor, teamId: string, groupId: string): Promise<MappingRow[]> {
  return inKeyOrder(await ex.deleteFrom('access_mappings').where('team_id', '=', teamId).where('group_id', '=', groupId).returningAll().execute());
}

/**
 * Removed rows in key order (kind, value, group): RETURNING gives no order, and the events
 * recorded for them should come in the same order on every engine and every run.
 */
const inKeyOrder = (rows: MappingRow[]): MappingRow[] =>
  rows.sort((a, b) => (a.kind === b.kind ? (a.value === b.value ? (a.group_id < b.group_id ? -1 : a.group_id > b.group_id ? 1 : 0) : a.value < b.value ? -1 : 1) : a.kind < b.kind ? -1 : 1));

/** Removes every mapping to the entry (its forced removal from the catalog); the removed rows. */
export async function deleteMappingsOfEntry(ex: Executor, teamId: string, kind: MappingKind, value: string): Promise<MappingRow[]> {
  return inKeyOrder(await ex.deleteFrom('access_mappings').where('team_id', '=', teamId).where('kind', '=', kind).where('value', '=', value).returningAll().execute());
}

/** The team's mappings (one group's when `groupId`), with the group's displayName: by kind, type, value, then group name. */
export async function listMappingRows(ex: Executor, teamId: string, groupId?: string): Promise<MappingListRow[]> {
  let query = ex
    .selectFrom('access_mappings as m')
    .innerJoin('groups as g', (join) => join.onRef('g.id', '=', 'm.group_id').onRef('g.team_id', '=', 'm.team_id'))
    .select(['m.team_id', 'm.kind', 'm.type_key', 'm.value', 'm.group_id', 'm.created_at', 'g.display_name as group_display_name'])
    .where('m.team_id', '=', teamId);
  if (groupId !== undefined) query = query.where('m.group_id', '=', groupId);
  return query.orderBy('m.kind', 'desc').orderBy('m.type_key').orderBy('m.value').orderBy('g.display_name_key').orderBy('m.group_id').execute();
}

/**
 * How many mappings the team holds, counted after locking the team's row (a no-op update), so two
 * concurrent mappings of one team count one another and its `access.mappings` budget holds.
 */
export async function countMappingsLocked(ex: Executor, teamId: string): Promise<number> {
  await ex.updateTable('teams').set((eb) => ({ limits: eb.ref('limits') })).where('id', '=', teamId).execute();
  const row = await ex.selectFrom('access_mappings').select((eb) => eb.fn.countAll<number | string>().as('n')).where('team_id', '=', teamId).executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * The group's id and displayName, its row locked (a no-op update) until the caller's transaction
 * ends: a concurrent delete of the group, which removes its mappings, waits for a mapping being
 * added, or makes it find no group. Undefined when the team has no such group.
 */
export async function lockGroupForMapping(ex: Executor, teamId: string, groupId: string): Promise<{ id: string; display_name: string } | undefined> {
  const result = await ex.updateTable('groups').set((eb) => ({ version: eb.ref('version') })).where('team_id', '=', teamId).where('id', '=', groupId).executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return undefined;
  return ex.selectFrom('groups').select(['id', 'display_name']).where('team_id', '=', teamId).where('id', '=', groupId).executeTakeFirst();
}

/** A group's id and displayName (no lock), undefined when the team has none with that id. */
export async function groupName(ex: Executor, teamId: string, groupId: string): Promise<{ id: string; display_name: string } | undefined> {
  return ex.selectFrom('groups').select(['id', 'display_name']).where('team_id', '=', teamId).where('id', '=', groupId).executeTakeFirst();
}
