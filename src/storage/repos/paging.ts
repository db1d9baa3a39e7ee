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
import type { Compilable, SelectQueryBuilder } from 'kysely';
import type { DialectHooks } from '../dialect.ts';
import { comparesByEquality, withParams } from '../predicate.ts';
import type { OrderKey, Predicate } from '../predicate.ts';
import { predicateSql, ROW, sortKeySql } from '../predicate-sql.ts';
import type { ResourceTable } from '../predicate-sql.ts';
import { hooksOf, hot, shapeParam } from '../statements.ts';
import { teamCounts } from './counters.ts';
import { direction, GROUPS_COLUMN, groupsOfRow, listedRows, orderTerms, pageOf, rowCount, seekCondition, SORT_KEY_COLUMN, tiesBeyond, totalOf, withGroupsOf } from './list-order.ts';
import type { Listed } from './list-order.ts';
import { keyPrefixPage, keyPrefixPlan } from './key-prefix.ts';
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
  /**
   * Users only: each row also carries its groups, as `rc_groups` (dialect `jsonRows` of group id
   * and displayName, in the order of groupsOfUsers), read in the page's own statement.
   */
  readonly withGroups?: boolean;
  /** The sort key (RFC 7644 3.4.2.3); resources without one come last whatever the direction. */
  readonly sort?: OrderKey;
  readonly descending: boolean;
  readonly limit: number;
  /** Index paging: a 0-based offset. */
  readonly offset?: number;
  /**
   * Index paging in creation order (no sort key): the position of the row just before `offset`,
   * known to the caller from the slice it read before; the rows are then sought after it (an
   * index range) rather than counted off from the start. Ignored when the list is sorted.
   */
  readonly resumeAfter?: Position;
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

/** A window's parameters replaced by stand-ins (statements.ts `shapeParam`), and the values in their order. */
interface StandIns {
  readonly teamId: string;
  readonly where: Predicate | undefined;
  readonly seek: Seek | undefined;
  readonly values: unknown[];
}

function standIns(teamId: string, where: Predicate | undefined, seek: Seek | undefined): StandIns {
  const values: unknown[] = [];
  const param = (value: unknown): string => shapeParam(values.push(value) - 1);
  const team = param(teamId);
  const shapedWhere = where ? withParams(where, param) : undefined;
  const from = seek?.from;
  // A position's NULL (or absent) sort key changes the SQL (seekCondition): it stays in the shape.
  const key = from?.key === undefined || from.key === null ? {} : { key: param(from.key) };
  const shapedSeek = seek && { direction: seek.direction, ...(from ? { from: { ...(from.key === null ? { key: null } : key), createdAt: param(from.createdAt), id: param(from.id) } } : {}) };
  return { teamId: team, where: shapedWhere, seek: shapedSeek, values };
}

type Built = { readonly teamId: string; readonly where: Predicate | undefined; readonly seek: Seek | undefined };

/** The rows a window lists before ordering and paging. */
function baseOf(db: Executor, hooks: DialectHooks, table: ResourceTable, window: ListWindow, p: Built): Listed {
  const base = listedRows(db, table, p.teamId, window.onlyActive === true);
  return p.where ? base.where(predicateSql(hooks, table, p.where)) : base;
}

function countOf(db: Executor, hooks: DialectHooks, table: ResourceTable, window: ListWindow, p: Built): Compilable<unknown> {
  return baseOf(db, hooks, table, window, p).select((eb) => eb.fn.countAll<number | string>().as('n'));
}

