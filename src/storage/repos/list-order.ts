/**
 * The order of a list page in SQL, shared by the list strategies (list/*.ts) and the search
 * across resource types (search.ts): the rows a team lists, the ORDER BY terms (sort key, then
 * creation time and id), the seek past a position in that order, the page put back in list order
 * with its positions and total, and each user's groups carried in the page's statement. Plain
 * functions over Kysely builders; no query is run here.
 */
import { sql } from 'kysely';
import type { Expression, OrderByModifiers, RawBuilder, SelectQueryBuilder, SqlBool } from 'kysely';
import type { DialectHooks } from '../dialect.ts';
import { ROW } from '../predicate-sql.ts';
import type { ResourceTable } from '../predicate-sql.ts';
import { hooksOf } from '../statements.ts';
import type { Database, Executor } from '../types.ts';
import type { ListedRow, ListPage, ListWindow, Position, SortKey } from './list/window.ts';

/**
 * A LIMIT or OFFSET written into the SQL rather than bound. SQLite (3.53 here) reads a bound
 * LIMIT while planning and marks the statement expired whenever that parameter is bound again,
 * so a cached statement with `limit ?` would be compiled anew on every run, most of what a short
 * lookup costs.
 * The value is an integer the service computed, never text from a request.
 */
export function rowCount(n: number): RawBuilder<number> {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`not a row count: ${n}`);
  return sql.lit(n);
}

/** The column selected beside the rows when seeking: the sort key's value. */
export const SORT_KEY_COLUMN = 'rc_sort_key';

export interface OrderTerm {
  readonly expr: Expression<unknown>;
  readonly modifiers: OrderByModifiers;
}

export const direction = (descending: boolean): 'asc' | 'desc' => (descending ? 'desc' : 'asc');

/**
 * The ORDER BY terms of a window. Seeking backwards reads the order in reverse (nearest rows
 * first); pageOf turns the page around again.
 */
export function orderTerms(alias: string, window: ListWindow, orderBy: Expression<unknown> | undefined): OrderTerm[] {
  const reverse = window.seek?.direction === 'before';
  const createdAt = sql.ref(`${alias}.created_at`);
  const id = sql.ref(`${alias}.id`);
  if (!orderBy) {
    const d = direction(window.descending !== reverse);
    return [
      { expr: createdAt, modifiers: d },
      { expr: id, modifiers: d },
    ];
  }
  const keyDescending = window.descending !== reverse;
  const tie = direction(reverse);
  return [
    // Absent values last in list order, so first when the order is read backwards.
    { expr: orderBy, modifiers: (ob) => (keyDescending ? ob.desc() : ob.asc())[reverse ? 'nullsFirst' : 'nullsLast']() },
    { expr: createdAt, modifiers: tie },
    { expr: id, modifiers: tie },
  ];
}

/**
 * created_at then id, strictly beyond (c, i) in the direction `greater`: a row-value comparison
 * (SQLite and PostgreSQL alike), which both planners turn into a range of the (team_id,
 * created_at, id) index. The equivalent `c > x or (c = x and id > y)` is not a range: SQLite
 * walks the index from the team's first row to the position, so a page would cost as much as
 * all the rows before it.
 */
export function tiesBeyond(alias: string, from: Position, greater: boolean): Expression<SqlBool> {
  const op = sql.raw(greater ? '>' : '<');
  const createdAt = sql.ref(`${alias}.created_at`);
  const id = sql.ref(`${alias}.id`);
  return sql<SqlBool>`((${createdAt}, ${id}) ${op} (${from.createdAt}, ${from.id}))`;
}

/**
 * The WHERE condition that keeps the rows strictly after (or before) the seek position, in the
 * order orderTerms gives. NULL sort keys form the last group in both directions.
 */
export function seekCondition(alias: string, window: ListWindow, orderBy: Expression<unknown> | undefined): Expression<SqlBool> | undefined {
  const from = window.seek?.from;
  if (!window.seek || !from) return undefined;
  const after = window.seek.direction === 'after';
  const key = orderBy;
  if (!key) return tiesBeyond(alias, from, after !== window.descending);
  // With a sort key the tie-breakers ascend whatever the key's direction.
  const ties = tiesBeyond(alias, from, after);
  if (from.key === null || from.key === undefined) {
    // Within the NULL group only the tie-breakers move; every keyed row comes before it.
    return after ? sql<SqlBool>`(${key} is null and ${ties})` : sql<SqlBool>`(${key} is not null or (${key} is null and ${ties}))`;
  }
  const beyond = sql.raw(after !== window.descending ? '>' : '<');
  const keyed = sql<SqlBool>`(${key} ${beyond} ${from.key} or (${key} = ${from.key} and ${ties}))`;
  return after ? sql<SqlBool>`(${key} is null or ${keyed})` : sql<SqlBool>`(${key} is not null and ${keyed})`;
}

