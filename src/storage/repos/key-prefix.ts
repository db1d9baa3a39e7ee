/**
 * A page sorted by a key an index reads in order (the folded userName), whose filter is an OR
 * holding a prefix test of that key: `userName sw "x" or name.givenName sw "x" or ...` sorted
 * by userName (the console's word search; any SCIM list with that sortBy and such a filter). It
 * is found from the key's index range in order rather than from every match sorted, which costs
 * what the matches cost (a prefix of 100,000 users: every one read and sorted for 51 rows):
 *
 * 1. the other disjuncts (`rest`) are counted after the page's position, up to `few` + 1 (an
 *    index range each, cheap when they match few rows);
 * 2. when they are at most `few`, the page is a merge, in SQL, of the first rows of each prefix's
 *    range after the position, read in the key's order (as many as the page needs), with those
 *    few rows: the page's rows are the first of the union, read back by id;
 * 3. otherwise (the rest match many), the first `walk` listed rows after the position in the
 *    key's order are filtered, which holds the page when matches are dense there;
 * 4. otherwise undefined: the caller runs the filtered query, ordered (as before this module).
 *
 * Nothing here changes which rows a page holds or their order (paging.ts orderTerms): only how
 * they are found. Built per call (which step answers depends on the data).
 */
import { sql } from 'kysely';
import type { Expression, SelectQueryBuilder, SqlBool } from 'kysely';
import type { DialectHooks } from '../dialect.ts';
import type { Predicate } from '../predicate.ts';
import { predicateSql, ROW, sortKeySql } from '../predicate-sql.ts';
import type { ResourceTable } from '../predicate-sql.ts';
import { hooksOf } from '../statements.ts';
import { compareCodePoints, prefixUpperBound } from '../text-range.ts';
import type { Database, Executor } from '../types.ts';
import { listedRows, orderTerms, pageOf, rowCount, seekCondition, SORT_KEY_COLUMN, totalOf, withGroupsOf } from './list-order.ts';
import type { ListPage, ListWindow } from './paging.ts';

/**
 * The sort keys an index reads in order on both engines, by their column and its folded twin:
 * the folded userName, `(team_id, user_name_key)` on SQLite (binary order, code points) and
 * `(team_id, user_name_key collate "C")` on PostgreSQL (migration 014). Each is NOT NULL, so its
 * ranges are read in plain ascending or descending order, whatever NULLS FIRST/LAST the list's
 * order names (no row has a NULL key).
 */
const ORDER_INDEXED: Record<ResourceTable, readonly { readonly column: string; readonly folded: string }[]> = {
  users: [{ column: 'user_name', folded: 'user_name_key' }],
  groups: [],
};

export interface KeyPrefixPlan {
  /** The (folded) prefixes the sort key is tested for: each a range of the key's index. */
  readonly prefixes: readonly string[];
  /** The filter's other disjuncts, ORed; undefined when there are none. */
  readonly rest: Predicate | undefined;
}

/** How many rest matches make a merge (`few`); how many listed rows a walk reads at most (`walk`), `chunk` rows per query. */
export interface KeyPrefixLimits {
  readonly few: number;
  readonly walk: number;
  readonly chunk: number;
}

const disjuncts = (p: Predicate): Predicate[] => (p.kind === 'or' ? [...disjuncts(p.left), ...disjuncts(p.right)] : [p]);

/**
 * Whether `window` is such a page: sorted by an ORDER_INDEXED key (case-insensitively, as
 * userName always is), filtered by an OR of which some disjunct is a `sw` on that very key.
 */
export function keyPrefixPlan(table: ResourceTable, window: ListWindow): KeyPrefixPlan | undefined {
  const { sort, where } = window;
  if (!sort || !where || sort.kind !== 'scalar' || sort.as !== 'text' || !sort.folded || sort.scalar.at !== 'column') return undefined;
  const { column, folded } = sort.scalar;
  if (!ORDER_INDEXED[table].some((i) => i.column === column && i.folded === folded)) return undefined;
  const prefixes: string[] = [];
  let rest: Predicate | undefined;
  for (const d of disjuncts(where)) {
    if (d.kind === 'text' && d.op === 'sw' && d.folded && d.scalar.at === 'column' && d.scalar.column === column && d.scalar.folded === folded) prefixes.push(d.value);
    else rest = rest ? { kind: 'or', left: rest, right: d } : d;
  }
  return prefixes.length === 0 ? undefined : { prefixes, rest };
}

/**
 * The key's bounds for rows after the page's position, narrowed to `prefix`'s range when given:
 * [prefix, prefixUpperBound(prefix)) is exactly the texts that start with the prefix in
 * code-point order (test/unit/text-range.test.ts), and the position's key bounds the side the
 * page reads towards (ties on the key are kept: seekCondition decides them). One bound per side,
 * the tighter, computed here: SQLite takes one of two lower bounds on a column as the index
 * range and tests the other, and taking the prefix's would walk the range up to the position.
 */
