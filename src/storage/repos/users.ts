/**
 * Users rows. `data` holds the SCIM document; the other columns are its indexed copies. Writes
 * are conditional on `version` so concurrent replaces cannot silently overwrite each other.
 */
import type { Expression, SqlBool } from 'kysely';
import type { Executor, UsersTable } from '../types.ts';

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

export interface ListWindow {
  readonly where?: Expression<SqlBool>;
  readonly onlyActive: boolean;
  /** The sort key (RFC 7644 3.4.2.3); resources without one come last whatever the direction. */
  readonly orderBy?: Expression<unknown>;
  readonly descending: boolean;
  /** 0-based offset. */
  readonly offset: number;
  readonly limit: number;
}

export async function listUsers(ex: Executor, teamId: string, window: ListWindow): Promise<{ rows: UserRow[]; total: number }> {
  let base = ex.selectFrom('users as u').where('u.team_id', '=', teamId);
  if (window.onlyActive) base = base.where('u.active', '=', 1);
  if (window.where) base = base.where(window.where);
  const countRow = await base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  const total = Number(countRow.n);
  if (window.limit === 0 || window.offset >= total) return { rows: [], total };
  const direction = window.descending ? 'desc' : 'asc';
  let query = base.selectAll('u');
  // Absent values (NULL) sort last in both directions, on both engines (their defaults differ).
  if (window.orderBy) query = query.orderBy(window.orderBy, (ob) => (window.descending ? ob.desc() : ob.asc()).nullsLast());
  query = query.orderBy('u.created_at', window.orderBy ? 'asc' : direction).orderBy('u.id', window.orderBy ? 'asc' : direction);
  const rows = await query.limit(window.limit).offset(window.offset).execute();
  return { rows, total };
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
