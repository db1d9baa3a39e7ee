/**
 * A query across Users and Groups at once (RFC 7644 3.4.2.1, the server root): one UNION ALL of
 * the two tables' visible rows, ordered and paged in SQL, answering which resources (type, id)
 * the page holds and how many match in all. The rows themselves are then read by id. The order:
 * by the sort key when there is one (absent values last in both directions, as on /Users and
 * /Groups), else Users before Groups; then creation time and id, as on each endpoint.
 */
import { sql } from 'kysely';
import type { Expression, SqlBool } from 'kysely';
import type { Executor } from '../types.ts';
import type { GroupRow } from './groups.ts';
import { rowCount } from './paging.ts';
import type { UserRow } from './users.ts';

/** One resource type's part of the search; a type with no branch contributes nothing. */
export interface SearchBranch {
  readonly where?: Expression<SqlBool>;
  /** The sort key; NULL (absent) for every row when the type has no such attribute. */
  readonly sortKey?: Expression<unknown>;
}

export interface SearchWindow {
  readonly users?: SearchBranch;
  readonly groups?: SearchBranch;
  /** Hidden deactivated users (the team's setting) are left out. */
  readonly onlyActiveUsers: boolean;
  readonly sorted: boolean;
  readonly descending: boolean;
  readonly offset: number;
  readonly limit: number;
}

export interface SearchHit {
  readonly type: 'User' | 'Group';
  readonly id: string;
}

export async function searchAcross(ex: Executor, teamId: string, window: SearchWindow): Promise<{ hits: SearchHit[]; total: number }> {
  const key = (branch: SearchBranch) => (window.sorted && branch.sortKey ? sql<unknown>`${branch.sortKey}` : sql<unknown>`null`);
  const usersPart = (branch: SearchBranch) => {
    let q = ex
      .selectFrom('users as u')
      .select([sql<string>`'User'`.as('rt'), sql<number>`0`.as('rank'), 'u.id as id', 'u.created_at as created_at', key(branch).as('k')])
      .where('u.team_id', '=', teamId)
      .where('u.deleted_at', 'is', null);
    if (window.onlyActiveUsers) q = q.where('u.active', '=', 1);
    return branch.where ? q.where(branch.where) : q;
  };
  const groupsPart = (branch: SearchBranch) => {
    const q = ex
      .selectFrom('groups as g')
      .select([sql<string>`'Group'`.as('rt'), sql<number>`1`.as('rank'), 'g.id as id', 'g.created_at as created_at', key(branch).as('k')])
      .where('g.team_id', '=', teamId);
    return branch.where ? q.where(branch.where) : q;
  };
  const { users, groups } = window;
  const union =
    users && groups ? usersPart(users).unionAll(groupsPart(groups)) : users ? usersPart(users) : groups ? groupsPart(groups) : undefined;
  if (!union) return { hits: [], total: 0 };
  const total = Number((await ex.selectFrom(union.as('r')).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()).n);
  if (window.limit === 0 || window.offset >= total) return { hits: [], total };
  const d = window.descending ? 'desc' : 'asc';
  let page = ex.selectFrom(union.as('r')).select(['r.rt', 'r.id']);
  if (window.sorted) page = page.orderBy('r.k', (ob) => (window.descending ? ob.desc() : ob.asc()).nullsLast()).orderBy('r.created_at', 'asc').orderBy('r.id', 'asc');
  else page = page.orderBy('r.rank', 'asc').orderBy('r.created_at', d).orderBy('r.id', d);
  const rows = await page.limit(rowCount(window.limit)).offset(rowCount(window.offset)).execute();
  return { hits: rows.map((r) => ({ type: r.rt === 'User' ? 'User' : 'Group', id: r.id })), total };
}

export async function usersByIds(ex: Executor, teamId: string, ids: readonly string[]): Promise<UserRow[]> {
  if (ids.length === 0) return [];
  return ex.selectFrom('users').selectAll().where('team_id', '=', teamId).where('id', 'in', ids).execute();
}

export async function groupsByIds(ex: Executor, teamId: string, ids: readonly string[]): Promise<GroupRow[]> {
  if (ids.length === 0) return [];
  return ex.selectFrom('groups').selectAll().where('team_id', '=', teamId).where('id', 'in', ids).execute();
}
