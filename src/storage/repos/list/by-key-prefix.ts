/**
 * Plan `byKeyPrefix`: a page sorted by a key an index reads in order (the folded userName), whose filter is an OR
 * holding a prefix test of that key: `userName sw "x" or name.givenName sw "x" or ...` sorted
 * by userName (the console's word search; any SCIM list with that sortBy and such a filter). It
 * is found from the key's index range in order rather than from every match sorted, which costs
 * what the matches cost (a prefix many users share: every one read and sorted for one page):
 *
 * 1. a page that starts inside a prefix's range and that the range fills is the range's next
 *    rows (insidePrefix: a next page, one index range);
 * 2. a merge, in SQL, of the first rows of each prefix's range after the position (as many as
 *    the page needs, read in the key's order) with the other disjuncts' (`rest`) matches after
 *    it, read once and counted: the page when the rest match at most as many users as the page
 *    holds;
 * 3. a walk of the first `chunk` listed rows after the position in the key's order, as narrow
 *    tuples with the filter's verdict: the page when matches are dense there (a common name);
 *    before step 2 on a page with a position (mergedOrWalked says why);
 * 4. the merge again, reading up to `few` rest matches;
 * 5. the walk on, up to `walk` rows in all;
 * 6. otherwise undefined: the caller runs the plan's `otherwise`, the filtered query, ordered.
 *
 * Nothing here changes which rows a page holds or their order (list-order.ts orderTerms): only how
 * they are found. Built per call (which step answers depends on the data).
 */
import { sql } from 'kysely';
import type { Compilable, Expression, RawBuilder, SelectQueryBuilder, SqlBool } from 'kysely';
import type { DialectHooks } from '../../dialect.ts';
import { predicateSql, ROW, sortKeySql } from '../../predicate-sql.ts';
import type { ResourceTable } from '../../predicate-sql.ts';
import { hooksOf } from '../../statements.ts';
import { compareCodePoints } from '../../../text.ts';
import { prefixUpperBound } from '../../text-range.ts';
import type { Database, Executor } from '../../types.ts';
import { listedRows, orderTerms, pageOf, rowCount, seekCondition, SORT_KEY_COLUMN, totalOf, withGroupsOf } from '../list-order.ts';
import type { KeyPrefixLimits, ListPlan } from './plan.ts';
import type { ListedRow, ListPage, ListWindow } from './window.ts';

/** What a byKeyPrefix plan carries: the key's prefixes, the other disjuncts, the steps' limits. */
type KeyPrefixPlan = Extract<ListPlan, { kind: 'byKeyPrefix' }>;

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
  // the team by another index and sorts all of it, a cost that grows with the team, not with
  // the page.
  const bounds: Expression<SqlBool>[] = [sql<SqlBool>`${key} >= ${lower ?? ''}`];
  if (upper !== undefined) bounds.push(sql<SqlBool>`${key} ${sql.raw(upperInclusive ? '<=' : '<')} ${upper}`);
  return bounds;
}

/**
 * The order the key's index is read in for this page: the key ascending or descending (plain:
 * indexed.ts ORDER_INDEXED keys are never NULL, and a NULLS LAST on a descending key would not be the
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

/** The merge's common table expression of the rest's matches, and the column it is counted in (at most `few` + 1). */
const REST = 'rc_rest';
const REST_COUNT = 'rc_rest_count';

/**
 * The rows of `ids` (a subquery or a list), in list order, with the sort key and each user's
 * groups; `rest` (the merge's) is a common table expression of the statement, and its matches
 * are counted beside each row (REST_COUNT).
 */
async function rowsOf<R>(s: Scope, window: ListWindow, ids: SelectQueryBuilder<Database, never, { id: string }> | readonly string[], rest?: Compilable<unknown>): Promise<Found<R>[]> {
  if (Array.isArray(ids) && ids.length === 0) return [];
  const from = rest ? s.ex.with(REST, () => rest as never).selectFrom(`${s.table as 'users'} as ${ROW}`) : s.ex.selectFrom(`${s.table as 'users'} as ${ROW}`);
  let query = from
    .selectAll(ROW)
    .select(sql<unknown>`${s.key}`.as(SORT_KEY_COLUMN))
    .where(`${ROW}.team_id`, '=', s.teamId)
    .where(`${ROW}.id`, 'in', ids as readonly string[]) as unknown as SelectQueryBuilder<Database, never, {}>;
  if (rest) query = query.select(sql<number>`(select count(*) from ${sql.table(REST)})`.as(REST_COUNT));
  query = withGroupsOf(s.ex, s.table, s.teamId, window, query);
  for (const term of orderTerms(ROW, window, s.key)) query = query.orderBy(term.expr, term.modifiers);
  return (await query.execute()) as unknown as Found<R>[];
}

