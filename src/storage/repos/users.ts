/**
 * Users rows. `data` holds the SCIM document; the other columns are its indexed copies, plus
 * `user_name_claim` (the userName key while the user holds its name, unique per team) and
 * `deleted_at` (a user DELETE removed from every read in a team that shows deactivated users;
 * no read here returns such a row except by id, for audit and activation). Writes
 * are conditional on `version` so concurrent replaces cannot silently overwrite each other. The
 * statements of every request (reads by id and userName, insert, update, the member check) are
 * compiled once (statements.ts); lists are built per request.
 */
import { sql } from 'kysely';
import { inChunks } from '../../batches.ts';
import { defineLookup, defineStatement, defineWrite, hooksOf, hot } from '../statements.ts';
import type { Executor, GroupMembersTable, GroupsTable, UsersTable } from '../types.ts';
import { GROUPS_COLUMN } from './list-order.ts';
import { listRows } from './paging.ts';
import type { ListPage, ListWindow } from './list/window.ts';

export type UserRow = UsersTable;

const USER_COLUMNS = [
  'id', 'team_id', 'user_name', 'user_name_key', 'user_name_claim', 'external_id', 'active', 'user_type', 'display_name',
  'given_name', 'family_name', 'user_name_search', 'given_name_search', 'family_name_search', 'password_hash', 'data', 'version', 'created_at', 'updated_at', 'deleted_at',
] as const satisfies readonly (keyof UserRow)[];

const INSERT_USER = defineWrite<UserRow>('insertUser', USER_COLUMNS, (db, row) => db.insertInto('users').values(row));

const USER_BY_ID = defineLookup<{ teamId: string; id: string }, UserRow>('userById', ['teamId', 'id'], (db, p) =>
  db.selectFrom('users').selectAll().where('team_id', '=', p.teamId).where('id', '=', p.id),
);

// The holder of a userName: users that released theirs (hidden deactivated, deleted) never answer.
const USER_BY_NAME_KEY = defineStatement<{ teamId: string; key: string }, UserRow>('userByNameKey', ['teamId', 'key'], (db, p) =>
  db.selectFrom('users').selectAll().where('team_id', '=', p.teamId).where('user_name_claim', '=', p.key),
);

// A user with its groups (group id, displayName; the order of groupsOfUser) in one statement:
// what a read by id shows, in one round trip.
const USER_WITH_GROUPS = defineLookup<{ teamId: string; id: string }, UserRow & { rc_groups: unknown }>('userWithGroups', ['teamId', 'id'], (db, p, hooks) =>
  db
    .selectFrom('users as u')
    .selectAll('u')
    .select((eb) =>
      eb
        .selectFrom('group_members as m')
        // CROSS JOIN: SQLite reads the user's memberships first, whatever its statistics say.
        .crossJoin('groups as g')
        .select(hooks.jsonRows([sql.ref('m.group_id'), sql.ref('g.display_name')], [sql.ref('g.display_name_key'), sql.ref('g.id')]).as('groups'))
        .whereRef('g.id', '=', 'm.group_id')
        .whereRef('m.user_id', '=', 'u.id')
        .where('m.team_id', '=', p.teamId)
        .as('rc_groups'),
    )
    .where('u.team_id', '=', p.teamId)
    .where('u.id', '=', p.id),
);

const UPDATE_USER = defineStatement<UserRow & { expectedVersion: number }, unknown>('updateUser', [...USER_COLUMNS, 'expectedVersion'], (db, p) => {
  const { id, team_id, created_at, expectedVersion, ...changes } = p;
  return db.updateTable('users').set(changes).where('id', '=', id).where('team_id', '=', team_id).where('version', '=', expectedVersion);
});

const USER_ID_IN_TEAM = defineStatement<{ teamId: string; id: string }, { id: string }>('userIdInTeam', ['teamId', 'id'], (db, p) =>
  db.selectFrom('users').select('id').where('team_id', '=', p.teamId).where('id', '=', p.id),
);

export async function insertUser(ex: Executor, row: UserRow): Promise<void> {
  await hot(ex).write(ex, INSERT_USER, row);
}

export async function userById(ex: Executor, teamId: string, id: string): Promise<UserRow | undefined> {
  return hot(ex).first(ex, USER_BY_ID, { teamId, id });
}

/** The user and its groups (id, displayName; ordered as groupsOfUsers orders them), in one statement. */
export async function userWithGroups(ex: Executor, teamId: string, id: string): Promise<{ row: UserRow; groups: UserGroup[] } | undefined> {
  const found = await hot(ex).first(ex, USER_WITH_GROUPS, { teamId, id });
  if (!found) return undefined;
  const { rc_groups, ...row } = found;
  return { row, groups: groupsFrom(ex, rc_groups) };
}

/** The user of the team that holds the userName whose lower-cased form is `key`. */
export async function userByNameKey(ex: Executor, teamId: string, key: string): Promise<UserRow | undefined> {
  return hot(ex).first(ex, USER_BY_NAME_KEY, { teamId, key });
}

/** Writes `row` if the stored version is still `expectedVersion`; false when someone else won. */
export async function updateUser(ex: Executor, row: UserRow, expectedVersion: number): Promise<boolean> {
  return (await hot(ex).run(ex, UPDATE_USER, { ...row, expectedVersion })) === 1;
}

