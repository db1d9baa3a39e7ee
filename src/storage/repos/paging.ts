/**
 * The one list routine of Users and Groups (`listRows`), paging by either method: an offset (RFC 7644 3.4.2.4
 * index paging) or a keyset position (RFC 9865 cursor paging). Both order rows the same way:
 * by the sort key when there is one (absent values last in both directions), then by creation
 * time and id, which make the order total. A keyset page seeks past a position with a WHERE
 * condition on exactly those keys, so a deep page costs what the first one does. Sort keys are
 * compared through the very expression the rows are ordered by (the sort key compiled by
 * predicate-sql.ts: folded for case-insensitive attributes, code-point ordered), which is also
 * selected with the rows so that a position carries the value SQL compared, not one recomputed
 * in JavaScript. Filters arrive as storage predicates (predicate.ts) and are compiled here, over
 * the rows a team can list (users: not deleted, and active when the team hides deactivated
 * ones), with the resource row aliased `r` as predicate-sql.ts expects.
 */
import { sql } from 'kysely';
import type { Expression, OrderByModifiers, RawBuilder, SelectQueryBuilder, SqlBool } from 'kysely';
import type { OrderKey, Predicate } from '../predicate.ts';
import { predicateSql, ROW, sortKeySql } from '../predicate-sql.ts';
import type { ResourceTable } from '../predicate-sql.ts';
import { hooksOf } from '../statements.ts';
import type { DialectHooks } from '../dialect.ts';
import type { Database, Executor } from '../types.ts';

/** A sort key's value as SQL computed it: folded text, a 1/0 boolean, or NULL when absent. */
export type SortKey = string | number | null;

/** Where a row stands in the order. `key` is present exactly when the list is sorted by a key. */
export interface Position {
  readonly key?: SortKey;
  readonly createdAt: string;
  readonly id: string;
}

/** Keyset paging: the rows after `from` (or before it), nearest first; from the start without `from`. */
export interface Seek {
  readonly direction: 'after' | 'before';
  readonly from?: Position;
}

export interface ListWindow {
  readonly where?: Predicate;
  /** Users only: deactivated users are left out (a team that hides them). */
  readonly onlyActive?: boolean;
  /** The sort key (RFC 7644 3.4.2.3); resources without one come last whatever the direction. */
  readonly sort?: OrderKey;
  readonly descending: boolean;
  readonly limit: number;
  /** Index paging: a 0-based offset. */
  readonly offset?: number;
  /** Cursor paging: where to start (instead of an offset). */
  readonly seek?: Seek;
  /**
   * Index paging: false when the caller reads a page in several slices and counts the total
   * itself (scim/paging.ts budgetedPage); the repository then leaves `total` undefined.
   */
  readonly countTotal?: boolean;
}

export interface ListPage<R> {
  /** The page's rows in list order (also when seeking backwards). */
  readonly rows: R[];
  /**
   * Every row that matches, on every page: counted only when the page cannot tell it (see
   * totalOf), and for a limit of 0 (a request for the total alone). Undefined on cursor pages
   * otherwise: a keyset page must cost what the rows it returns cost, and counting a team of a
   * million takes hundreds of milliseconds.
   */
  readonly total: number | undefined;
  /** The position of each row of `rows` (cursor paging only). */
  readonly positions: Position[];
  /** Cursor paging: whether more rows lie beyond the page in the direction sought. */
  readonly more: boolean;
}

/**
 * A LIMIT or OFFSET written into the SQL rather than bound. SQLite (3.53 here) reads a bound
 * LIMIT while planning and marks the statement expired whenever that parameter is bound again,
 * so a cached statement with `limit ?` is compiled anew on every run: 11 µs of a 17 µs lookup.
 * The value is an integer the service computed, never text from a request.
 */
export function rowCount(n: number): RawBuilder<number> {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`not a row count: ${n}`);
  return sql.lit(n);
}

/** The column selected beside the rows when seeking: the sort key's value. */
export const SORT_KEY_COLUMN = 'rc_sort_key';

