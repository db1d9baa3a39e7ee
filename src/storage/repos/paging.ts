/**
 * The one list routine of Users and Groups (`listRows`), paging by either method: an offset (RFC
 * 7644 3.4.2.4 index paging) or a keyset position (RFC 9865 cursor paging). Both order rows the
 * same way: by the sort key when there is one (absent values last in both directions), then by
 * creation time and id, which make the order total. A keyset page seeks past a position with a
 * WHERE condition on exactly those keys, so a deep page costs what the first one does. Sort keys
 * are compared through the very expression the rows are ordered by (the sort key compiled by
 * predicate-sql.ts), which is also selected with the rows so that a position carries the value
 * SQL compared, not one recomputed in JavaScript. Filters arrive as storage predicates
 * (predicate.ts) and are compiled by the strategies.
 *
 * A page is found in two moves: list/plan.ts `planList` names the way from the request alone,
 * then `runPlan` runs that plan's strategy (one module of list/ each). The window and page types
 * are list/window.ts.
 */
import type { ResourceTable } from '../predicate-sql.ts';
import { hooksOf } from '../statements.ts';
import type { Executor } from '../types.ts';
import { teamCounts } from './counters.ts';
import { indexPageOf, pageOf } from './list-order.ts';
import { keyPrefixPage } from './list/by-key-prefix.ts';
import { matchStepsPage } from './list/match-steps.ts';
import { offsetByBucketsRows } from './list/offset-by-buckets.ts';
import { offsetByIndexRows } from './list/offset-by-index.ts';
import { matchCount, matchCountUpTo, plainRows } from './list/plain.ts';
import { planList } from './list/plan.ts';
import type { ListPlan } from './list/plan.ts';
import { resumedRows } from './list/resumed.ts';
import type { ListedRow, ListPage, ListWindow } from './list/window.ts';

/** How many rows an unfiltered list of the team holds, from its counters. */
export async function listedCount(ex: Executor, table: ResourceTable, teamId: string, onlyActive: boolean): Promise<number> {
  const counts = await teamCounts(ex, teamId);
  if (table === 'groups') return counts.groups;
  return onlyActive ? counts.usersActive : counts.usersActive + counts.usersDeactivated;
}

/**
 * Every row the window's filter matches, counted when a page cannot tell it (list-order.ts
 * totalOf): the filtered count, or for an unfiltered list the team's counters, kept by the
 * writes (repos/counters.ts) and read once per page.
 */
function totalCounter(ex: Executor, table: ResourceTable, teamId: string, window: ListWindow): () => Promise<number> {
  if (window.where) return () => matchCount(ex, table, teamId, window);
  let counted: number | undefined;
  return async () => (counted ??= await listedCount(ex, table, teamId, window.onlyActive === true));
}

/**
 * The page of `window` as `plan` finds it. Any plan that suits the window gives the same page;
 * tests run a plan of their choosing (the plain query, or a plan with small step limits).
 */
export async function runPlan<R extends ListedRow>(ex: Executor, table: ResourceTable, teamId: string, window: ListWindow, plan: ListPlan): Promise<ListPage<R>> {
  const count = totalCounter(ex, table, teamId, window);
  const run = async (plan: ListPlan): Promise<ListPage<R>> => {
    const offset = window.offset ?? 0;
    switch (plan.kind) {
      case 'countOnly':
        return { rows: [], total: await count(), positions: [], more: false };
      case 'matchSteps':
        return matchStepsPage<R>(ex, table, teamId, window, plan.limits, count);
      case 'byKeyPrefix':
        return (await keyPrefixPage<R>(ex, table, teamId, window, plan, count)) ?? run(plan.otherwise);
      case 'resumedSlice':
        return indexPageOf((await resumedRows(ex, table, teamId, window, plan.after)) as R[], window, count);
      case 'offsetByBuckets':
        return indexPageOf((await offsetByBucketsRows(ex, teamId, window, offset)) as R[], window, count);
      case 'offsetByIndex': {
        const fromEnd = plan.fromEndPastHalf && offset * 2 > (await count());
        return indexPageOf((await offsetByIndexRows(ex, table, teamId, window, offset, fromEnd)) as R[], window, count);
      }
      case 'offsetQuery':
        return indexPageOf((await plainRows(ex, table, teamId, window)) as unknown as R[], window, count);
      case 'seekQuery':
        return pageOf<R>((await plainRows(ex, table, teamId, window)) as unknown as R[], window);
    }
  };
  return run(plan);
}

/**
 * A page of a team's rows of `table` that satisfy `window.where`, in the window's order, by
 * offset or by seek: the one list routine of Users and Groups.
 */
export async function listRows<R extends ListedRow>(ex: Executor, table: ResourceTable, teamId: string, window: ListWindow): Promise<ListPage<R>> {
  return runPlan<R>(ex, table, teamId, window, planList({ ...window, table, engine: hooksOf(ex) }));
}

/**
 * How many of the team's listed rows `window.where` matches, up to `cap` (more than `cap` when
 * the answer is `cap` + 1): an unfiltered list from the team's counters, a filtered one counted
 * over at most `cap` + 1 rows.
 */
export async function countRowsUpTo(ex: Executor, table: ResourceTable, teamId: string, window: Pick<ListWindow, 'where' | 'onlyActive'>, cap: number): Promise<number> {
  if (!window.where) return Math.min(await listedCount(ex, table, teamId, window.onlyActive === true), cap + 1);
  return matchCountUpTo(ex, table, teamId, { ...window, descending: false, limit: 0 }, cap);
}
