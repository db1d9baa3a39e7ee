/**
 * Plan `resumedSlice`: a later slice of an index page in creation order (scim/paging.ts
 * budgetedPage reads a page in slices), whose caller knows the position of the row just before
 * it (`ListWindow.resumeAfter`): the rows are sought after that position, an index range, rather
 * than counted off from the start. Built per call.
 */
import { predicateSql, ROW } from '../../predicate-sql.ts';
import type { ResourceTable } from '../../predicate-sql.ts';
import { hooksOf } from '../../statements.ts';
import type { Executor } from '../../types.ts';
import { GROUPS_COLUMN, groupsOfRow, listedRows, orderTerms, rowCount, tiesBeyond } from '../list-order.ts';
import type { ListWindow, Position } from './window.ts';

/** The rows of the slice after `after` in creation order. */
export async function resumedRows(ex: Executor, table: ResourceTable, teamId: string, window: ListWindow, after: Position): Promise<unknown[]> {
  const hooks = hooksOf(ex);
  const base = listedRows(ex, table, teamId, window.onlyActive === true);
  let query = (window.where ? base.where(predicateSql(hooks, table, window.where)) : base).selectAll(ROW);
  if (window.withGroups && table === 'users') query = query.select(groupsOfRow(ex, hooks, teamId).as(GROUPS_COLUMN));
  for (const term of orderTerms(ROW, window, undefined)) query = query.orderBy(term.expr, term.modifiers);
  return query.where(tiesBeyond(ROW, after, !window.descending)).limit(rowCount(window.limit)).execute();
}
