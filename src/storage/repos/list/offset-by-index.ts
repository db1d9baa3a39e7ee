/**
 * Plan `offsetByIndex`: an unfiltered index page in creation order past the first row. The
 * offset is walked in the (team_id, created_at, id[, active, deleted_at]) index alone, which
 * holds everything that decides whether a row is listed (migration 010), and only the page's ids
 * reach the table. A plain `select * ... offset N` reads N table rows to skip them on PostgreSQL
 * (its index scan fetches the heap tuple before the Limit node discards it), so its cost grows
 * with the offset.
 *
 * In the list's second half (`fromEnd`) the walk starts at the other end of the index and counts
 * off the rows after the page instead: at most half the list is walked. How many rows lie after
 * the page comes from the team's counters read in the same statement, so it agrees with the rows
 * the statement sees, whatever commits meanwhile (the counters change in the writes' own
 * transactions). Both engines take a scalar subquery in LIMIT and OFFSET.
 */
import { sql } from 'kysely';
import { ROW } from '../../predicate-sql.ts';
import type { ResourceTable } from '../../predicate-sql.ts';
import { hooksOf } from '../../statements.ts';
import type { Executor } from '../../types.ts';
import { direction, GROUPS_COLUMN, groupsOfRow, listedRows, rowCount } from '../list-order.ts';
import type { ListWindow } from './window.ts';

/** The rows of the page at `offset`, walked from the list's start, or from its end when `fromEnd`. */
export async function offsetByIndexRows(ex: Executor, table: ResourceTable, teamId: string, window: ListWindow, offset: number, fromEnd: boolean): Promise<unknown[]> {
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
  if (window.withGroups && table === 'users') page = page.select(groupsOfRow(ex, hooksOf(ex), teamId, 'p').as(GROUPS_COLUMN));
  return page
    .where('p.team_id', '=', teamId)
    .where('p.id', 'in', ids)
    .orderBy('p.created_at', d)
    .orderBy('p.id', d)
    .execute();
}
