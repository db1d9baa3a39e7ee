/**
 * The change feed's rows (migrations 007, 011, 013 and 015): the events, the
 * per-team counter, and their pruning. What every SCIM write runs is one compiled insert
 * (statements.ts); the rest uses the query builder. bigint columns come back as strings from
 * PostgreSQL and are turned into numbers here.
 *
 * A team's seq (DESIGN.md section 8: strictly increasing, gap-free in commit order):
 * - PostgreSQL: the write inserts its event with a placeholder (negative, never a real number)
 *   and touches nothing else of the feed. Committed placeholders are numbered by migration
 *   015's `rc_number_events` under the team's `event_counters` row, which the feed's readers
 *   run before they read (numberFeed: eventsAfter on reaching the feed's end, lastSeq, pruning)
 *   and the delivery workers run for every team that has placeholders (numberFeeds). Readers
 *   see numbered events only (every read is of `seq > after`, after >= 0, or says `seq > 0`).
 * - SQLite (one writer at a time, so nothing to order): the insert takes one more than the
 *   team's newest event, or than its counter row when pruning emptied the feed, and writes
 *   nothing else; the counter row only keeps the number past a pruned feed (pruneEvents raises
 *   it before it deletes), so a commit writes no page for it.
 * Either way the last seq handed out is the greater of the counter and the newest event.
 */
import { sql } from 'kysely';
import { defineWrite, hooksOf, hot } from '../statements.ts';
import type { Db, EventsTable, Executor } from '../types.ts';
import { insertAuditEvent } from './audit.ts';
import type { AuditRow } from './audit.ts';

export interface EventRow extends Omit<EventsTable, 'seq'> {
  seq: number;
}

const EVENT_KEYS = ['team_id', 'at', 'type', 'resource_type', 'resource_id', 'version', 'changed', 'actor', 'txn', 'external_id', 'data', 'members'] as const;

/** The team's next seq, where the insert takes it (SQLite): past its newest event and its counter. */
const nextSeqOf = (teamId: string) =>
  sql<number>`max(coalesce((select max(e.seq) from events as e where e.team_id = ${teamId}), 0), coalesce((select c.seq from event_counters as c where c.team_id = ${teamId}), 0)) + 1`;

/** A placeholder seq (PostgreSQL): unique, negative, later ones lower; numbered once committed. */
export const PLACEHOLDER = sql<number>`-nextval('event_placeholders')`;

/** The event with its seq: numbered in the insert (SQLite), or a placeholder its readers number (PostgreSQL). */
const APPEND_EVENT = defineWrite<Omit<EventsTable, 'seq'>>('appendEvent', EVENT_KEYS, (db, row, hooks) =>
  db.insertInto('events').values({ ...row, seq: hooks.feedNumberedByReaders ? PLACEHOLDER : nextSeqOf(row.team_id) }),
);

/**
 * Appends one event to the team's feed in the caller's transaction. It takes the team's next
 * seq once committed (see above); read it back with eventsAfter.
 */
export async function appendEvent(ex: Executor, row: Omit<EventsTable, 'seq'>): Promise<void> {
  await hot(ex).write(ex, APPEND_EVENT, row);
}

/**
 * A SCIM write's audit row and its feed event, in the caller's transaction. Both are deferrable
 * writes: on PostgreSQL they go to the database with the transaction's other such writes, in one
 * statement (pg-driver.ts), so the feed adds no round trip to a write.
 */
export async function appendAuditedEvent(ex: Executor, audit: AuditRow, event: Omit<EventsTable, 'seq'>): Promise<void> {
  await insertAuditEvent(ex, audit);
  await appendEvent(ex, event);
}

const toRow = (r: EventsTable): EventRow => ({ ...r, seq: Number(r.seq) });

/** Placeholders one reader numbers at a time (the rest wait for its next read or the next one's). */
const READER_BATCH = 1_000;
/** Placeholders the delivery workers' sweep numbers per team per tick, and teams per page of its walk. */
const SWEEP_BATCH = 10_000;
const SWEEP_TEAMS = 100;

