/**
 * The change feed's cost to writes, on PostgreSQL: the team's counter row is
 * bumped at COMMIT instead of at the write's feed statement. (Superseded by migration 015,
 * which drops this trigger: the feed's readers number committed events.)
 *
 * DESIGN.md section 8 takes `seq` from a per-team counter row updated in the write's
 * transaction; the row lock orders a team's concurrent writers, so the numbers follow the
 * commits and a reader never sees seq n+1 before n. Bumped by the feed statement, the row stayed
 * locked until the commit: across the answer's round trip to Rollcall, the time Rollcall's busy
 * event loop took to send COMMIT, and the commit's WAL flush. Every writer of the team waited in
 * line for all of that.
 *
 * Now a write inserts its event with a placeholder seq (negative, from a sequence: unique, never
 * a real number), and a constraint trigger deferred to COMMIT bumps the counter and gives the
 * event its number. The lock is the same row's, taken in the same transaction, in the same
 * order, but held only from the start of COMMIT to its end. A transaction's events are numbered
 * in the order they were inserted (deferred triggers fire in event order). Nobody sees a
 * placeholder: the renumbering happens before the commit makes the rows visible. Rows inserted
 * with their number (`rollcall copy`, tests) are left alone.
 *
 * SQLite has one writer at a time: its insert takes the next number itself (repos/events.ts).
 *
 * The function's table and sequence names resolve through the session's search_path, as every
 * statement of Rollcall's does (a schema per database in the tests).
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { EngineName } from '../dialect.ts';

export function migration013(engine: EngineName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (engine !== 'postgres') return;
      await sql`create sequence event_placeholders`.execute(db);
      await sql`create function rc_number_event() returns trigger language plpgsql as $$
        declare
          next bigint;
        begin
          insert into event_counters as c (team_id, seq) values (new.team_id, 1)
            on conflict (team_id) do update set seq = c.seq + 1
            returning c.seq into next;
          update events set seq = next where team_id = new.team_id and seq = new.seq;
          if not found then
            raise exception 'rollcall: event % of team % is gone before its commit', new.seq, new.team_id;
          end if;
          return null;
        end
      $$`.execute(db);
      await sql`create constraint trigger events_numbered_at_commit after insert on events
        deferrable initially deferred for each row when (new.seq < 0) execute function rc_number_event()`.execute(db);
    },
  };
}