/** A page's query: ordered, then offset or seek (one row more than the limit when seeking). */
function pageQueryOf(db: Executor, hooks: DialectHooks, table: ResourceTable, window: ListWindow, p: Built): Compilable<unknown> {
  const orderBy = window.sort ? sortKeySql(hooks, table, window.sort) : undefined;
  let query = baseOf(db, hooks, table, window, p).selectAll(ROW);
  if (window.withGroups && table === 'users') query = query.select(groupsOfRow(db, hooks, p.teamId).as(GROUPS_COLUMN));
  const w = { ...window, ...(p.seek ? { seek: p.seek } : {}) };
  for (const term of orderTerms(ROW, w, orderBy)) query = query.orderBy(term.expr, term.modifiers);
  if (!p.seek) return query.limit(rowCount(window.limit)).offset(rowCount(window.offset ?? 0));
  const seek = seekCondition(ROW, w, orderBy);
  if (seek) query = query.where(seek);
  const keyed = orderBy ? query.select(sql<unknown>`${orderBy}`.as(SORT_KEY_COLUMN)) : query;
  return keyed.limit(rowCount(window.limit + 1));
}

/** The slice after `after` in creation order (`ListWindow.resumeAfter`): a seek, built per call. */
function resumedPage(ex: Executor, hooks: DialectHooks, table: ResourceTable, teamId: string, window: ListWindow, after: Position): { execute(): Promise<unknown[]> } {
  let query = baseOf(ex, hooks, table, window, { teamId, where: window.where, seek: undefined }).selectAll(ROW);
  if (window.withGroups && table === 'users') query = query.select(groupsOfRow(ex, hooks, teamId).as(GROUPS_COLUMN));
  for (const term of orderTerms(ROW, window, undefined)) query = query.orderBy(term.expr, term.modifiers);
  return query.where(tiesBeyond(ROW, after, !window.descending)).limit(rowCount(window.limit));
}

/** Offsets below this are walked from the start whatever the list's length (a short walk; no counters read). */
export const FROM_END_AFTER = 1000;

/** How many rows an unfiltered list of the team holds, from its counters. */
export async function listedCount(ex: Executor, table: ResourceTable, teamId: string, onlyActive: boolean): Promise<number> {
  const counts = await teamCounts(ex, teamId);
  if (table === 'groups') return counts.groups;
  return onlyActive ? counts.usersActive : counts.usersActive + counts.usersDeactivated;
}

/**
 * An unfiltered index page in creation order, deep in the list: the offset is walked in the
 * (team_id, created_at, id[, active, deleted_at]) index alone, which holds everything that decides
 * whether a row is listed (migration 010), and only the page's ids reach the table. A plain
 * `select * ... offset N` reads N table rows to skip them on PostgreSQL (its index scan fetches
 * the heap tuple before the Limit node discards it), so its cost grows with the offset.
 *
 * In the list's second half (`fromEnd`) the walk starts at the other end of the index and counts
 * off the rows after the page instead: at most half the list is walked. How many rows lie after
 * the page comes from the team's counters read in the same statement, so it agrees with the rows
 * the statement sees, whatever commits meanwhile (the counters change in the writes' own
 * transactions). Both engines take a scalar subquery in LIMIT and OFFSET.
 */
function offsetByIndex(ex: Executor, hooks: DialectHooks, table: ResourceTable, teamId: string, window: ListWindow, offset: number, fromEnd: boolean): { execute(): Promise<unknown[]> } {
  const d = direction(window.descending);
  const walk = fromEnd ? direction(!window.descending) : d;
  const limit = rowCount(window.limit);
  // Part of one statement: the executor's plugins see the statement once, as a whole.
  let ids = listedRows(ex.withoutPlugins(), table, teamId, window.onlyActive === true)
    .select(`${ROW}.id`)
    .orderBy(`${ROW}.created_at`, walk)
    .orderBy(`${ROW}.id`, walk);
  if (!fromEnd) ids = ids.limit(limit).offset(rowCount(offset));
  else {
    const c = (column: string) => sql.ref(`team_counters.${column}`);
    const listed = table === 'groups' ? c('groups') : window.onlyActive ? c('users_active') : sql`${c('users_active')} + ${c('users_deactivated')}`;
    // The rows from the page's first to the list's end; the page is their first `limit`.
    const rest = sql<number>`(coalesce((select ${listed} from team_counters where team_counters.team_id = ${teamId} and team_counters.level = 0), 0) - ${rowCount(offset)})`;
    ids = ids
      .limit(sql<number>`(case when ${rest} <= 0 then 0 when ${rest} < ${limit} then ${rest} else ${limit} end)`)
      .offset(sql<number>`(case when ${rest} > ${limit} then ${rest} - ${limit} else 0 end)`);
  }
  let page = ex
    // Users and groups alike: the rows are typed by the caller (listRows' R).
    .selectFrom(`${table as 'users'} as p`)
    .selectAll('p');
  if (window.withGroups && table === 'users') page = page.select(groupsOfRow(ex, hooks, teamId, 'p').as(GROUPS_COLUMN));
  return page
    .where('p.team_id', '=', teamId)
    .where('p.id', 'in', ids)
    .orderBy('p.created_at', d)
    .orderBy('p.id', d);
}