/** The (id, key, created_at) tuples of `q`'s rows, which order and merge them. */
const tuples = (s: Scope, q: Listed) => q.select([`${ROW}.id`, sql<unknown>`${s.key}`.as('k'), `${ROW}.created_at`]);

/**
 * The page of `window` (see the module comment), or undefined when neither a merge nor a walk
 * finds it. `count` counts every match (index pages' totalResults).
 */
export async function keyPrefixPage<R extends ListedRow>(
  ex: Executor,
  table: ResourceTable,
  teamId: string,
  window: ListWindow,
  plan: KeyPrefixPlan,
  count: () => Promise<number>,
): Promise<ListPage<R> | undefined> {
  const hooks = hooksOf(ex);
  const s: Scope = { ex, hooks, table, teamId, key: sortKeySql(hooks, table, window.sort!) };
  const offset = window.seek ? 0 : (window.offset ?? 0);
  // The rows the page needs from where it starts reading: one more when seeking (it tells `more`).
  const wanted = offset + window.limit + (window.seek ? 1 : 0);
  const raw = (await insidePrefix<R>(s, window, plan, wanted)) ?? (await mergedOrWalked<R>(s, window, plan, offset, wanted, plan.limits));
  if (raw === undefined) return undefined;
  if (window.seek) return pageOf<R>(raw, window);
  const rows = raw.map(({ [SORT_KEY_COLUMN]: _, ...row }) => row as unknown as R);
  const total = window.countTotal === false ? undefined : await totalOf(rows, offset, window.limit, count);
  return { rows, total, positions: [], more: false };
}

/**
 * A page that starts inside one prefix's range (a next page of the search, its position's key
 * starting with the prefix) and that the range fills: its rows are the range's next ones, and no
 * other disjunct needs reading, since every key between two keys that start with the prefix
 * starts with it too (the prefix's matches are one contiguous range of the order), so any match
 * up to the page's last row is in the range. Undefined otherwise (the range ends within the page).
 */
async function insidePrefix<R>(s: Scope, window: ListWindow, plan: KeyPrefixPlan, wanted: number): Promise<Found<R>[] | undefined> {
  const from = window.seek?.from?.key;
  const prefix = typeof from === 'string' ? plan.prefixes.find((p) => from.startsWith(p)) : undefined;
  if (prefix === undefined) return undefined;
  const ids = indexOrder(inRange(s, window, prefix).select(`${ROW}.id`), window, s.key).limit(rowCount(wanted));
  const rows = await rowsOf<R>(s, window, ids as unknown as SelectQueryBuilder<Database, never, { id: string }>);
  return rows.length === wanted ? rows : undefined;
}

/**
 * Steps 2 to 5 (see the module comment), cheapest first. A first page reads the other
 * disjuncts' first matches, which their indexes give at once; a later page would have to pass
 * over every match before its position to find those after it (the indexes are not in the key's
 * order, so a page deep in the list would read every match before its position), so there the
 * walk's first chunk goes first, which dense matches fill.
 */
async function mergedOrWalked<R>(s: Scope, window: ListWindow, plan: KeyPrefixPlan, offset: number, wanted: number, limits: KeyPrefixLimits): Promise<Found<R>[] | undefined> {
  // Without other disjuncts the merge reads the prefixes' ranges alone, which is all there is.
  if (!plan.rest) return merged<R>(s, window, plan, offset, wanted, 0);
  // A walk is only worth it near the start (wanted * 10 <= walk).
  const walk = wanted * 10 <= limits.walk ? new Walk(s, window, wanted) : undefined;
  const found = async (upTo: number) => walk !== undefined && (await walk.on(Math.min(upTo, limits.walk), limits.chunk));
  const walked = () => rowsOf<R>(s, window, walk!.found.slice(offset, wanted));
  const positioned = window.seek?.from !== undefined;
  if (positioned && (await found(limits.chunk))) return walked();
  // At most as many of the other disjuncts' matches as the page has rows: cheap, and enough when they match few.
  const first = Math.min(wanted, limits.few);
  const merge = await merged<R>(s, window, plan, offset, wanted, first);
  if (merge) return merge;
  if (!positioned && (await found(limits.chunk))) return walked();
  const more = limits.few > first ? await merged<R>(s, window, plan, offset, wanted, limits.few) : undefined;
  if (more) return more;
  return (await found(limits.walk)) ? walked() : undefined;
}

