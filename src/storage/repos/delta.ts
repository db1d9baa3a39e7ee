/**
 * The feed read of a SCIM delta query (scim/delta.ts, draft-sehgal-scim-delta-query): which
 * resources of one type changed in a range of a team's feed, each named once, at its last change
 * in the range. Walked in seq order from a position, so a delta is paged by the seq of the last
 * feed row it examined; a page reads the team's feed rows in a seq window the caller bounds (a
 * team's seqs have no gaps, so the window's width bounds the rows read through the primary key)
 * and costs one probe of the `events_resource` index (migration 026) per event of the resource
 * type it passes over, never a read of the team's directory.
 */
import type { Executor } from '../types.ts';

/** A resource's last change in a delta's range: its seq there, and the resource's id. */
export interface LastChange {
  readonly seq: number;
  readonly id: string;
}

/**
 * The resources of `resourceType` whose last event of `types` in (`since`, `upto`] lies in
 * (`after`, `through`] (since <= after <= through <= upto), oldest first, at most `limit`: each
 * resource once, at that last event. Only the feed rows in (`after`, `through`] are walked; the
 * later events up to `upto` are only probed, to tell a superseded event from a last one.
 */
export async function lastChanges(
  ex: Executor,
  teamId: string,
  resourceType: string,
  types: readonly string[],
  after: number,
  through: number,
  upto: number,
  limit: number,
): Promise<LastChange[]> {
  const rows = await ex
    .selectFrom('events as e')
    .select(['e.seq', 'e.resource_id'])
    .where('e.team_id', '=', teamId)
    .where('e.seq', '>', after)
    .where('e.seq', '<=', through)
    .where('e.resource_type', '=', resourceType)
    .where('e.type', 'in', [...types])
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('events as l')
            .select('l.seq')
            .whereRef('l.team_id', '=', 'e.team_id')
            .whereRef('l.resource_type', '=', 'e.resource_type')
            .whereRef('l.resource_id', '=', 'e.resource_id')
            .whereRef('l.seq', '>', 'e.seq')
            .where('l.seq', '<=', upto)
            .where('l.type', 'in', [...types]),
        ),
      ),
    )
    .orderBy('e.seq')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ seq: Number(r.seq), id: r.resource_id }));
}