/**
 * An unfiltered index page of users in creation order deep in the list, found through the
 * creation-time counters (repos/counters.ts, migration 010) in one statement: the hour buckets'
 * running sums give the hour the page's first row was created in and how many listed users came
 * before it, the second buckets within that hour do the same for the second, and only the rows
 * of that second before the page are counted off in the index. The work is bounded by the
 * team's hours of creation history plus the seconds of one hour plus the users created in one
 * second, not by the offset. The counters are read in the same statement as the
 * rows, so they agree with the rows it sees (both change only in the writes' transactions).
 */
function offsetByBuckets(ex: Executor, hooks: DialectHooks, teamId: string, window: ListWindow, offset: number): { execute(): Promise<unknown[]> } {
  const listed = window.onlyActive ? sql`users_active` : sql`users_active + users_deactivated`;
  const onlyActive = window.onlyActive ? sql`and r.active = 1` : sql``;
  const n = rowCount(offset);
  const query = sql`with h as (
      select bucket, ${listed} as n, sum(${listed}) over (order by bucket) as upto
      from team_counters where team_id = ${teamId} and level = 1
    ), hp as (
      select bucket, upto - n as before from h where upto > ${n} order by bucket limit 1
    ), s as (
      select c.bucket, ${listed} as n, (select before from hp) + sum(${listed}) over (order by c.bucket) as upto
      from team_counters c
      where c.team_id = ${teamId} and c.level = 2 and c.bucket >= (select bucket from hp) and c.bucket < (select bucket from hp) || ';'
    ), sp as (
      select bucket, upto - n as before from s where upto > ${n} order by bucket limit 1
    )
    select p.*${window.withGroups ? sql`, (${groupsOfRow(ex, hooks, teamId, 'p')}) as ${sql.ref(GROUPS_COLUMN)}` : sql``} from users p where p.team_id = ${teamId} and p.id in (
      select r.id from users r
      where r.team_id = ${teamId} and r.deleted_at is null ${onlyActive} and r.created_at >= (select bucket from sp)
      order by r.created_at, r.id
      limit ${rowCount(window.limit)} offset coalesce((select cast(${n} - before as bigint) from sp), 0)
    ) order by p.created_at, p.id`;
  return { execute: async () => (await query.execute(ex)).rows as unknown[] };
}

/**
 * A page filtered by `sw`, `ew` or `co` (mayMatchMany) is found in up to three steps, because a
 * filter an index range answers costs what its matches cost to sort, while one that matches a
 * large part of the team is cheaper found by walking the creation order, and neither planner
 * can tell which from a bound value (SQLite keeps no histograms):
 *
 * 1. fromFewMatches: at most FEW_MATCHES + 1 matches, read the cheapest way (an index range, no
 *    order), sorted and paged; enough when there are no more (a person's name);
 * 2. probeFirst: the first PROBE_ROWS rows of the creation order, filtered; enough when they
 *    hold the page (a common prefix);
 * 3. the filtered query, ordered (between the two: matches fewer than one row in a hundred of
 *    the walk, so few enough to sort).
 */
