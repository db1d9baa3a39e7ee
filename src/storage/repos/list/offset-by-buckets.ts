/**
 * Plan `offsetByBuckets`: an unfiltered index page of users in ascending creation order deep in
 * the list, found through the creation-time counters (repos/counters.ts, migration 010) in one
 * statement: the hour buckets' running sums give the hour the page's first row was created in
 * and how many listed users came before it, the second buckets within that hour do the same for
 * the second, and only the rows of that second before the page are counted off in the index. The
 * work is bounded by the team's hours of creation history plus the seconds of one hour plus the
 * users created in one second, not by the offset. The counters are read in the same statement as
 * the rows, so they agree with the rows it sees (both change only in the writes' transactions).
 */
import { sql } from 'kysely';
import { hooksOf } from '../../statements.ts';
import type { Executor } from '../../types.ts';
import { GROUPS_COLUMN, groupsOfRow, rowCount } from '../list-order.ts';
import type { ListWindow } from './window.ts';

/** The rows of the users page at `offset`. */
export async function offsetByBucketsRows(ex: Executor, teamId: string, window: ListWindow, offset: number): Promise<unknown[]> {
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
    select p.*${window.withGroups ? sql`, (${groupsOfRow(ex, hooksOf(ex), teamId, 'p')}) as ${sql.ref(GROUPS_COLUMN)}` : sql``} from users p where p.team_id = ${teamId} and p.id in (
      select r.id from users r
      where r.team_id = ${teamId} and r.deleted_at is null ${onlyActive} and r.created_at >= (select bucket from sp)
      order by r.created_at, r.id
      limit ${rowCount(window.limit)} offset coalesce((select cast(${n} - before as bigint) from sp), 0)
    ) order by p.created_at, p.id`;
  return (await query.execute(ex)).rows as unknown[];
}
