/**
 * A team's counts (migration 010): users by state and groups, and the users again by the hour and
 * the second of their creation (what an index page deep in the list finds its start with,
 * repos/list/offset-by-buckets.ts), kept exact by the writes themselves. A SCIM write whose change moves a count
 * adds its delta with one compiled upsert in its own transaction, a deferred write (statements.ts
 * `defineWrite`): on PostgreSQL it goes out with the write's other deferred writes in the
 * transaction's last statement before its commit, or as the whole of it, so the rows' locks are
 * held from there to the commit only; its three rows are always locked in one order (level 0
 * first), so writers never deadlock on them. A rolled-back write takes its delta back with it; concurrent
 * writers on PostgreSQL add to the row one after the other. Writes that move no count (a rename,
 * a member added) run no statement here. Read by unfiltered lists (their totalResults) and by the
 * console's overview, instead of a `count(*)` over the team's rows.
 */
import { defineStatement, defineWrite, hot } from '../statements.ts';
import type { Executor, TeamCountersTable } from '../types.ts';

/** How a users row counts: active; deactivated and not deleted; deleted. */
export type UserState = 'active' | 'deactivated' | 'deleted';

export function userStateOf(row: { readonly active: number; readonly deleted_at: string | null }): UserState {
  if (row.deleted_at !== null) return 'deleted';
  return row.active === 1 ? 'active' : 'deactivated';
}

/** Changes of a team's counts (each may be negative). */
export interface CountDelta {
  readonly usersActive?: number;
  readonly usersDeactivated?: number;
  readonly usersDeleted?: number;
  readonly groups?: number;
}

const COLUMN_OF: Record<UserState, keyof CountDelta> = { active: 'usersActive', deactivated: 'usersDeactivated', deleted: 'usersDeleted' };

/** The delta of a user row going from `before` (undefined: a new row) to `after`. */
export function userDelta(before: UserState | undefined, after: UserState): CountDelta {
  if (before === after) return {};
  return { ...(before ? { [COLUMN_OF[before]]: -1 } : {}), [COLUMN_OF[after]]: 1 };
}

/** Creation-time buckets of the users counts: level 1 by the hour, level 2 by the second. */
export const BUCKETS = [
  { level: 1, length: 13 },
  { level: 2, length: 19 },
] as const;

interface DeltaParams {
  team_id: string;
  hour: string;
  second: string;
  users_active: number;
  users_deactivated: number;
  users_deleted: number;
  groups: number;
}

/** The row values of one counter row with the delta's columns (the level's bucket from `p`). */
const deltaRow = (p: DeltaParams, level: number, bucket: string) => ({
  team_id: p.team_id,
  level,
  bucket,
  users_active: p.users_active,
  users_deactivated: p.users_deactivated,
  users_deleted: p.users_deleted,
  groups: p.groups,
});

/**
 * One upsert adding the delta to the given rows: the team's (level 0) and, for users, the hour's
 * and the second's of the row's creation. The rows are always locked in this order (level 0
 * first), so concurrent writers on PostgreSQL queue on the team's row and never deadlock.
 */
const addStatement = (name: string, withBuckets: boolean) =>
  defineWrite<DeltaParams>(name, withBuckets ? ['team_id', 'hour', 'second', 'users_active', 'users_deactivated', 'users_deleted', 'groups'] : ['team_id', 'users_active', 'users_deactivated', 'users_deleted', 'groups'], (db, p) =>
    db
      .insertInto('team_counters')
      .values(withBuckets ? [deltaRow(p, 0, ''), deltaRow(p, 1, p.hour), deltaRow(p, 2, p.second)] : [deltaRow(p, 0, '')])
      .onConflict((oc) =>
        oc.columns(['team_id', 'level', 'bucket']).doUpdateSet((eb) => ({
          users_active: eb('team_counters.users_active', '+', eb.ref('excluded.users_active')),
          users_deactivated: eb('team_counters.users_deactivated', '+', eb.ref('excluded.users_deactivated')),
          users_deleted: eb('team_counters.users_deleted', '+', eb.ref('excluded.users_deleted')),
          groups: eb('team_counters.groups', '+', eb.ref('excluded.groups')),
        })),
      ),
  );

const ADD_USER_COUNTS = addStatement('addTeamCounts', true);
const ADD_GROUP_COUNTS = addStatement('addTeamGroupCounts', false);

/**
 * Adds `delta` to the team's counts in the caller's transaction; nothing when it is empty. A
 * delta of users needs their creation time (`created_at`), whose hour and second count them too.
 */
export async function addCounts(ex: Executor, teamId: string, delta: CountDelta, createdAt?: string): Promise<void> {
  const users = { users_active: delta.usersActive ?? 0, users_deactivated: delta.usersDeactivated ?? 0, users_deleted: delta.usersDeleted ?? 0 };
  const groups = delta.groups ?? 0;
  const touchesUsers = users.users_active !== 0 || users.users_deactivated !== 0 || users.users_deleted !== 0;
  if (!touchesUsers && groups === 0) return;
  if (!touchesUsers) {
    await hot(ex).write(ex, ADD_GROUP_COUNTS, { team_id: teamId, hour: '', second: '', ...users, groups });
    return;
  }
  if (createdAt === undefined || createdAt.length < 19) throw new Error('a change of the users counts needs the users\' creation time');
  if (groups !== 0) throw new Error('users and groups are counted by separate writes');
  await hot(ex).write(ex, ADD_USER_COUNTS, { team_id: teamId, hour: createdAt.slice(0, 13), second: createdAt.slice(0, 19), ...users, groups: 0 });
}

export interface TeamCounts {
  readonly usersActive: number;
  readonly usersDeactivated: number;
  readonly usersDeleted: number;
  readonly groups: number;
}

const COUNTS = defineStatement<{ team_id: string }, TeamCountersTable>('teamCounts', ['team_id'], (db, p) =>
  db.selectFrom('team_counters').selectAll().where('team_id', '=', p.team_id).where('level', '=', 0).where('bucket', '=', ''),
);

/** The team's counts (all zero before its first counted write). */
export async function teamCounts(ex: Executor, teamId: string): Promise<TeamCounts> {
  const row = await hot(ex).first(ex, COUNTS, { team_id: teamId });
  return {
    usersActive: Number(row?.users_active ?? 0),
    usersDeactivated: Number(row?.users_deactivated ?? 0),
    usersDeleted: Number(row?.users_deleted ?? 0),
    groups: Number(row?.groups ?? 0),
  };
}