interface OrderTerm {
  readonly expr: Expression<unknown>;
  readonly modifiers: OrderByModifiers;
}

const direction = (descending: boolean): 'asc' | 'desc' => (descending ? 'desc' : 'asc');

/**
 * The ORDER BY terms of a window. Seeking backwards reads the order in reverse (nearest rows
 * first); pageOf turns the page around again.
 */
function orderTerms(alias: string, window: ListWindow, orderBy: Expression<unknown> | undefined): OrderTerm[] {
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
 * walked the index from the team's first row to the position (50 ms in the middle of a million
 * users, 110 ms at the end, against 0.3 ms).
 */
function tiesBeyond(alias: string, from: Position, greater: boolean): Expression<SqlBool> {
  const op = sql.raw(greater ? '>' : '<');
  const createdAt = sql.ref(`${alias}.created_at`);
  const id = sql.ref(`${alias}.id`);
  return sql<SqlBool>`((${createdAt}, ${id}) ${op} (${from.createdAt}, ${from.id}))`;
}

/**
 * The WHERE condition that keeps the rows strictly after (or before) the seek position, in the
 * order orderTerms gives. NULL sort keys form the last group in both directions.
 */
function seekCondition(alias: string, window: ListWindow, orderBy: Expression<unknown> | undefined): Expression<SqlBool> | undefined {
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

const sortKeyOf = (value: unknown): SortKey => {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'string') return value;
  if (typeof value === 'bigint' || typeof value === 'boolean') return Number(value);
  return String(value);
};

/**
 * A cursor page from the rows a seeking query returned (at most limit + 1, nearest first): the
 * extra row only tells that there are more; rows sought backwards are put back in list order.
 */
