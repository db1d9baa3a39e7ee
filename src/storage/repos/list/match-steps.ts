/**
 * Plan `matchSteps`: an unsorted page filtered by `sw`, `ew` or `co` on an indexed column
 * (indexed.ts mayMatchMany), found in up to three steps, because a filter an index range answers
 * costs what its matches cost to sort, while one that matches a large part of the team is
 * cheaper found by walking the creation order, and neither engine's planner can tell which from a
 * bound value (SQLite keeps no histograms):
 *
 * 1. fromFewMatches: at most `few` + 1 matches, read the cheapest way (an index range, no
 *    order), sorted and paged; enough when there are no more (a person's name);
 * 2. probeFirst: the first `probe` rows of the creation order, filtered; enough when they hold
 *    the page (a common prefix);
 * 3. everyMatch: the filtered query, ordered (between the two: matches fewer than one row in a
 *    hundred of the walk, so few enough to sort).
 *
 * Built per call: which step answers depends on the data, not the shape.
 */
import { sql } from 'kysely';
import type { SelectQueryBuilder } from 'kysely';
import { predicateSql, ROW } from '../../predicate-sql.ts';
import type { ResourceTable } from '../../predicate-sql.ts';
import { hooksOf } from '../../statements.ts';
import type { Database, Executor } from '../../types.ts';
import { listedRows, orderTerms, pageOf, rowCount, seekCondition, totalOf, withGroupsOf } from '../list-order.ts';
import type { MatchStepLimits } from './plan.ts';
import type { ListedRow, ListPage, ListWindow } from './window.ts';

/** The column fromFewMatches counts the matches in. */
const MATCH_COUNT = 'rc_matches';

/** What every step of one page reads from. */
interface Steps {
  readonly ex: Executor;
  readonly table: ResourceTable;
  readonly teamId: string;
  readonly window: ListWindow & { readonly where: NonNullable<ListWindow['where']> };
  readonly limits: MatchStepLimits;
}

/**
 * The page from every match, when there are at most `few` (after the seek position, when
 * seeking): the matches are read without an order, so the planner takes its index range, then
 * ordered and paged, and counted on the way (`total` for index pages). Undefined when there are
 * more, or when an offset page comes back empty (nothing tells how many there were).
 */
async function fromFewMatches<R extends ListedRow>({ ex, table, teamId, window, limits }: Steps): Promise<{ rows: R[]; matches: number } | undefined> {
  // Subqueries without the executor's plugins: they see the statement once, as a whole.
  let matches = listedRows(ex.withoutPlugins(), table, teamId, window.onlyActive === true).where(predicateSql(hooksOf(ex), table, window.where)).selectAll(ROW);
  const seek = seekCondition(ROW, window, undefined);
  if (seek) matches = matches.where(seek);
  let query = ex
    .selectFrom(matches.limit(rowCount(limits.few + 1)).as(ROW))
    .selectAll(ROW)
    .select(sql<number | string>`count(*) over ()`.as(MATCH_COUNT)) as unknown as SelectQueryBuilder<Database, never, {}>;
  query = withGroupsOf(ex, table, teamId, window, query);
  for (const term of orderTerms(ROW, window, undefined)) query = query.orderBy(term.expr, term.modifiers);
  const offset = window.seek ? 0 : (window.offset ?? 0);
  const limited = query.limit(rowCount(window.limit + (window.seek ? 1 : 0)));
  const raw = (await (offset > 0 ? limited.offset(rowCount(offset)) : limited).execute()) as unknown as (R & { readonly [MATCH_COUNT]: number | string })[];
  if (raw.length === 0) return offset === 0 ? { rows: [], matches: 0 } : undefined;
  const found = Number(raw[0]![MATCH_COUNT]);
  if (found > limits.few) return undefined;
  return { rows: raw.map(({ [MATCH_COUNT]: _, ...row }) => row as unknown as R), matches: found };
}

/**
 * The page from the first `probe` rows of the creation order (after the seek position, when
 * seeking), when they hold all of it: the page's rows are then the first matches of the whole
 * order. Undefined when they do not (the caller runs the filtered query), or when an offset
 * reaches too deep for the walk to find the page.
 */
