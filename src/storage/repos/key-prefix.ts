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

/** How many rest matches make a merge (`few`), and how many listed rows a walk reads (`walk`). */
export interface KeyPrefixLimits {
  readonly few: number;
  readonly walk: number;
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
  const bounds: Expression<SqlBool>[] = [];
  if (lower !== undefined) bounds.push(sql<SqlBool>`${key} >= ${lower}`);
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
  const key = sortKeySql(hooks, table, window.sort!);
  const offset = window.seek ? 0 : (window.offset ?? 0);
  // The rows the page needs from where it starts reading: one more when seeking (it tells `more`).
  const wanted = offset + window.limit + (window.seek ? 1 : 0);
  const seek = seekCondition(ROW, window, key);
  // The listed rows after the position. Subqueries are built without the executor's plugins:
  // those see the statement once, as a whole.
  const after = () => {
    const base = listedRows(ex.withoutPlugins(), table, teamId, window.onlyActive === true);
    return seek ? base.where(seek) : base;
  };
  const within = (prefix?: string) => keyRange(key, window, prefix).reduce((q, bound) => q.where(bound), after());

  let fewRest = true;
  if (plan.rest) {
    const rest = after().where(predicateSql(hooks, table, plan.rest)).select(sql<number>`1`.as('one')).limit(rowCount(limits.few + 1));
    const counted = await ex.selectFrom(rest.as('m')).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
    fewRest = Number(counted.n) <= limits.few;
  }
  const raw = fewRest ? await merged<R>(ex, table, teamId, window, plan, key, within, after, wanted, limits) : await walked<R>(ex, table, teamId, window, key, within, wanted, limits);
  if (raw === undefined) return undefined;
  if (window.seek) return pageOf<R>(raw, window);
  const rows = raw.map(({ [SORT_KEY_COLUMN]: _, ...row }) => row as unknown as R);
  const total = window.countTotal === false ? undefined : await totalOf(rows, offset, window.limit, count);
  return { rows, total, positions: [], more: false };
}

type Listed = ReturnType<typeof listedRows>;

/**
 * Step 2: the first `wanted` rows of each prefix's range after the position, in the index's
 * order, and every rest match after it (at most `few`), as (id, key, created_at) in one UNION
 * (not ALL: a row several branches hold is one tuple, kept once); the page is the union's first
 * rows in list order, read back by id in the same statement.
 */
async function merged<R>(
  ex: Executor,
  table: ResourceTable,
  teamId: string,
  window: ListWindow,
  plan: KeyPrefixPlan,
  key: Expression<unknown>,
  within: (prefix?: string) => Listed,
  after: () => Listed,
  wanted: number,
  limits: KeyPrefixLimits,
): Promise<Found<R>[]> {
  const hooks = hooksOf(ex);
  const tuple = (q: Listed) => q.select([`${ROW}.id`, sql<unknown>`${key}`.as('k'), `${ROW}.created_at`]);
  const branches = [
    ...plan.prefixes.map((prefix) => indexOrder(tuple(within(prefix)), window, key).limit(rowCount(wanted))),
    ...(plan.rest ? [tuple(after().where(predicateSql(hooks, table, plan.rest))).limit(rowCount(limits.few))] : []),
  ];
  const union = sql.join(
    branches.map((b, i) => sql`select id, k, created_at from (${b}) as ${sql.id(`b${i}`)}`),
    sql` union `,
  );
  let ids = ex.withoutPlugins().selectFrom(sql<{ id: string; k: unknown; created_at: string }>`(${union})`.as('u')).select('u.id') as unknown as SelectQueryBuilder<Database, never, {}>;
  for (const term of orderTerms('u', window, hooks.ordered(sql.ref('u.k')))) ids = ids.orderBy(term.expr, term.modifiers);
  const offset = window.seek ? 0 : (window.offset ?? 0);
  ids = ids.limit(rowCount(wanted - offset));
  if (offset > 0) ids = ids.offset(rowCount(offset));
  let query = ex
    .selectFrom(`${table as 'users'} as ${ROW}`)
    .selectAll(ROW)
    .select(sql<unknown>`${key}`.as(SORT_KEY_COLUMN))
    .where(`${ROW}.team_id`, '=', teamId)
    .where(`${ROW}.id`, 'in', ids as unknown as SelectQueryBuilder<Database, never, { id: string }>) as unknown as SelectQueryBuilder<Database, never, {}>;
  query = withGroupsOf(ex, table, teamId, window, query);
  for (const term of orderTerms(ROW, window, key)) query = query.orderBy(term.expr, term.modifiers);
  return (await query.execute()) as unknown as Found<R>[];
}

/**
 * Step 3: the first `walk` listed rows after the position in the index's order, filtered by the
 * whole filter. Undefined when they do not hold the page (fewer than `wanted` matches, and the
 * walk did not reach the end of the list), or when the page is too deep for such a walk.
 */
async function walked<R>(
  ex: Executor,
  table: ResourceTable,
  teamId: string,
  window: ListWindow,
  key: Expression<unknown>,
  within: (prefix?: string) => Listed,
  wanted: number,
  limits: KeyPrefixLimits,
): Promise<Found<R>[] | undefined> {
  if (wanted * 10 > limits.walk) return undefined;
  const hooks = hooksOf(ex);
  const walk = indexOrder(within().selectAll(ROW), window, key).limit(rowCount(limits.walk));
  let query = ex
    .selectFrom(walk.as(ROW))
    .selectAll(ROW)
    .select(sql<unknown>`${key}`.as(SORT_KEY_COLUMN))
    .where(predicateSql(hooks, table, window.where!)) as unknown as SelectQueryBuilder<Database, never, {}>;
  query = withGroupsOf(ex, table, teamId, window, query);
  for (const term of orderTerms(ROW, window, key)) query = query.orderBy(term.expr, term.modifiers);
  const offset = window.seek ? 0 : (window.offset ?? 0);
  query = query.limit(rowCount(wanted - offset));
  if (offset > 0) query = query.offset(rowCount(offset));
  const rows = (await query.execute()) as unknown as Found<R>[];
  if (rows.length === wanted - offset) return rows;
  // Short: the page when the walk read every listed row after the position.
  const walkedRows = within().select(sql<number>`1`.as('one')).limit(rowCount(limits.walk));
  const counted = await ex.selectFrom(walkedRows.as('w')).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  return Number(counted.n) < limits.walk ? rows : undefined;
}