function keyRange(key: Expression<unknown>, window: ListWindow, prefix?: string): Expression<SqlBool>[] {
  let lower = prefix;
  let upper = prefix === undefined ? undefined : prefixUpperBound(prefix);
  let upperInclusive = false;
  const from = window.seek?.from?.key;
  if (typeof from === 'string') {
    // Ascending rows after the position, or descending ones before it: keys at or above it.
    const upward = window.descending === (window.seek!.direction === 'before');
    if (upward) {
      if (lower === undefined || compareCodePoints(from, lower) > 0) lower = from;
    } else if (upper === undefined || compareCodePoints(from, upper) < 0) {
      upper = from;
      upperInclusive = true;
    }
  }
  // Always a lower bound, '' at least (every text is at or above it): without one SQLite reads
  // the team by another index and sorts all of it (a walk from the start of a million users:
  // 350 ms instead of a few).
  const bounds: Expression<SqlBool>[] = [sql<SqlBool>`${key} >= ${lower ?? ''}`];
  if (upper !== undefined) bounds.push(sql<SqlBool>`${key} ${sql.raw(upperInclusive ? '<=' : '<')} ${upper}`);
  return bounds;
}

/**
 * The order the key's index is read in for this page: the key ascending or descending (plain:
 * ORDER_INDEXED keys are never NULL, and a NULLS LAST on a descending key would not be the
 * index's order on PostgreSQL), then the tie-breakers as the list orders them (orderTerms).
 */
function indexOrder<Q extends { orderBy(expr: Expression<unknown>, modifiers: 'asc' | 'desc'): Q }>(query: Q, window: ListWindow, key: Expression<unknown>): Q {
  const reverse = window.seek?.direction === 'before';
  const up = window.descending === reverse;
  const tie = reverse ? 'desc' : 'asc';
  return query.orderBy(key, up ? 'asc' : 'desc').orderBy(sql.ref(`${ROW}.created_at`), tie).orderBy(sql.ref(`${ROW}.id`), tie);
}

type Found<R> = R & { readonly [SORT_KEY_COLUMN]?: unknown };

/** What every query of one page is built from. */
interface Scope {
  readonly ex: Executor;
  readonly hooks: DialectHooks;
  readonly table: ResourceTable;
  readonly teamId: string;
  /** The sort key's expression over the row `r` (its value is what positions carry). */
  readonly key: Expression<unknown>;
}

type Listed = ReturnType<typeof listedRows>;

/**
 * The listed rows after `window`'s position, within the key's range (keyRange). A subquery is
 * built without the executor's plugins, which see a statement once, as a whole.
 */
function inRange(s: Scope, window: ListWindow, prefix?: string, ex: Executor = s.ex.withoutPlugins()): Listed {
  let q = listedRows(ex, s.table, s.teamId, window.onlyActive === true);
  const seek = seekCondition(ROW, window, s.key);
  if (seek) q = q.where(seek);
  for (const bound of keyRange(s.key, window, prefix)) q = q.where(bound);
  return q;
}

/** The rows of `ids` (a subquery or a list), in list order, with the sort key and each user's groups. */
async function rowsOf<R>(s: Scope, window: ListWindow, ids: SelectQueryBuilder<Database, never, { id: string }> | readonly string[]): Promise<Found<R>[]> {
  if (Array.isArray(ids) && ids.length === 0) return [];
  let query = s.ex
    .selectFrom(`${s.table as 'users'} as ${ROW}`)
    .selectAll(ROW)
    .select(sql<unknown>`${s.key}`.as(SORT_KEY_COLUMN))
    .where(`${ROW}.team_id`, '=', s.teamId)
    .where(`${ROW}.id`, 'in', ids as readonly string[]) as unknown as SelectQueryBuilder<Database, never, {}>;
  query = withGroupsOf(s.ex, s.table, s.teamId, window, query);
  for (const term of orderTerms(ROW, window, s.key)) query = query.orderBy(term.expr, term.modifiers);
  return (await query.execute()) as unknown as Found<R>[];
}

/**
 * The page of `window` (see the module comment), or undefined when neither a merge nor a walk
 * finds it. `count` counts every match (index pages' totalResults).
 */