export const FEW_MATCHES = 500;
export const PROBE_ROWS = 5_000;
/**
 * Rows per query of a walk in userName order (repos/key-prefix.ts): a page of 51 where one row
 * in twenty matches, in one query; sparser matches take more, up to PROBE_ROWS.
 */
export const WALK_CHUNK = 1_000;

/** The column fromFewMatches counts the matches in. */
const MATCH_COUNT = 'rc_matches';

/**
 * The text columns an index answers a prefix test on, on both engines (migrations 006 and 012:
 * the folded userName and displayName, the folded given and family names), and among them those
 * whose suffix and substring tests are indexed on both (on SQLite the reversed folded keys for a
 * suffix, a scan of the folded keys' index for a substring; trigrams serve every one of them on
 * PostgreSQL).
 */
export const PREFIX_INDEXED: Record<ResourceTable, ReadonlySet<string>> = {
  users: new Set(['user_name', 'given_name', 'family_name']),
  groups: new Set(['display_name']),
};
export const SUFFIX_INDEXED: Record<ResourceTable, ReadonlySet<string>> = { users: new Set(['user_name']), groups: new Set(['display_name']) };

/**
 * The columns that find a resource by its key, each indexed (the id by its primary key; the
 * folded userName and displayName and externalId by indexes led by the team, migrations 001 and
 * 006): an equality on one of them reads a few rows from one index range, quick whatever the
 * team's size.
 */
export const KEY_COLUMNS: Record<ResourceTable, ReadonlySet<string>> = {
  users: new Set(['id', 'user_name_key', 'external_id']),
  groups: new Set(['id', 'display_name_key', 'external_id']),
};

/**
 * Whether `where` is one equality on a key's column as the SQL compares it: the folded copy when
 * the test folds (a test that folds a column without one compares `lower(column)`, which no key
 * index answers; predicate-sql.ts `folded`).
 */
export function readsByKey(where: Predicate, table: ResourceTable): boolean {
  if (where.kind !== 'text' || where.op !== 'eq' || where.scalar.at !== 'column') return false;
  const column = where.folded ? where.scalar.folded : where.scalar.column;
  return column !== undefined && KEY_COLUMNS[table].has(column);
}

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
      // co: trigram bitmaps on PostgreSQL; on SQLite a scan of the folded key's index (dialect.ts contains).
      return p.op === 'co' && (hooks.substringIndexed || (p.folded && SUFFIX_INDEXED[table].has(p.scalar.column)));
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
  // Subqueries without the executor's plugins: they see the statement once, as a whole.
  let matches = listedRows(ex.withoutPlugins(), table, teamId, window.onlyActive === true).where(predicateSql(hooksOf(ex), table, window.where)).selectAll(ROW);
  const seek = seekCondition(ROW, window, undefined);
  if (seek) matches = matches.where(seek);
  let query = ex
    .selectFrom(matches.limit(rowCount(FEW_MATCHES + 1)).as(ROW))
    .selectAll(ROW)
    .select(sql<number | string>`count(*) over ()`.as(MATCH_COUNT)) as unknown as SelectQueryBuilder<Database, never, {}>;
  query = withGroupsOf(ex, table, teamId, window, query);
  for (const term of orderTerms(ROW, window, undefined)) query = query.orderBy(term.expr, term.modifiers);
  const offset = window.seek ? 0 : (window.offset ?? 0);
  const limited = query.limit(rowCount(window.limit + (window.seek ? 1 : 0)));
  const raw = (await (offset > 0 ? limited.offset(rowCount(offset)) : limited).execute()) as unknown as (R & { readonly [MATCH_COUNT]: number | string })[];
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
  let walk = listedRows(ex.withoutPlugins(), table, teamId, window.onlyActive === true).selectAll(ROW);
  const seek = seekCondition(ROW, window, undefined);
  if (seek) walk = walk.where(seek);
  for (const term of orderTerms(ROW, window, undefined)) walk = walk.orderBy(term.expr, term.modifiers);
  let query = ex
    .selectFrom(walk.limit(rowCount(PROBE_ROWS)).as(ROW))
    .selectAll(ROW)
    .where(predicateSql(hooksOf(ex), table, window.where)) as unknown as SelectQueryBuilder<Database, never, {}>;
  query = withGroupsOf(ex, table, teamId, window, query);
  for (const term of orderTerms(ROW, window, undefined)) query = query.orderBy(term.expr, term.modifiers);
  const limited = query.limit(rowCount(wanted - offset));
  const rows = (await (offset > 0 ? limited.offset(rowCount(offset)) : limited).execute()) as unknown as R[];
  return rows.length === wanted - offset ? rows : undefined;
}