/**
 * Numbers the team's committed placeholders, at most `cap` of them (PostgreSQL; nothing is ever
 * pending on SQLite), and answers the team's last seq handed out: its counter or its newest
 * event, whichever is greater (0 before its first event). Inside a transaction, the counter
 * row stays locked until it ends: keep such transactions short, and never call it in one that
 * wrote events (it would number them and hold the team's numbering until its commit).
 */
async function numberFeed(ex: Executor, teamId: string, cap = READER_BATCH): Promise<number> {
  if (hooksOf(ex).feedNumberedByReaders) {
    const { rows } = await sql<{ last: string | number }>`select rc_number_events(${teamId}, ${cap}, true) as last`.execute(ex);
    return Number(rows[0]?.last ?? 0);
  }
  const row = await ex
    .selectNoFrom((eb) => [
      eb.selectFrom('event_counters').select('seq').where('team_id', '=', teamId).as('counter'),
      eb.selectFrom('events').select((e) => e.fn.max('seq').as('seq')).where('team_id', '=', teamId).as('newest'),
    ])
    .executeTakeFirst();
  return Math.max(Number(row?.counter ?? 0), Number(row?.newest ?? 0));
}

/**
 * Numbers the committed placeholders of every team that has some (PostgreSQL's delivery
 * workers, each tick, and `rollcall copy` before it reads a feed); answers how many teams it
 * numbered. Teams are walked in pages of SWEEP_TEAMS by team id, so none is starved however
 * many write. Each team in its own statement, so a team's counter row is held only while its
 * own events are numbered; a team whose row another transaction holds (numbering it, pruning
 * it) is skipped, not waited for, so one team never holds up the others. A team that fails
 * does not stop the rest: the failures are thrown together at the end.
 */