/** A user's group as a read shows it. */
export type UserGroup = Readonly<Pick<GroupMembersTable, 'group_id'> & Pick<GroupsTable, 'display_name'>>;

/** A listed user; with `withGroups`, its groups read with it. */
export type ListedUser = UserRow & { readonly groups?: readonly UserGroup[] };

const groupsFrom = (ex: Executor, json: unknown): UserGroup[] =>
  ((json === null || json === undefined ? [] : hooksOf(ex).parseJson(json)) as unknown as [string, string][]).map(([group_id, display_name]) => ({ group_id, display_name }));

/** A page of the team's listed users (repos/paging.ts `listRows`); with `withGroups`, each with its groups, in the same statement. */
export async function listUsers(ex: Executor, teamId: string, window: ListWindow): Promise<ListPage<ListedUser>> {
  const page = await listRows<UserRow & { [GROUPS_COLUMN]?: unknown }>(ex, 'users', teamId, window);
  if (!window.withGroups) return page;
  return { ...page, rows: page.rows.map(({ [GROUPS_COLUMN]: groups, ...row }) => ({ ...row, groups: groupsFrom(ex, groups) })) };
}

/** The team's users among `ids` (deleted and deactivated ones too), in no particular order. */
export async function usersByIds(ex: Executor, teamId: string, ids: readonly string[]): Promise<UserRow[]> {
  // Looked up by primary key, the team checked on the rows (see existingUserIds).
  const rows: UserRow[] = [];
  await inChunks(ids, 500, async (chunk) => {
    for (const row of await ex.selectFrom('users').selectAll().where('id', 'in', chunk).execute()) if (row.team_id === teamId) rows.push(row);
  });
  return rows;
}

/** The ids among `ids` that are users of the team. */
export async function existingUserIds(ex: Executor, teamId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  // One member added (what identity providers send): the compiled statement.
  if (ids.length === 1) return new Set((await hot(ex).all(ex, USER_ID_IN_TEAM, { teamId, id: ids[0]! })).map((r) => r.id));
  // Looked up by primary key, the team checked on the rows: with `team_id = ?` in the WHERE,
  // SQLite's planner would read the whole team from its covering index instead.
  const found = new Set<string>();
  await inChunks(ids, 500, async (chunk) => {
    const rows = await ex.selectFrom('users').select(['id', 'team_id']).where('id', 'in', chunk).execute();
    for (const r of rows) if (r.team_id === teamId) found.add(r.id);
  });
  return found;
}

/**
 * The active users with a password whose login key is `key`, in one team or in every team
 * (sign-in names are per team: several teams may hold the same name), oldest first, at most
 * `limit` rows.
 */
export async function loginCandidates(ex: Executor, key: string, teamId: string | null, limit: number): Promise<UserRow[]> {
  let query = ex
    .selectFrom('users')
    .selectAll()
    // user_name_key finds the rows through 005's users_login_name index; the claim keeps holders only.
    .where('user_name_key', '=', key)
    .where('user_name_claim', '=', key)
    .where('password_hash', 'is not', null)
    .where('active', '=', 1);
  if (teamId !== null) query = query.where('team_id', '=', teamId);
  return query.orderBy('created_at').orderBy('id').limit(limit).execute();
}

/**
 * Recomputes who holds a name after a team changes how it treats deactivated users (DESIGN.md
 * section 4; the same rule as scim/users.ts `holdsName`): hiding, the active hold theirs;
 * showing, everyone not deleted.
 */
export async function recomputeNameClaims(ex: Executor, teamId: string, mode: 'hidden' | 'visible'): Promise<void> {
  // Released first, then claimed: the unique index is checked per row as the UPDATE goes.
  await ex.updateTable('users').set({ user_name_claim: null }).where('team_id', '=', teamId).execute();
  let claim = ex.updateTable('users').set((eb) => ({ user_name_claim: eb.ref('user_name_key') })).where('team_id', '=', teamId);
  claim = mode === 'hidden' ? claim.where('active', '=', 1) : claim.where('deleted_at', 'is', null);
  await claim.execute();
}

/** userNames (lower-cased) that more than one not-deleted user of the team has, with those users. */
export async function sharedUserNames(ex: Executor, teamId: string, limit: number): Promise<{ key: string; users: { id: string; user_name: string }[] }[]> {
  const keys = await ex
    .selectFrom('users')
    .select('user_name_key')
    .where('team_id', '=', teamId)
    .where('deleted_at', 'is', null)
    .groupBy('user_name_key')
    .having((eb) => eb.fn.countAll(), '>', 1)
    .orderBy('user_name_key')
    .limit(limit)
    .execute();
  if (keys.length === 0) return [];
  const rows = await ex
    .selectFrom('users')
    .select(['id', 'user_name', 'user_name_key'])
    .where('team_id', '=', teamId)
    .where('deleted_at', 'is', null)
    .where('user_name_key', 'in', keys.map((k) => k.user_name_key))
    .orderBy('created_at')
    .execute();
  return keys.map((k) => ({ key: k.user_name_key, users: rows.filter((r) => r.user_name_key === k.user_name_key).map((r) => ({ id: r.id, user_name: r.user_name })) }));
}