function pageOf<R extends { readonly id: string; readonly created_at: string }>(
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

/** The columns every listed table has, which paging reads. */
type Listed = SelectQueryBuilder<Database & { r: { id: string; team_id: string; created_at: string } }, 'r', {}>;

/** The rows of `table` a team lists: users not deleted (and active when asked), every group. */
export function listedRows(ex: Executor, table: ResourceTable, teamId: string, onlyActive: boolean): Listed {
  if (table === 'groups') return ex.selectFrom(`groups as ${ROW}`).where('r.team_id', '=', teamId) as unknown as Listed;
  let q = ex.selectFrom(`users as ${ROW}`).where('r.team_id', '=', teamId).where('r.deleted_at', 'is', null);
  if (onlyActive) q = q.where('r.active', '=', 1);
  return q as unknown as Listed;
}

/**
 * A page filtered by `sw`, `ew` or `co` (mayMatchMany) is found in up to three steps, because a
 * filter an index range answers costs what its matches cost to sort, while one that matches a
 * large part of the team is cheaper found by walking the creation order, and neither planner
 * can tell which from a bound value (SQLite keeps no histograms):
 *
 * 1. fromFewMatches: at most FEW_MATCHES + 1 matches, read the cheapest way (an index range, no
 *    order), sorted and paged; enough when there are no more (a person's name: ~1 ms);
 * 2. probeFirst: the first PROBE_ROWS rows of the creation order, filtered; enough when they
 *    hold the page (a common prefix: 5,000 rows read take about 20 ms at a million users);
 * 3. the filtered query, ordered (between the two: matches fewer than one row in a hundred of
 *    the walk, so few enough to sort).
 */
export const FEW_MATCHES = 500;
export const PROBE_ROWS = 5_000;

/** The column fromFewMatches counts the matches in. */
const MATCH_COUNT = 'rc_matches';

/**
 * The text columns an index answers a prefix test on, on both engines (migrations 006 and 012:
 * the folded userName and displayName, the folded given and family names), and among them those
 * whose suffix test is indexed on both (the reversed folded keys on SQLite; trigrams serve every
 * one of them on PostgreSQL).
 */
const PREFIX_INDEXED: Record<ResourceTable, ReadonlySet<string>> = {
  users: new Set(['user_name', 'given_name', 'family_name']),
  groups: new Set(['display_name']),
};
const SUFFIX_INDEXED: Record<ResourceTable, ReadonlySet<string>> = { users: new Set(['user_name']), groups: new Set(['display_name']) };

/**
 * Whether the planners may answer `p` with an index range that a broad value fills: a `sw`, an
 * `ew` or a `co` on a column an index answers it for (B-tree ranges on SQLite, trigram bitmaps on
 * PostgreSQL, hooks.substringIndexed). An `eq`, a flag or a presence test never is (an equality
 * lookup, or no index at all), so those lists never pay for the steps; neither does a test that
 * is a scan anyway, which the list's own order serves best (it stops at the page's last match,
 * and reads the rows in the order they were written).
 */
function mayMatchMany(p: Predicate, table: ResourceTable, hooks: DialectHooks): boolean {
  switch (p.kind) {
    case 'text': {
      if (p.scalar.at !== 'column' || !PREFIX_INDEXED[table].has(p.scalar.column)) return false;
      if (p.op === 'sw') return true;
      if (p.op === 'ew') return hooks.substringIndexed || SUFFIX_INDEXED[table].has(p.scalar.column);
      return p.op === 'co' && hooks.substringIndexed;
    }
    case 'and':
    case 'or':
      return mayMatchMany(p.left, table, hooks) || mayMatchMany(p.right, table, hooks);
    case 'not':
      return mayMatchMany(p.predicate, table, hooks);
    default:
      return false;
  }
}

/** Whether a page is found in steps (see FEW_MATCHES): unsorted, filtered by an indexed sw/ew/co. */
const stepped = (ex: Executor, table: ResourceTable, window: ListWindow): boolean =>
  window.where !== undefined && !window.sort && mayMatchMany(window.where, table, hooksOf(ex));

/**
 * The page from every match, when there are at most FEW_MATCHES (after the seek position, when
 * seeking): the matches are read without an order, so the planner takes its index range, then
 * ordered and paged, and counted on the way (`total` for index pages). Undefined when there are
 * more, or when an offset page comes back empty (nothing tells how many there were).
 */
async function fromFewMatches<R extends { readonly id: string; readonly created_at: string }>(
  ex: Executor,
  table: ResourceTable,
  teamId: string,
  window: ListWindow,
): Promise<{ rows: R[]; matches: number } | undefined> {
  if (!window.where || !stepped(ex, table, window)) return undefined;
  let matches = listedRows(ex, table, teamId, window.onlyActive === true).where(predicateSql(hooksOf(ex), table, window.where)).selectAll(ROW);
  const seek = seekCondition(ROW, window, undefined);
  if (seek) matches = matches.where(seek);
  let query = ex
    .selectFrom(matches.limit(rowCount(FEW_MATCHES + 1)).as(ROW))
    .selectAll(ROW)
    .select(sql<number | string>`count(*) over ()`.as(MATCH_COUNT)) as unknown as SelectQueryBuilder<Database, never, {}>;
  for (const term of orderTerms(ROW, window, undefined)) query = query.orderBy(term.expr, term.modifiers);
  const offset = window.seek ? 0 : (window.offset ?? 0);
  const raw = (await query.limit(rowCount(window.limit + (window.seek ? 1 : 0))).offset(rowCount(offset)).execute()) as unknown as (R & { readonly [MATCH_COUNT]: number | string })[];
  if (raw.length === 0) return offset === 0 ? { rows: [], matches: 0 } : undefined;
  const found = Number(raw[0]![MATCH_COUNT]);
  if (found > FEW_MATCHES) return undefined;
  return { rows: raw.map(({ [MATCH_COUNT]: _, ...row }) => row as unknown as R), matches: found };
}

/**
 * The page from the first PROBE_ROWS rows of the creation order (after the seek position, when
 * seeking), when they hold all of it: the page's rows are then the first matches of the whole
 * order. Undefined when they do not (the caller runs the filtered query), when the list is sorted
 * by a key, when the filter has no test an index range could answer (mayMatchMany), or when an
 * offset reaches too deep for the walk to find the page.
 */
async function probeFirst<R extends { readonly id: string; readonly created_at: string }>(
  ex: Executor,
  table: ResourceTable,
  teamId: string,
  window: ListWindow,
): Promise<R[] | undefined> {
  const offset = window.seek ? 0 : (window.offset ?? 0);
  const wanted = offset + window.limit + (window.seek ? 1 : 0);
  if (!window.where || window.sort || wanted * 10 > PROBE_ROWS || !mayMatchMany(window.where, table, hooksOf(ex))) return undefined;
  let walk = listedRows(ex, table, teamId, window.onlyActive === true).selectAll(ROW);
  const seek = seekCondition(ROW, window, undefined);
  if (seek) walk = walk.where(seek);
  for (const term of orderTerms(ROW, window, undefined)) walk = walk.orderBy(term.expr, term.modifiers);
  let query = ex
    .selectFrom(walk.limit(rowCount(PROBE_ROWS)).as(ROW))
    .selectAll(ROW)
    .where(predicateSql(hooksOf(ex), table, window.where)) as unknown as SelectQueryBuilder<Database, never, {}>;
  for (const term of orderTerms(ROW, window, undefined)) query = query.orderBy(term.expr, term.modifiers);
  const rows = (await query.limit(rowCount(wanted - offset)).offset(rowCount(offset)).execute()) as unknown as R[];
  return rows.length === wanted - offset ? rows : undefined;
}

/**
 * A page of a team's rows of `table` that satisfy `window.where`, in the window's order, by
 * offset or by seek: the one list routine of Users and Groups.
 */
export async function listRows<R extends { readonly id: string; readonly created_at: string }>(
  ex: Executor,
  table: ResourceTable,
  teamId: string,
  window: ListWindow,
): Promise<ListPage<R>> {
  const hooks = hooksOf(ex);
  let base = listedRows(ex, table, teamId, window.onlyActive === true);
  if (window.where) base = base.where(predicateSql(hooks, table, window.where));
  const count = async () => Number((await base.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()).n);
  // count=0 asks for totalResults alone (RFC 7644 3.4.2.4), whatever the paging method.
  if (window.limit === 0) return { rows: [], total: await count(), positions: [], more: false };
  const orderBy = window.sort ? sortKeySql(hooks, table, window.sort) : undefined;
  const few = await fromFewMatches<R>(ex, table, teamId, window);
  const probed = few ? few.rows : await probeFirst<R>(ex, table, teamId, window);
  let query = base.selectAll(ROW);
  if (!probed && stepped(ex, table, window)) {
    // Step 3: more than FEW_MATCHES matches, too sparse early in the creation order for the walk:
    // every match is read by its index and sorted. Written as a subquery neither planner flattens
    // (it has a LIMIT), since a planner that walked the creation order here, hoping to meet the
    // page soon, would read half a million rows for matches that only begin there (3 s).
    let matches = base.selectAll(ROW);
    const after = seekCondition(ROW, window, undefined);
    if (after) matches = matches.where(after);
    query = ex.selectFrom(matches.limit(rowCount(Number.MAX_SAFE_INTEGER)).as(ROW)).selectAll(ROW) as unknown as typeof query;
  }
  for (const term of orderTerms(ROW, window, orderBy)) query = query.orderBy(term.expr, term.modifiers);
  if (!window.seek) {
    const offset = window.offset ?? 0;
    const rows = probed ?? ((await query.limit(rowCount(window.limit)).offset(rowCount(offset)).execute()) as unknown as R[]);
    const total = window.countTotal === false ? undefined : few ? few.matches : await totalOf(rows, offset, window.limit, count);
    return { rows, total, positions: [], more: false };
  }
  const seek = seekCondition(ROW, window, orderBy);
  if (seek && !(!probed && stepped(ex, table, window))) query = query.where(seek);
  const keyed = orderBy ? query.select(sql<unknown>`${orderBy}`.as(SORT_KEY_COLUMN)) : query;
  const raw = probed ?? ((await keyed.limit(rowCount(window.limit + 1)).execute()) as unknown as (R & { readonly [SORT_KEY_COLUMN]?: unknown })[]);
  return pageOf<R>(raw, window);
}
