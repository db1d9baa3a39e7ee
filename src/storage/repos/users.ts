/**
 * Users rows. `data` holds the SCIM document; the other columns are its indexed copies. Writes
 * are conditional on `version` so concurrent replaces cannot silently overwrite each other.
 */
import { sql } from 'kysely';
import type { Executor, UsersTable } from '../types.ts';
import { orderTerms, pageOf, seekCondition, SORT_KEY_COLUMN } from './paging.ts';
import type { ListPage, ListWindow } from './paging.ts';

export type UserRow = UsersTable;

export async function insertUser(ex: Executor, row: UserRow): Promise<void> {
  await ex.insertInto('users').values(row).execute();
}

export async function userById(ex: Executor, teamId: string, id: string): Promise<UserRow | undefined> {
  return ex.selectFrom('users').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
}

export async function userByNameKey(ex: Executor, teamId: string, key: string): Promise<UserRow | undefined> {
  return ex
    .selectFrom('users')
    .selectAll()
    .where('team_id', '=', teamId)
    .where('user_name_key', '=', key)
    .executeTakeFirst();
}

/** Writes `row` if the stored version is still `expectedVersion`; false when someone else won. */
export async function updateUser(ex: Executor, row: UserRow, expectedVersion: number): Promise<boolean> {
  const { id, team_id, created_at, ...changes } = row;
  const result = await ex
    .updateTable('users')
    .set(changes)
    .where('id', '=', id)
    .where('team_id', '=', team_id)
    .where('version', '=', expectedVersion)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function listUsers(ex: Executor, teamId: string, window: ListWindow): Promise<ListPage<UserRow>> {
  let base = ex.selectFrom('users as u').where('u.team_id', '=', teamId);
  if (window.onlyActive) base = base.where('u.active', '=', 1);
  if (window.where) base = base.where(window.where);
  const countRow = await base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  const total = Number(countRow.n);
  const offset = window.offset ?? 0;
  if (window.limit === 0 || offset >= total) return { rows: [], total, positions: [], more: false };
  let query = base.selectAll('u');
  for (const term of orderTerms('u', window)) query = query.orderBy(term.expr, term.modifiers);
  if (!window.seek) return { rows: await query.limit(window.limit).offset(offset).execute(), total, positions: [], more: false };
  const seek = seekCondition('u', window);
  if (seek) query = query.where(seek);
  const keyed = window.orderBy ? query.select(sql<unknown>`${window.orderBy}`.as(SORT_KEY_COLUMN)) : query;
  return pageOf<UserRow>(await keyed.limit(window.limit + 1).execute(), total, window);
}

/** The ids among `ids` that are users of the team. */
export async function existingUserIds(ex: Executor, teamId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await ex
      .selectFrom('users')
      .select('id')
      .where('team_id', '=', teamId)
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
    for (const r of rows) found.add(r.id);
  }
  return found;
}

/** The user that signs in with `key` (a lower-cased userName), in whatever team: at most one has a password. */
export async function loginUserByNameKey(ex: Executor, key: string): Promise<UserRow | undefined> {
  return ex
    .selectFrom('users')
    .selectAll()
    .where('user_name_key', '=', key)
    .where('password_hash', 'is not', null)
    .executeTakeFirst();
}
