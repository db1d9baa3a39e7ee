/**
 * The change feed's cost to writes, on PostgreSQL: a committed event is
 * numbered by whoever reads the feed next, not by its writer. Migration 013 numbered it at
 * COMMIT under the team's counter row, so the team's writers still passed that row one at a
 * time, each holding it through its own WAL flush: 16 writers of a team could not share an
 * fsync, and that wait was much of what the feed cost a PATCH.
 *
 * Now a write inserts its event with a placeholder seq (negative, from the `event_placeholders`
 * sequence) and touches nothing else of the feed. `rc_number_events(team, cap)` numbers the
 * team's committed placeholders, oldest placeholder first, under the team's counter row: the
 * feed's readers call it before they read (repos/events.ts: the listing, poll, push delivery,
 * subscribe and replay, pruning, `rollcall copy`), and every instance's delivery worker calls it
 * for every team with placeholders a few times a second (skipping a team another instance is
 * numbering). So:
 * - a reader sees numbered events only, and numbers are handed out contiguously to committed
 *   events, under one lock, never reused: strictly increasing, gap-free, and nothing numbered
 *   later ever sorts before what a reader has seen (the guarantee DESIGN.md section 8's
 *   counter row gave, now given by the same row's lock in the numbering transaction);
 * - a change that waited for another (the same resource's row lock) or read what it committed
 *   takes its placeholder after that one's commit, so it is numbered after it; changes that
 *   neither saw are numbered in the order they were written, which no reader can tell apart
 *   from their commit order;
 * - a failed or rolled-back write leaves no placeholder behind, so it takes no number.
 * The function reads `greatest(counter, newest numbered event)` as its base, so a counter left
 * behind its feed (a copy, a restore) is passed rather than reused; pruning raises the counter to
 * the pruned prefix's end, so a feed pruned empty still continues its numbering.
 *
 * `events_unnumbered` (a partial index holding only placeholders, which the numbering moves out
 * of it) is how the delivery workers find the teams that have some without a walk of the feed.
 * SQLite has one writer at a time and numbers the event in its insert.
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { EngineName } from '../dialect.ts';

export function migration015(engine: EngineName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (engine !== 'postgres') return;
      await sql`drop trigger events_numbered_at_commit on events`.execute(db);
      await sql`drop function rc_number_event()`.execute(db);
      await sql`create index events_unnumbered on events (team_id) where seq < 0`.execute(db);
      // Placeholders must follow the order nextval hands them out in across sessions (the
      // ordering argument above): no per-session cache of sequence values.
      await sql`alter sequence event_placeholders cache 1`.execute(db);
      // Each statement of a PL/pgSQL function takes its own snapshot (READ COMMITTED, which
      // Rollcall's sessions use): the numbering UPDATE, run after the counter row is locked, sees
      // every placeholder committed before it, and every number an earlier holder of the lock
      // handed out. `wait` false (the delivery workers' sweep) skips a team whose counter row
      // another transaction holds (it is being numbered or pruned) and answers null. Called in a
      // transaction that inserted events itself, it numbers those too and holds the row until
      // that transaction ends: no caller does.
      await sql`create function rc_number_events(team text, cap integer, wait boolean) returns bigint language plpgsql as $$
        declare
          base bigint;
          numbered bigint;
        begin
          if not exists (select 1 from events where team_id = team and seq < 0) then
            return greatest(
              coalesce((select c.seq from event_counters as c where c.team_id = team), 0),
              coalesce((select max(e.seq) from events as e where e.team_id = team and e.seq > 0), 0));
          end if;
          insert into event_counters (team_id, seq) values (team, 0) on conflict (team_id) do nothing;
          if wait then
            select c.seq into base from event_counters as c where c.team_id = team for update;
          else
            select c.seq into base from event_counters as c where c.team_id = team for update skip locked;
            if not found then
              return null;
            end if;
          end if;
          base := greatest(base, coalesce((select max(e.seq) from events as e where e.team_id = team and e.seq > 0), 0));
          with pending as (
            select p.seq, row_number() over (order by p.seq desc) as n
            from (select e.seq from events as e where e.team_id = team and e.seq < 0 order by e.seq desc limit cap) as p
          )
          update events as e set seq = base + pending.n from pending where e.team_id = team and e.seq = pending.seq;
          get diagnostics numbered = row_count;
          if numbered = 0 then
            return base;
          end if;
          update event_counters set seq = base + numbered where team_id = team;
          return base + numbered;
        end
      $$`.execute(db);
    },
  };
}
