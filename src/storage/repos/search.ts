/**
 * A query across Users and Groups at once (RFC 7644 3.4.2.1, the server root): one UNION ALL of
 * the two tables' visible rows, ordered and paged in SQL, answering which resources (type, id)
 * the page holds and how many match in all. The rows themselves are then read by id. The order:
 * by the sort key when there is one (absent values last in both directions, as on /Users and
 * /Groups), else Users before Groups; then creation time and id, as on each endpoint.
 */
import { sql } from 'kysely';
import type { OrderKey, Predicate } from '../predicate.ts';
import { predicateSql, sortKeySql } from '../predicate-sql.ts';
import { hooksOf } from '../statements.ts';
import type { Executor } from '../types.ts';
import type { GroupRow } from './groups.ts';
import { listedRows, rowCount } from './list-order.ts';
import type { UserRow } from './users.ts';

/** One resource type's part of the search; a type with no branch contributes nothing. */
export interface SearchBranch {
  readonly where?: Predicate;
  /** The sort key; NULL (absent) for every row when the type has no such attribute. */
  readonly sort?: OrderKey;
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
  const hooks = hooksOf(ex);
  // Each branch is the table's listed rows (paging.ts listedRows, aliased as predicate-sql.ts expects).
  const part = (table: 'users' | 'groups', branch: SearchBranch) => {
    const key = window.sorted && branch.sort ? sql<unknown>`${sortKeySql(hooks, table, branch.sort)}` : sql<unknown>`null`;
    const q = listedRows(ex, table, teamId, table === 'users' && window.onlyActiveUsers).select([
      sql<string>`${sql.lit(table === 'users' ? 'User' : 'Group')}`.as('rt'),
      sql<number>`${sql.lit(table === 'users' ? 0 : 1)}`.as('rank'),
      'r.id as id',
      'r.created_at as created_at',
      key.as('k'),
    ]);
    return branch.where ? q.where(predicateSql(hooks, table, branch.where)) : q;
  };
  const usersPart = (branch: SearchBranch) => part('users', branch);
  const groupsPart = (branch: SearchBranch) => part('groups', branch);
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