export const sortKeyOf = (value: unknown): SortKey => {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'string') return value;
  if (typeof value === 'bigint' || typeof value === 'boolean') return Number(value);
  return String(value);
};

/**
 * A cursor page from the rows a seeking query returned (at most limit + 1, nearest first): the
 * extra row only tells that there are more; rows sought backwards are put back in list order.
 */
export function pageOf<R extends ListedRow>(
  raw: readonly (R & { readonly [SORT_KEY_COLUMN]?: unknown })[],
  window: ListWindow,
): ListPage<R> {
  const more = raw.length > window.limit;
  const kept = raw.slice(0, window.limit);
  if (window.seek?.direction === 'before') kept.reverse();
  const rows: R[] = [];
  const positions: Position[] = [];
  for (const r of kept) {
    const { [SORT_KEY_COLUMN]: key, ...row } = r;
    rows.push(row as unknown as R);
    positions.push({ ...(window.sort ? { key: sortKeyOf(key) } : {}), createdAt: r.created_at, id: r.id });
  }
  return { rows, total: undefined, positions, more };
}

/**
 * The number of matches for an index page of `rows` that started at `offset`: a page shorter than
 * the limit ends the list, so when it started at the first match or holds any row, the total is
 * offset + its length (what every `userName eq` lookup gets) and nothing is counted. Otherwise
 * (a full page, or an empty page past the end) `count` runs.
 */
export async function totalOf(rows: readonly unknown[], offset: number, limit: number, count: () => Promise<number>): Promise<number> {
  if (rows.length < limit && (offset === 0 || rows.length > 0)) return offset + rows.length;
  return count();
}

/**
 * An index page of `rows` read from `offset`: its total (unless the caller counts it,
 * `countTotal: false`), and in creation order each row's position, which lets the next slice
 * seek instead of counting off (`ListWindow.resumeAfter`).
 */
export async function indexPageOf<R extends ListedRow>(rows: R[], window: ListWindow, count: () => Promise<number>): Promise<ListPage<R>> {
  const positions = window.sort !== undefined ? [] : rows.map((r) => ({ createdAt: r.created_at, id: r.id }));
  return { rows, total: window.countTotal === false ? undefined : await totalOf(rows, window.offset ?? 0, window.limit, count), positions, more: false };
}

/** The columns every listed table has, which paging reads. */
export type Listed = SelectQueryBuilder<Database & { r: { id: string; team_id: string; created_at: string } }, 'r', {}>;

/** The rows of `table` a team lists: users not deleted (and active when asked), every group. */
export function listedRows(ex: Executor, table: ResourceTable, teamId: string, onlyActive: boolean): Listed {
  if (table === 'groups') return ex.selectFrom(`groups as ${ROW}`).where('r.team_id', '=', teamId) as unknown as Listed;
  let q = ex.selectFrom(`users as ${ROW}`).where('r.team_id', '=', teamId).where('r.deleted_at', 'is', null);
  if (onlyActive) q = q.where('r.active', '=', 1);
  return q as unknown as Listed;
}

/** The column a users page carries each row's groups in (`ListWindow.withGroups`). */
export const GROUPS_COLUMN = 'rc_groups';

/** The groups of the listed row `alias` (a correlated subquery over the member index by user). */
export function groupsOfRow(db: Executor, hooks: DialectHooks, teamId: string, alias: string = ROW) {
  return db
    .selectFrom('group_members as m')
    // CROSS JOIN: SQLite then reads the user's memberships first (group_members_user) whatever
    // its statistics say (with no membership rows analyzed it would scan every group instead).
    .crossJoin('groups as g')
    .select(hooks.jsonRows([sql.ref('m.group_id'), sql.ref('g.display_name')], [sql.ref('g.display_name_key'), sql.ref('g.id')]).as('groups'))
    .whereRef('g.id', '=', 'm.group_id')
    .where('m.team_id', '=', teamId)
    .whereRef('m.user_id', '=', sql.ref(`${alias}.id`));
}

/** `query` (over rows aliased `r`) with each user's groups (`ListWindow.withGroups`), as pageQueryOf adds them. */
export function withGroupsOf<Q extends SelectQueryBuilder<Database, never, {}>>(ex: Executor, table: ResourceTable, teamId: string, window: ListWindow, query: Q): Q {
  if (!window.withGroups || table !== 'users') return query;
  return (query as unknown as SelectQueryBuilder<Database & { r: { id: string } }, 'r', {}>).select(groupsOfRow(ex.withoutPlugins(), hooksOf(ex), teamId).as(GROUPS_COLUMN)) as unknown as Q;
}