/**
 * A page filtered by an indexed `sw`/`ew`/`co` (`stepped`), found in the steps FEW_MATCHES
 * describes; built per call (which step answers depends on the data, not the shape).
 */
async function steppedPage<R extends { readonly id: string; readonly created_at: string }>(
  ex: Executor,
  hooks: DialectHooks,
  table: ResourceTable,
  teamId: string,
  window: ListWindow,
  count: () => Promise<number>,
): Promise<ListPage<R>> {
  if (window.resumeAfter && !window.seek) {
    // A later slice of an index page: the rows after the previous slice's last, found as a seek.
    const { resumeAfter, offset, ...rest } = window;
    const page = await steppedPage<R>(ex, hooks, table, teamId, { ...rest, seek: { direction: 'after', from: resumeAfter } }, count);
    const total = window.countTotal === false ? undefined : await totalOf(page.rows, offset ?? 0, window.limit, count);
    return { rows: page.rows, total, positions: page.positions, more: false };
  }
  const few = await fromFewMatches<R>(ex, table, teamId, window);
  const probed = few ? few.rows : await probeFirst<R>(ex, table, teamId, window);
  const run = async (limit: number, offset: number): Promise<R[]> => {
    // Step 3: more than FEW_MATCHES matches, too sparse early in the creation order for the walk:
    // every match is read by its index and sorted. Written as a subquery neither planner flattens
    // (it has a LIMIT), since a planner that walked the creation order here, hoping to meet the
    // page soon, would read every row before the first match, however deep into the team that is.
    let matches = listedRows(ex.withoutPlugins(), table, teamId, window.onlyActive === true).where(predicateSql(hooks, table, window.where!)).selectAll(ROW);
    const after = seekCondition(ROW, window, undefined);
    if (after) matches = matches.where(after);
    let query = withGroupsOf(ex, table, teamId, window, ex.selectFrom(matches.limit(rowCount(Number.MAX_SAFE_INTEGER)).as(ROW)).selectAll(ROW) as unknown as SelectQueryBuilder<Database, never, {}>);
    for (const term of orderTerms(ROW, window, undefined)) query = query.orderBy(term.expr, term.modifiers);
    const limited = query.limit(rowCount(limit));
    return (await (offset > 0 ? limited.offset(rowCount(offset)) : limited).execute()) as unknown as R[];
  };
  if (!window.seek) {
    const offset = window.offset ?? 0;
    const rows = probed ?? (await run(window.limit, offset));
    const total = window.countTotal === false ? undefined : few ? few.matches : await totalOf(rows, offset, window.limit, count);
    return { rows, total, positions: rows.map((r) => ({ createdAt: r.created_at, id: r.id })), more: false };
  }
  return pageOf<R>(probed ?? (await run(window.limit + 1, 0)), window);
}

/**
 * A page of a team's rows of `table` that satisfy `window.where`, in the window's order, by
 * offset or by seek: the one list routine of Users and Groups. Its queries are compiled once per
 * shape (statements.ts `Shaped`): the key holds everything that decides the SQL text (the
 * predicate with its literals taken out, the order, the limit and offset written into the SQL,
 * the seek's form), the values are bound per call.
 */
