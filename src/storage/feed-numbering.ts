/**
 * How the events of a team's change feed get their seq (DESIGN.md section 8: strictly increasing,
 * gap-free in commit order). The two engines do it two ways, each behind this one interface, so
 * the feed's repository (repos/events.ts) has one body of every function:
 *
 * - By their writer (SQLite: one writer at a time, so nothing to order): the insert takes one
 *   more than the team's newest event, or than its counter row when pruning emptied the feed, and
 *   writes nothing else; the counter row only keeps the number past a pruned feed (pruneEvents
 *   raises it before it deletes), so a commit writes no page for it. Nothing is ever pending.
 * - By their readers (PostgreSQL, where numbering in the write would hold the counter row's lock,
 *   and with it the team's other writers, through the commit): the write inserts its event with a
 *   placeholder (negative, never a real number) and touches nothing else of the feed. Committed
 *   placeholders are numbered by migration 015's `rc_number_events` under the team's
 *   `event_counters` row, which the feed's readers run before they read (`catchUp`: a read that
 *   reaches the feed's end, the last seq, pruning) and the delivery workers run for every team
 *   that has placeholders (`numberAll`). Readers see numbered events only (every read is of
 *   `seq > after`, after >= 0, or says `seq > 0`).
 *
 * Either way the last seq handed out is the greater of the counter and the newest event.
 */
import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import type { Db, Executor } from './types.ts';

export interface FeedNumbering {
  /** The seq an inserted event of `teamId` (a value or an expression of a chain's earlier row) is written with. */
  seqOnInsert(teamId: unknown): RawBuilder<number>;
  /**
   * Numbers the team's committed events still pending, at most `cap`, and answers the team's last
   * seq handed out; undefined when events are numbered by their writer (nothing is ever pending,
   * and nothing is read). Inside a transaction the counter row stays locked until it ends: keep
   * such transactions short, and never call it in one that wrote events (it would number them
   * and hold the team's numbering until its commit).
   */
  catchUp(ex: Executor, teamId: string, cap: number): Promise<number | undefined>;
  /** The team's last seq handed out (0 before its first event), once what is committed is numbered (at most `cap`). */
  lastSeq(ex: Executor, teamId: string, cap: number): Promise<number>;
  /**
   * Numbers the pending events of every team that has some, at most `cap` per team (the delivery
   * workers' sweep each tick, and `rollcall copy` before it reads a feed); answers how many teams
   * it numbered.
   */
  numberAll(db: Db, cap: number): Promise<number>;
  /** Whether any committed event is still unnumbered. */
  anyUnnumbered(db: Db): Promise<boolean>;
}

/** The greater of the team's counter and its newest event: its last seq handed out. */
async function counterOrNewest(ex: Executor, teamId: string): Promise<number> {
  const row = await ex
    .selectNoFrom((eb) => [
      eb.selectFrom('event_counters').select('seq').where('team_id', '=', teamId).as('counter'),
      eb.selectFrom('events').select((e) => e.fn.max('seq').as('seq')).where('team_id', '=', teamId).as('newest'),
    ])
    .executeTakeFirst();
  return Math.max(Number(row?.counter ?? 0), Number(row?.newest ?? 0));
}

/** SQLite: the insert numbers its event. */
export const numberedByWriters: FeedNumbering = {
  seqOnInsert: (teamId) =>
    sql<number>`max(coalesce((select max(e.seq) from events as e where e.team_id = ${teamId}), 0), coalesce((select c.seq from event_counters as c where c.team_id = ${teamId}), 0)) + 1`,
  catchUp: async () => undefined,
  lastSeq: (ex, teamId) => counterOrNewest(ex, teamId),
  numberAll: async () => 0,
  anyUnnumbered: async () => false,
};

/** Teams per page of the sweep's walk. */
const SWEEP_TEAMS = 100;

async function numberTeam(ex: Executor, teamId: string, cap: number): Promise<number> {
  const { rows } = await sql<{ last: string | number }>`select rc_number_events(${teamId}, ${cap}, true) as last`.execute(ex);
  return Number(rows[0]?.last ?? 0);
}

/** PostgreSQL: a placeholder on insert, numbered once committed by the feed's readers and the sweep. */
export const numberedByReaders: FeedNumbering = {
  // Unique, negative, later ones lower.
  seqOnInsert: () => sql<number>`-nextval('event_placeholders')`,
  catchUp: numberTeam,
  lastSeq: numberTeam,
  /**
   * Teams are walked in pages of SWEEP_TEAMS by team id, so none is starved however many write.
   * Each team in its own statement, so a team's counter row is held only while its own events are
   * numbered; a team whose row another transaction holds (numbering it, pruning it) is skipped,
   * not waited for, so one team never holds up the others. A team that fails does not stop the
   * rest: the failures are thrown together at the end.
   */
  async numberAll(db, cap) {
    let numbered = 0;
    const failures: unknown[] = [];
    for (let after = ''; ; ) {
      // The partial index events_unnumbered holds placeholders only (migration 015).
      const { rows } = await sql<{ team_id: string }>`select distinct team_id from events where seq < 0 and team_id > ${after} order by team_id limit ${SWEEP_TEAMS}`.execute(db);
      for (const { team_id } of rows) {
        try {
          const { rows: done } = await sql<{ last: string | null }>`select rc_number_events(${team_id}, ${cap}, false) as last`.execute(db);
          if (done[0]?.last !== null) numbered++;
        } catch (error) {
          failures.push(error);
        }
      }
      if (rows.length < SWEEP_TEAMS) break;
      after = rows.at(-1)!.team_id;
    }
    if (failures.length > 0) throw new AggregateError(failures, `numbering the feed failed for ${failures.length} team(s)`);
    return numbered;
  },
  anyUnnumbered: async (db) => (await db.selectFrom('events').select('team_id').where('seq', '<', 0).limit(1).execute()).length > 0,
};
