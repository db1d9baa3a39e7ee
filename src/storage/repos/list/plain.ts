/**
 * The plain query of a list page (plans `offsetQuery` and `seekQuery`), which every other plan
 * must equal, and the count of a filtered list's matches. The rows a team lists (users: not
 * deleted, and active when the team hides deactivated ones), filtered by the window's predicate
 * compiled here with the row aliased `r` as predicate-sql.ts expects, ordered (list-order.ts
 * orderTerms), then an offset counted off or a position sought past (one row more than the limit,
 * which tells whether more follow). When seeking by a sort key, the key's value as SQL computed
 * it is selected with the rows, so a position carries the value SQL compared.
 *
 * Compiled once per shape (statements.ts `Shaped`): the key holds everything that decides the SQL
 * text (the predicate with its literals taken out, the order, the limit and offset written into
 * the SQL, the seek's form), the values are bound per call.
 */
import { sql } from 'kysely';
import type { Compilable } from 'kysely';
import type { DialectHooks } from '../../dialect.ts';
import { comparesByEquality, withParams } from '../../predicate.ts';
import type { Predicate } from '../../predicate.ts';
import { predicateSql, ROW, sortKeySql } from '../../predicate-sql.ts';
import type { ResourceTable } from '../../predicate-sql.ts';
import { hooksOf, hot, shapeParam } from '../../statements.ts';
import type { Executor } from '../../types.ts';
import { GROUPS_COLUMN, groupsOfRow, listedRows, orderTerms, rowCount, seekCondition, SORT_KEY_COLUMN } from '../list-order.ts';
import type { Listed } from '../list-order.ts';
import { readsByKey } from './indexed.ts';
import type { ListWindow, Seek } from './window.ts';

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

/** Runs the page or count statement of `window`'s shape, compiled once per shape. */
function runShaped(ex: Executor, table: ResourceTable, teamId: string, window: ListWindow, kind: 'page' | 'count', seek: Seek | undefined, key: readonly unknown[], of: typeof pageQueryOf): Promise<Record<string, unknown>[]> {
  const hooks = hooksOf(ex);
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
}

/**
 * The plain query's rows: from the offset (`offsetQuery`), or past the seek position, one more
 * than the limit (`seekQuery`, with each row's sort key in SORT_KEY_COLUMN when sorted).
 */
export function plainRows(ex: Executor, table: ResourceTable, teamId: string, window: ListWindow): Promise<Record<string, unknown>[]> {
  const key = [window.sort ?? null, window.descending, window.limit, window.seek ? null : (window.offset ?? 0)];
  return runShaped(ex, table, teamId, window, 'page', window.seek, key, pageQueryOf);
}

/** How many listed rows the window's filter matches (ignoring order and paging). */
export async function matchCount(ex: Executor, table: ResourceTable, teamId: string, window: ListWindow): Promise<number> {
  return Number((await runShaped(ex, table, teamId, window, 'count', undefined, [], countOf))[0]!.n);
}

/**
 * How many listed rows the window's filter matches, counted up to `cap` + 1 at most (the
 * console's "of more than 10,000"): the count reads no more rows than that, whatever the filter
 * matches. Not shaped: a console page's count, not a hot path.
 */
export async function matchCountUpTo(ex: Executor, table: ResourceTable, teamId: string, window: ListWindow, cap: number): Promise<number> {
  const hooks = hooksOf(ex);
  const matches = baseOf(ex, hooks, table, window, { teamId, where: window.where, seek: undefined })
    .select(sql<number>`1`.as('one'))
    .limit(rowCount(cap + 1));
  const row = await ex.selectFrom(matches.as('t')).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}
