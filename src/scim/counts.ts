/**
 * How many resources a list's filter matches, counted only up to a cap: what a person reads
 * above a list ("51-100 of 2,002", or "of more than 10,000"). An unfiltered list is read from the
 * team's counters; a filtered one is counted over at most cap + 1 rows, under the same checks as
 * the list itself (scans.ts: the filter's cost, the team's scan places, statement.ms), so a count
 * never costs more than reading cap rows of the list. No SQL here (repos/paging.ts countRowsUpTo).
 */
import { countRowsUpTo } from '../storage/repos/paging.ts';
import { hidesDeactivated } from './context.ts';
import type { ScimContext } from './context.ts';
import type { ListQuery } from './query.ts';
import { whereOf } from './query.ts';
import { scanning } from './scans.ts';

/** The matches of `query`'s filter (and its `access` and words) among the team's users or groups, up to `cap` (`cap` + 1 means more). */
export async function countUpTo(ctx: ScimContext, resource: 'User' | 'Group', query: Pick<ListQuery, 'filter' | 'holds' | 'words'>, cap: number): Promise<number> {
  const table = resource === 'User' ? 'users' : 'groups';
  const where = whereOf(ctx, query);
  const onlyActive = resource === 'User' && hidesDeactivated(ctx);
  return scanning(ctx, [{ table, ...(where ? { where } : {}), onlyActive }], (read) =>
    read((ex, guard) => {
      const guarded = guard(where);
      return countRowsUpTo(ex, table, ctx.team.id, { ...(guarded ? { where: guarded } : {}), onlyActive }, cap);
    }),
  );
}