export async function keyPrefixPage<R extends { readonly id: string; readonly created_at: string }>(
  ex: Executor,
  table: ResourceTable,
  teamId: string,
  window: ListWindow,
  plan: KeyPrefixPlan,
  count: () => Promise<number>,
  limits: KeyPrefixLimits,
): Promise<ListPage<R> | undefined> {
  const hooks = hooksOf(ex);
  const s: Scope = { ex, hooks, table, teamId, key: sortKeySql(hooks, table, window.sort!) };
  const offset = window.seek ? 0 : (window.offset ?? 0);
  // The rows the page needs from where it starts reading: one more when seeking (it tells `more`).
  const wanted = offset + window.limit + (window.seek ? 1 : 0);
  let fewRest = true;
  if (plan.rest) {
    const rest = inRange(s, window).where(predicateSql(hooks, table, plan.rest)).select(sql<number>`1`.as('one')).limit(rowCount(limits.few + 1));
    const counted = await ex.selectFrom(rest.as('m')).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
    fewRest = Number(counted.n) <= limits.few;
  }
  const raw = fewRest ? await merged<R>(s, window, plan, offset, wanted, limits) : await walked<R>(s, window, offset, wanted, limits);
  if (raw === undefined) return undefined;
  if (window.seek) return pageOf<R>(raw, window);
  const rows = raw.map(({ [SORT_KEY_COLUMN]: _, ...row }) => row as unknown as R);
  const total = window.countTotal === false ? undefined : await totalOf(rows, offset, window.limit, count);
  return { rows, total, positions: [], more: false };
}

/**
 * Step 2: the first `wanted` rows of each prefix's range after the position, in the index's
 * order, and every rest match after it (at most `few`), as (id, key, created_at) in one UNION
 * (not ALL: a row several branches hold is one tuple, kept once); the page is the union's first
 * rows in list order, read back by id in the same statement.
 */
async function merged<R>(s: Scope, window: ListWindow, plan: KeyPrefixPlan, offset: number, wanted: number, limits: KeyPrefixLimits): Promise<Found<R>[]> {
  const tuple = (q: Listed) => q.select([`${ROW}.id`, sql<unknown>`${s.key}`.as('k'), `${ROW}.created_at`]);
  const branches = [
    ...plan.prefixes.map((prefix) => indexOrder(tuple(inRange(s, window, prefix)), window, s.key).limit(rowCount(wanted))),
    ...(plan.rest ? [tuple(inRange(s, window).where(predicateSql(s.hooks, s.table, plan.rest))).limit(rowCount(limits.few))] : []),
  ];
  const union = sql.join(
    branches.map((b, i) => sql`select id, k, created_at from (${b}) as ${sql.id(`b${i}`)}`),
    sql` union `,
  );
  let ids = s.ex.withoutPlugins().selectFrom(sql<{ id: string; k: unknown; created_at: string }>`(${union})`.as('u')).select('u.id') as unknown as SelectQueryBuilder<Database, never, {}>;
  for (const term of orderTerms('u', window, s.hooks.ordered(sql.ref('u.k')))) ids = ids.orderBy(term.expr, term.modifiers);
  ids = ids.limit(rowCount(wanted - offset));
  if (offset > 0) ids = ids.offset(rowCount(offset));
  return rowsOf<R>(s, window, ids as unknown as SelectQueryBuilder<Database, never, { id: string }>);
}

/** A walked row: where it stands in the order, and whether the filter holds it (1 or 0). */
interface Walked {
  readonly id: string;
  readonly k: string;
  readonly created_at: string;
  readonly m: number | string | boolean;
}

/**
 * Step 3: the listed rows after the position in the index's order, up to `walk` of them, read in
 * chunks (each continuing after the last row of the one before) as narrow tuples with the whole
 * filter's verdict, until the page's matches are found; then the page's rows by id. Undefined
 * when `walk` rows do not hold the page (and the list goes on), or when the page is too deep for
 * such a walk. Narrow tuples: reading and sorting whole rows cost SQLite 15 ms for 5,000.
 */
async function walked<R>(s: Scope, window: ListWindow, offset: number, wanted: number, limits: KeyPrefixLimits): Promise<Found<R>[] | undefined> {
  if (wanted * 10 > limits.walk) return undefined;
  const matches = sql<number>`case when ${predicateSql(s.hooks, s.table, window.where!)} then 1 else 0 end`;
  const direction = window.seek?.direction ?? 'after';
  const found: string[] = [];
  let at: ListWindow = window;
  for (let read = 0; found.length < wanted; ) {
    const size = Math.min(limits.walk - read, limits.chunk);
    const chunk = indexOrder(inRange(s, at, undefined, s.ex).select([`${ROW}.id`, sql<string>`${s.key}`.as('k'), `${ROW}.created_at`, matches.as('m')]), at, s.key).limit(rowCount(size));
    const rows = (await chunk.execute()) as unknown as Walked[];
    for (const row of rows) if (Number(row.m) === 1) found.push(row.id);
    read += rows.length;
    const last = rows.at(-1);
    if (rows.length < size || !last) break; // the list ended
    if (found.length < wanted && read >= limits.walk) return undefined;
    at = { ...window, seek: { direction, from: { key: last.k, createdAt: last.created_at, id: last.id } } };
  }
  return rowsOf<R>(s, window, found.slice(offset, wanted));
}
