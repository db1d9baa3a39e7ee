/**
 * The change feed's cost to every write: fewer B-trees touched by
 * the feed's two statements, so a commit writes fewer pages.
 *
 * - `events` loses its `at` index on both engines: retention prunes each team's oldest events by
 *   sequence range instead (repos/events.ts `pruneEvents`: a team's events are appended in seq
 *   order, so the ones past the retention are a prefix of its feed), and nothing else reads by
 *   time.
 * - On SQLite, `events` and `event_counters` become WITHOUT ROWID tables clustered on their
 *   primary keys: one B-tree each instead of a rowid table plus the primary key's index (an
 *   event insert touched three B-trees, the counter bump two; now one each). PostgreSQL keeps its
 *   heaps (a heap plus its primary key is what it has); only the index goes.
 *
 * The rows are copied as they are (same columns, same types); nothing about seq changes.
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { EngineName } from '../dialect.ts';

export function migration011(engine: EngineName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (engine === 'postgres') {
        await db.schema.dropIndex('events_at').execute();
        return;
      }
      await sql`create table events_011 (
        team_id varchar(20) not null, seq bigint not null, at text not null, type varchar(16) not null,
        resource_type varchar(16) not null, resource_id varchar(20) not null, version integer not null,
        changed text not null, actor text not null, txn text, external_id text, data text, members text,
        constraint events_pk primary key (team_id, seq)
      ) without rowid`.execute(db);
      await sql`insert into events_011 (team_id, seq, at, type, resource_type, resource_id, version, changed, actor, txn, external_id, data, members)
        select team_id, seq, at, type, resource_type, resource_id, version, changed, actor, txn, external_id, data, members from events`.execute(db);
      // Dropping the table drops its `at` index too.
      await sql`drop table events`.execute(db);
      await sql`alter table events_011 rename to events`.execute(db);

      await sql`create table event_counters_011 (team_id varchar(20) not null primary key, seq bigint not null) without rowid`.execute(db);
      await sql`insert into event_counters_011 (team_id, seq) select team_id, seq from event_counters`.execute(db);
      await sql`drop table event_counters`.execute(db);
      await sql`alter table event_counters_011 rename to event_counters`.execute(db);
    },
  };
}
