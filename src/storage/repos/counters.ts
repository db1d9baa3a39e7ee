/**
 * A team's counts (migration 010): users by state and groups, kept exact by the writes
 * themselves. A SCIM write whose change moves a count adds its delta with one compiled upsert in
 * its own transaction, just before the feed's counter bump (so on PostgreSQL the row lock is held
 * from there to the commit, as briefly as the feed's, and always taken first: no two writers lock
 * the two rows in opposite orders). A rolled-back write takes its delta back with it; concurrent
 * writers on PostgreSQL add to the row one after the other. Writes that move no count (a rename,
 * a member added) run no statement here. Read by unfiltered lists (their totalResults) and by the
 * console's overview, instead of a `count(*)` over the team's rows.
 */
import { defineStatement, hot } from '../statements.ts';
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

type DeltaParams = Omit<TeamCountersTable, 'users_active' | 'users_deactivated' | 'users_deleted' | 'groups'> & {
  users_active: number;
  users_deactivated: number;
  users_deleted: number;
  groups: number;
};

const ADD_COUNTS = defineStatement<DeltaParams, unknown>('addTeamCounts', ['team_id', 'users_active', 'users_deactivated', 'users_deleted', 'groups'], (db, p) =>
  db
    .insertInto('team_counters')
    .values({ team_id: p.team_id, users_active: p.users_active, users_deactivated: p.users_deactivated, users_deleted: p.users_deleted, groups: p.groups })
    .onConflict((oc) =>
      oc.column('team_id').doUpdateSet((eb) => ({
        users_active: eb('team_counters.users_active', '+', eb.ref('excluded.users_active')),
        users_deactivated: eb('team_counters.users_deactivated', '+', eb.ref('excluded.users_deactivated')),
        users_deleted: eb('team_counters.users_deleted', '+', eb.ref('excluded.users_deleted')),
        groups: eb('team_counters.groups', '+', eb.ref('excluded.groups')),
      })),
    ),
);

/** Adds `delta` to the team's counts in the caller's transaction; nothing when it is empty. */
export async function addCounts(ex: Executor, teamId: string, delta: CountDelta): Promise<void> {
  const params = {
    team_id: teamId,
    users_active: delta.usersActive ?? 0,
    users_deactivated: delta.usersDeactivated ?? 0,
    users_deleted: delta.usersDeleted ?? 0,
    groups: delta.groups ?? 0,
  };
  if (params.users_active === 0 && params.users_deactivated === 0 && params.users_deleted === 0 && params.groups === 0) return;
  await hot(ex).run(ex, ADD_COUNTS, params);
}

export interface TeamCounts {
  readonly usersActive: number;
  readonly usersDeactivated: number;
  readonly usersDeleted: number;
  readonly groups: number;
}

const COUNTS = defineStatement<{ team_id: string }, TeamCountersTable>('teamCounts', ['team_id'], (db, p) =>
  db.selectFrom('team_counters').selectAll().where('team_id', '=', p.team_id),
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