export async function numberFeeds(db: Db): Promise<number> {
  if (!hooksOf(db).feedNumberedByReaders) return 0;
  let numbered = 0;
  const failures: unknown[] = [];
  for (let after = ''; ; ) {
    // The partial index events_unnumbered holds placeholders only (migration 015).
    const { rows } = await sql<{ team_id: string }>`select distinct team_id from events where seq < 0 and team_id > ${after} order by team_id limit ${SWEEP_TEAMS}`.execute(db);
    for (const { team_id } of rows) {
      try {
        const { rows: done } = await sql<{ last: string | null }>`select rc_number_events(${team_id}, ${SWEEP_BATCH}, false) as last`.execute(db);
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
}

/** Whether any committed event is still unnumbered (PostgreSQL; never on SQLite). */
export async function anyUnnumbered(db: Db): Promise<boolean> {
  if (!hooksOf(db).feedNumberedByReaders) return false;
  return (await db.selectFrom('events').select('team_id').where('seq', '<', 0).limit(1).execute()).length > 0;
}

/**
 * The team's events after `after` (>= 0), oldest first, at most `limit`. A read that reaches the
 * feed's end numbers what has been committed since (numberFeed) and reads on, so a reader sees
 * every event committed before it asked.
 */
export async function eventsAfter(ex: Executor, teamId: string, after: number, limit: number): Promise<EventRow[]> {
  const read = async (from: number, n: number): Promise<EventRow[]> =>
    (await ex.selectFrom('events').selectAll().where('team_id', '=', teamId).where('seq', '>', from).orderBy('seq').limit(n).execute()).map(toRow);
  const rows = await read(after, limit);
  if (rows.length >= limit || !hooksOf(ex).feedNumberedByReaders) return rows;
  const end = rows.at(-1)?.seq ?? after;
  if ((await numberFeed(ex, teamId)) <= end) return rows;
  return [...rows, ...(await read(end, limit - rows.length))];
}

/** The team's last seq handed out (0 before its first event), once what is committed is numbered. */
export const lastSeq = (ex: Executor, teamId: string): Promise<number> => numberFeed(ex, teamId, SWEEP_BATCH);

/** The team's feed: its last seq handed out, and the oldest seq still kept (undefined when none is). */
export interface FeedEnds {
  readonly lastSeq: number;
  readonly firstKept: number | undefined;
}

/** The team's feed ends, read once what is committed is numbered (so the two agree). */
export async function feedEnds(ex: Executor, teamId: string): Promise<FeedEnds> {
  const last = await lastSeq(ex, teamId);
  return { lastSeq: last, firstKept: await firstKeptSeq(ex, teamId) };
}

/** The oldest numbered seq still kept for the team (undefined when none is); see feedEnds. */
async function firstKeptSeq(ex: Executor, teamId: string): Promise<number | undefined> {
  const row = await ex.selectFrom('events').select((eb) => eb.fn.min('seq').as('seq')).where('team_id', '=', teamId).where('seq', '>', 0).executeTakeFirst();
  return row?.seq === null || row?.seq === undefined ? undefined : Number(row.seq);
}

/**
 * Deletes up to `batch` events older than `before`, team by team: a team's events are numbered
 * once committed, in the order they were written, so those past the retention are a prefix of its feed, found
 * by walking its primary key from the start (migration 011 dropped the index on `at`) and
 * deleted as one seq range. The prefix ends at the first event still kept, so what remains has
 * no holes. What is committed is numbered first (numberFeed, PostgreSQL): an event nobody had
 * read yet is pruned with its number, so a reader behind it is told (a 410) instead of never seeing it. The
 * team's counter is raised to the prefix's end in the same transaction, so a feed pruned empty
 * still continues after its last number. No write waits for that row (writers never touch it).
 * (A team late in the order is reached by a later call once the earlier ones have nothing left.)
 */
export async function pruneEvents(db: Db, before: string, batch: number): Promise<number> {
  const teams = await db.selectFrom('teams').select('id').orderBy('id').execute();
  let deleted = 0;
  for (const { id: teamId } of teams) {
    if (deleted >= batch) break;
    if (hooksOf(db).feedNumberedByReaders) await numberFeed(db, teamId);
    const oldest = await db.selectFrom('events').select(['seq', 'at']).where('team_id', '=', teamId).where('seq', '>', 0).orderBy('seq').limit(batch - deleted).execute();
    let last: number | undefined;
    for (const e of oldest) {
      if (e.at >= before) break;
      last = Number(e.seq);
    }
    if (last === undefined) continue;
    const end = last;
    deleted += await db.transaction().execute(async (trx) => {
      // Raised only where it is behind (after a copy; always on SQLite, whose writes leave it
      // alone): an UPDATE whose WHERE rejects the row does not lock it, so the team's numbering
      // does not wait for the delete.
      await trx.insertInto('event_counters').values({ team_id: teamId, seq: end }).onConflict((oc) => oc.column('team_id').doNothing()).execute();
      await trx.updateTable('event_counters').set({ seq: end }).where('team_id', '=', teamId).where('seq', '<', end).execute();
      const result = await trx.deleteFrom('events').where('team_id', '=', teamId).where('seq', '>', 0).where('seq', '<=', end).executeTakeFirst();
      return Number(result.numDeletedRows);
    });
  }
  return deleted;
}

/** Deletes up to `batch` delivery attempts older than `before`. */
export async function pruneAttempts(ex: Executor, before: string, batch: number): Promise<number> {
  const victims = await ex.selectFrom('event_attempts').select('id').where('at', '<', before).limit(batch).execute();
  if (victims.length === 0) return 0;
  const result = await ex.deleteFrom('event_attempts').where('id', 'in', victims.map((v) => v.id)).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * How many of the team's events after `after` (of `types`, when given) are kept, counting at most
 * `cap`: a walk of the (team_id, seq) key that stops at the cap, so a receiver far behind costs
 * no more than `cap` index entries.
 */
export async function countEventsAfter(ex: Executor, teamId: string, after: number, types: readonly string[] | null, cap: number): Promise<number> {
  let inner = ex.selectFrom('events').select('seq').where('team_id', '=', teamId).where('seq', '>', after);
  if (types !== null) inner = inner.where('type', 'in', types.length > 0 ? [...types] : ['']);
  const row = await ex
    .selectFrom(inner.limit(cap).as('pending'))
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