/**
 * The merge: the first `wanted` rows of each prefix's range after the position, in the index's
 * order, and the rest's matches after it, up to `few` + 1, read once in a common table
 * expression that is also counted, as (id, key, created_at) in one UNION (not ALL: a row several
 * branches hold is one tuple, kept once); the page is the union's first rows in list order, read
 * back by id in the same statement. Undefined when the rest matched more than `few` (the union
 * lacked some of them).
 */
async function merged<R>(s: Scope, window: ListWindow, plan: KeyPrefixPlan, offset: number, wanted: number, few: number): Promise<Found<R>[] | undefined> {
  const branches = [
    ...plan.prefixes.map((prefix, i) => sql`select id, k, created_at from (${indexOrder(tuples(s, inRange(s, window, prefix)), window, s.key).limit(rowCount(wanted))}) as ${sql.id(`b${i}`)}`),
    ...(plan.rest ? [sql`select id, k, created_at from ${sql.table(REST)}`] : []),
  ];
  let ids = s.ex.withoutPlugins().selectFrom(sql<{ id: string; k: unknown; created_at: string }>`(${sql.join(branches, sql` union `)})`.as('u')).select('u.id') as unknown as SelectQueryBuilder<Database, never, {}>;
  for (const term of orderTerms('u', window, s.hooks.ordered(sql.ref('u.k')))) ids = ids.orderBy(term.expr, term.modifiers);
  ids = ids.limit(rowCount(wanted - offset));
  if (offset > 0) ids = ids.offset(rowCount(offset));
  const rest = plan.rest ? tuples(s, inRange(s, window).where(predicateSql(s.hooks, s.table, plan.rest))).limit(rowCount(few + 1)) : undefined;
  const rows = await rowsOf<R & { readonly [REST_COUNT]?: unknown }>(s, window, ids as unknown as SelectQueryBuilder<Database, never, { id: string }>, rest);
  if (!rest) return rows;
  // No rows: the union was empty (so was the rest), unless an offset went past its end.
  let matches = rows.length > 0 ? Number(rows[0]![REST_COUNT]) : 0;
  if (rows.length === 0 && offset > 0) {
    const counted = await s.ex.selectFrom(rest.as('m')).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
    matches = Number(counted.n);
  }
  return matches <= few ? rows.map(({ [REST_COUNT]: _, ...row }) => row as unknown as Found<R>) : undefined;
}

/** A walked row: where it stands in the order, and whether the filter holds it (1 or 0). */
interface Walked {
  readonly id: string;
  readonly k: string;
  readonly created_at: string;
  readonly m: number | string | boolean;
}

/**
 * A walk of the listed rows after the page's position in the index's order, in chunks (each
 * continuing after the last row of the one before) of narrow tuples with the whole filter's
 * verdict: `found` holds the matches' ids in list order. Narrow tuples, then the page's rows by
 * id: whole rows are read only for the rows the page shows, not for every row walked.
 */
class Walk {
  readonly found: string[] = [];
  readonly #s: Scope;
  readonly #window: ListWindow;
  readonly #wanted: number;
  readonly #matches: RawBuilder<number>;
  #at: ListWindow;
  #read = 0;
  #ended = false;

  constructor(s: Scope, window: ListWindow, wanted: number) {
    this.#s = s;
    this.#window = window;
    this.#wanted = wanted;
    this.#matches = sql<number>`case when ${predicateSql(s.hooks, s.table, window.where!)} then 1 else 0 end`;
    this.#at = window;
  }

  /** Walks on until `upTo` rows are read in all; whether the page is found (its matches, or the list's end). */
  async on(upTo: number, chunk: number): Promise<boolean> {
    const s = this.#s;
    while (this.found.length < this.#wanted && !this.#ended && this.#read < upTo) {
      const size = Math.min(upTo - this.#read, chunk);
      const tuples = inRange(s, this.#at, undefined, s.ex).select([`${ROW}.id`, sql<string>`${s.key}`.as('k'), `${ROW}.created_at`, this.#matches.as('m')]);
      const rows = (await indexOrder(tuples, this.#at, s.key).limit(rowCount(size)).execute()) as unknown as Walked[];
      for (const row of rows) if (Number(row.m) === 1) this.found.push(row.id);
      this.#read += rows.length;
      const last = rows.at(-1);
      if (rows.length < size || !last) this.#ended = true;
      else this.#at = { ...this.#window, seek: { direction: this.#window.seek?.direction ?? 'after', from: { key: last.k, createdAt: last.created_at, id: last.id } } };
    }
    return this.found.length >= this.#wanted || this.#ended;
  }
}
