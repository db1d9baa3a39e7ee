/**
 * Groups rows and their membership rows. Membership is one row per (group, user): adding a
 * member touches one row whatever the group's size, and concurrent adds of different members
 * never conflict. Version bumps are single UPDATE statements (no read-modify-write).
 */
import type { Expression, SqlBool } from 'kysely';
import type { Executor, GroupsTable } from '../types.ts';
import type { ListWindow } from './users.ts';

export type GroupRow = GroupsTable;

export interface MemberRow {
  readonly group_id: string;
  readonly user_id: string;
  readonly user_name: string;
}

export async function insertGroup(ex: Executor, row: GroupRow): Promise<void> {
  await ex.insertInto('groups').values(row).execute();
}

export async function groupById(ex: Executor, teamId: string, id: string): Promise<GroupRow | undefined> {
  return ex.selectFrom('groups').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
}

export async function updateGroup(ex: Executor, row: GroupRow, expectedVersion: number): Promise<boolean> {
  const { id, team_id, created_at, ...changes } = row;
  const result = await ex
    .updateTable('groups')
    .set(changes)
    .where('id', '=', id)
    .where('team_id', '=', team_id)
    .where('version', '=', expectedVersion)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Bumps version and lastModified atomically; returns the new version, or undefined if gone. */
export async function touchGroup(ex: Executor, teamId: string, id: string, at: string): Promise<number | undefined> {
  const row = await ex
    .updateTable('groups')
    .set((eb) => ({ version: eb('version', '+', 1), updated_at: at }))
    .where('id', '=', id)
    .where('team_id', '=', teamId)
    .returning('version')
    .executeTakeFirst();
  return row?.version;
}

export async function deleteGroup(ex: Executor, teamId: string, id: string): Promise<boolean> {
  await ex.deleteFrom('group_members').where('group_id', '=', id).where('team_id', '=', teamId).execute();
  const result = await ex.deleteFrom('groups').where('id', '=', id).where('team_id', '=', teamId).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function listGroups(
  ex: Executor,
  teamId: string,
  window: Omit<ListWindow, 'onlyActive'>,
): Promise<{ rows: GroupRow[]; total: number }> {
  let base = ex.selectFrom('groups as g').where('g.team_id', '=', teamId);
  if (window.where) base = base.where(window.where);
  const countRow = await base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  const total = Number(countRow.n);
  if (window.limit === 0 || window.offset >= total) return { rows: [], total };
  const direction = window.descending ? 'desc' : 'asc';
  let query = base.selectAll('g');
  // Absent values (NULL) sort last in both directions, on both engines (their defaults differ).
  if (window.orderBy) query = query.orderBy(window.orderBy, (ob) => (window.descending ? ob.desc() : ob.asc()).nullsLast());
  query = query.orderBy('g.created_at', window.orderBy ? 'asc' : direction).orderBy('g.id', window.orderBy ? 'asc' : direction);
  const rows = await query.limit(window.limit).offset(window.offset).execute();
  return { rows, total };
}

/** Members of the given groups, with their userNames; deactivated users left out when asked. */
export async function membersOf(
  ex: Executor,
  teamId: string,
  groupIds: readonly string[],
  onlyActive: boolean,
): Promise<MemberRow[]> {
  if (groupIds.length === 0) return [];
  let query = ex
    .selectFrom('group_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.group_id', 'm.user_id', 'u.user_name'])
    .where('m.team_id', '=', teamId)
    .where('m.group_id', 'in', groupIds);
  if (onlyActive) query = query.where('u.active', '=', 1);
  return query.orderBy('m.group_id').orderBy('m.created_at').orderBy('m.user_id').execute();
}

/** The groups of the given users: (user_id, group_id, display_name). */
export async function groupsOfUsers(
  ex: Executor,
  teamId: string,
  userIds: readonly string[],
): Promise<{ user_id: string; group_id: string; display_name: string }[]> {
  if (userIds.length === 0) return [];
  return ex
    .selectFrom('group_members as m')
    .innerJoin('groups as g', 'g.id', 'm.group_id')
    .select(['m.user_id', 'm.group_id', 'g.display_name'])
    .where('m.team_id', '=', teamId)
    .where('m.user_id', 'in', userIds)
    .orderBy('g.display_name_key')
    .orderBy('g.id')
    .execute();
}

/** Inserts membership rows, ignoring the ones that exist (adds are idempotent). */
export async function addMembers(
  ex: Executor,
  teamId: string,
  groupId: string,
  userIds: readonly string[],
  at: string,
): Promise<void> {
  for (let i = 0; i < userIds.length; i += 500) {
    const chunk = userIds.slice(i, i + 500);
    await ex
      .insertInto('group_members')
      .values(chunk.map((user_id) => ({ team_id: teamId, group_id: groupId, user_id, created_at: at })))
      .onConflict((oc) => oc.columns(['group_id', 'user_id']).doNothing())
      .execute();
  }
}

export async function removeMembers(ex: Executor, groupId: string, userIds: readonly string[]): Promise<void> {
  for (let i = 0; i < userIds.length; i += 500) {
    await ex
      .deleteFrom('group_members')
      .where('group_id', '=', groupId)
      .where('user_id', 'in', userIds.slice(i, i + 500))
      .execute();
  }
}

/** Removes every member except `keep`. */
export async function clearMembers(ex: Executor, groupId: string, keep: readonly string[]): Promise<void> {
  let query = ex.deleteFrom('group_members').where('group_id', '=', groupId);
  if (keep.length > 0 && keep.length <= 10_000) query = query.where('user_id', 'not in', keep);
  await query.execute();
}

export type MembershipFilter = Expression<SqlBool>;
