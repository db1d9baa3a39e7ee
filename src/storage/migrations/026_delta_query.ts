/**
 * SCIM delta query (issue 33, draft-sehgal-scim-delta-query; scim/delta.ts): a delta reports
 * each resource once, at its last change up to the delta's end. Whether an event is a resource's
 * last change in that range is asked of this index, one probe per event of a page: the team's
 * events of one resource in seq order, with their type (the probe passes over Shared Signals and
 * asynchronous responses), so the probe reads the index alone. Without it the question is a walk
 * of the rest of the range for every event. The index is small beside `events` (five short
 * columns) and is written by the feed's insert and by the numbering of its seq on PostgreSQL.
 */
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration026(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('events_resource').on('events').columns(['team_id', 'resource_type', 'resource_id', 'seq', 'type']).execute();
    },
  };
}