export async function listRows<R extends { readonly id: string; readonly created_at: string }>(
  ex: Executor,
  table: ResourceTable,
  teamId: string,
  window: ListWindow,
): Promise<ListPage<R>> {
  const hooks = hooksOf(ex);
  const run = (kind: 'page' | 'count', seek: Seek | undefined, key: readonly unknown[], of: typeof pageQueryOf) => {
    const shaped = standIns(teamId, window.where, seek);
    const first = kind === 'page' && seek === undefined && (window.offset ?? 0) === 0;
    const real: Built = { teamId, where: window.where, seek };
    return hot(ex).shaped(ex, {
      name: `${table} ${kind}`,
      key: JSON.stringify([kind, table, window.onlyActive === true, shaped.where ?? null, ...key, shaped.seek ?? null, window.withGroups === true]),
      values: shaped.values,
      build: (db, withValues) => of(db, hooks, table, window, withValues ? real : shaped),
      // Lookups by value (`userName eq`, `externalId eq`), the first page: one plan serves every
      // value. Pages further in are one shape per offset; seeks and ranges are planned from their
      // literals. Only pages: a count's key has no offset, so the first request to compile it
      // (on any page) would decide for all the others.
      preparable: first && (window.where === undefined || comparesByEquality(window.where)),
      // A first page by key (`userName eq`, Entra ID's and Okta's check before every create):
      // on PostgreSQL, once prepared, it shares the lookups' pipelined connections.
      lookup: first && window.where !== undefined && readsByKey(window.where, table),
    });
  };
  // Every listed row (no filter): the team's counters, kept by the writes (repos/counters.ts).
  let counted: number | undefined;
  const count = window.where
    ? async () => Number((await run('count', undefined, [], countOf))[0]!.n)
    : async () => (counted ??= await listedCount(ex, table, teamId, window.onlyActive === true));
  // count=0 asks for totalResults alone (RFC 7644 3.4.2.4), whatever the paging method.
  if (window.limit === 0) return { rows: [], total: await count(), positions: [], more: false };
  if (stepped(ex, table, window)) return steppedPage<R>(ex, hooks, table, teamId, window, count);
  // Sorted by userName and filtered by `userName sw ... or ...`: from the key's index range.
  const plan = keyPrefixPlan(table, window);
  const ranged = plan && (await keyPrefixPage<R>(ex, table, teamId, window, plan, count, { few: FEW_MATCHES, walk: PROBE_ROWS, chunk: WALK_CHUNK }));
  if (ranged) return ranged;
  const key = [window.sort ?? null, window.descending, window.limit, window.seek ? null : (window.offset ?? 0)];
  if (!window.seek) {
    const offset = window.offset ?? 0;
    const sorted = window.sort !== undefined;
    let page: { execute(): Promise<unknown[]> } | undefined;
    if (window.resumeAfter && !sorted) page = resumedPage(ex, hooks, table, teamId, window, window.resumeAfter);
    else if (!window.where && !sorted && table === 'users' && !window.descending && offset >= FROM_END_AFTER) page = offsetByBuckets(ex, hooks, teamId, window, offset);
    else if (!window.where && !sorted && offset > 0) page = offsetByIndex(ex, hooks, table, teamId, window, offset, offset >= FROM_END_AFTER && offset * 2 > (await count()));
    const rows = (page ? await page.execute() : await run('page', undefined, key, pageQueryOf)) as unknown as R[];
    // In creation order a row's position lets the next slice seek instead of counting off (resumeAfter).
    const positions = sorted ? [] : rows.map((r) => ({ createdAt: r.created_at, id: r.id }));
    return { rows, total: window.countTotal === false ? undefined : await totalOf(rows, offset, window.limit, count), positions, more: false };
  }
  const raw = (await run('page', window.seek, key, pageQueryOf)) as unknown as (R & { readonly [SORT_KEY_COLUMN]?: unknown })[];
  return pageOf<R>(raw, window);
}