async function probeFirst<R extends ListedRow>({ ex, table, teamId, window, limits }: Steps): Promise<R[] | undefined> {
  const offset = window.seek ? 0 : (window.offset ?? 0);
  const wanted = offset + window.limit + (window.seek ? 1 : 0);
  if (wanted * 10 > limits.probe) return undefined;
  let walk = listedRows(ex.withoutPlugins(), table, teamId, window.onlyActive === true).selectAll(ROW);
  const seek = seekCondition(ROW, window, undefined);
  if (seek) walk = walk.where(seek);
  for (const term of orderTerms(ROW, window, undefined)) walk = walk.orderBy(term.expr, term.modifiers);
  let query = ex
    .selectFrom(walk.limit(rowCount(limits.probe)).as(ROW))
    .selectAll(ROW)
    .where(predicateSql(hooksOf(ex), table, window.where)) as unknown as SelectQueryBuilder<Database, never, {}>;
  query = withGroupsOf(ex, table, teamId, window, query);
  for (const term of orderTerms(ROW, window, undefined)) query = query.orderBy(term.expr, term.modifiers);
  const limited = query.limit(rowCount(wanted - offset));
  const rows = (await (offset > 0 ? limited.offset(rowCount(offset)) : limited).execute()) as unknown as R[];
  return rows.length === wanted - offset ? rows : undefined;
}

/**
 * Step 3: more than `few` matches, too sparse early in the creation order for the walk: every
 * match is read by its index and sorted. Written as a subquery neither planner flattens (it has a
 * LIMIT), since a planner that walked the creation order here, hoping to meet the page soon,
 * would read every row before the first match, however deep into the team that is.
 */
async function everyMatch<R extends ListedRow>({ ex, table, teamId, window }: Steps, limit: number, offset: number): Promise<R[]> {
  let matches = listedRows(ex.withoutPlugins(), table, teamId, window.onlyActive === true).where(predicateSql(hooksOf(ex), table, window.where)).selectAll(ROW);
  const after = seekCondition(ROW, window, undefined);
  if (after) matches = matches.where(after);
  let query = withGroupsOf(ex, table, teamId, window, ex.selectFrom(matches.limit(rowCount(Number.MAX_SAFE_INTEGER)).as(ROW)).selectAll(ROW) as unknown as SelectQueryBuilder<Database, never, {}>);
  for (const term of orderTerms(ROW, window, undefined)) query = query.orderBy(term.expr, term.modifiers);
  const limited = query.limit(rowCount(limit));
  return (await (offset > 0 ? limited.offset(rowCount(offset)) : limited).execute()) as unknown as R[];
}

/** The page of a `matchSteps` plan (see the module comment). `count` counts every match (index pages' total). */
export async function matchStepsPage<R extends ListedRow>(
  ex: Executor,
  table: ResourceTable,
  teamId: string,
  window: ListWindow,
  limits: MatchStepLimits,
  count: () => Promise<number>,
): Promise<ListPage<R>> {
  const where = window.where;
  if (!where) throw new Error('matchSteps plans a filtered list');
  if (window.resumeAfter && !window.seek) {
    // A later slice of an index page: the rows after the previous slice's last, found as a seek.
    const { resumeAfter, offset, ...rest } = window;
    const page = await matchStepsPage<R>(ex, table, teamId, { ...rest, seek: { direction: 'after', from: resumeAfter } }, limits, count);
    const total = window.countTotal === false ? undefined : await totalOf(page.rows, offset ?? 0, window.limit, count);
    return { rows: page.rows, total, positions: page.positions, more: false };
  }
  const steps: Steps = { ex, table, teamId, window: { ...window, where }, limits };
  const few = await fromFewMatches<R>(steps);
  const probed = few ? few.rows : await probeFirst<R>(steps);
  if (!window.seek) {
    const offset = window.offset ?? 0;
    const rows = probed ?? (await everyMatch<R>(steps, window.limit, offset));
    const total = window.countTotal === false ? undefined : few ? few.matches : await totalOf(rows, offset, window.limit, count);
    return { rows, total, positions: rows.map((r) => ({ createdAt: r.created_at, id: r.id })), more: false };
  }
  return pageOf<R>(probed ?? (await everyMatch<R>(steps, window.limit + 1, 0)), window);
}
