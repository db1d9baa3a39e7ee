/**
 * The change feed's rows (issue 10 item 1; migrations 007, 011 and 013): the events, the per-team
 * counter, and their pruning. What every SCIM write runs is one compiled insert (statements.ts);
 * the rest uses the query builder. bigint columns come back as strings from PostgreSQL and are
 * turned into numbers here.
 *
 * A team's next seq (DESIGN.md section 8: strictly increasing, gap-free in commit order):
 * - PostgreSQL: the event is inserted with a placeholder (negative, never a real number) and
 *   migration 013's deferred trigger bumps the team's `event_counters` row at COMMIT and numbers
 *   it; the row lock orders concurrent writers and is held only while the transaction commits.
 * - SQLite (one writer at a time, so nothing to order): one more than the team's newest event,
 *   or than its counter row when pruning emptied the feed; the insert reads both and writes
 *   nothing else. There the counter row only keeps the number past a pruned feed (pruneEvents
 *   raises it before it deletes), so a commit writes no page for it.
 * Either way the last seq handed out is the greater of the counter and the newest event (lastSeq).
 */
import { sql } from 'kysely';
import { defineStatement, hooksOf, hot } from '../statements.ts';
import type { Db, EventsTable, Executor } from '../types.ts';
import { AUDIT_COLUMNS, insertAuditEvent } from './audit.ts';
import type { AuditRow } from './audit.ts';

export interface EventRow extends Omit<EventsTable, 'seq'> {
  seq: number;
}

const EVENT_KEYS = ['team_id', 'at', 'type', 'resource_type', 'resource_id', 'version', 'changed', 'actor', 'txn', 'external_id', 'data', 'members'] as const;

/** The team's next seq, where the insert takes it (SQLite): past its newest event and its counter. */
const nextSeqOf = (teamId: string) =>
  sql<number>`max(coalesce((select max(e.seq) from events as e where e.team_id = ${teamId}), 0), coalesce((select c.seq from event_counters as c where c.team_id = ${teamId}), 0)) + 1`;

/** The event with its seq: numbered in the insert (SQLite), or a placeholder numbered at COMMIT (PostgreSQL). */
const APPEND_EVENT = defineStatement<Omit<EventsTable, 'seq'>, unknown>('appendEvent', EVENT_KEYS, (db, row, hooks) =>
  db.insertInto('events').values({ ...row, seq: hooks.feedNumberedAtCommit ? sql<number>`-nextval('event_placeholders')` : nextSeqOf(row.team_id) }),
);

/**
 * Appends one event to the team's feed in the caller's transaction. Its seq is the team's next
 * one when the transaction commits (see above); read it back with eventsAfter.
 */
export async function appendEvent(ex: Executor, row: Omit<EventsTable, 'seq'>): Promise<void> {
  await hot(ex).run(ex, APPEND_EVENT, row);
}

/** An audit row and a feed event, as appendAuditedEvent takes them in one parameter list. */
type AuditedEventParams = { [K in keyof AuditRow as `audit_${K}`]: AuditRow[K] } & Omit<EventsTable, 'seq'>;

/**
 * A write's audit row and its feed event in one statement where the event is numbered at COMMIT
 * and a WITH may hold an INSERT (PostgreSQL): a data-modifying WITH runs whether or not the
 * statement reads it. One round trip for what took two.
 */
const APPEND_AUDITED_EVENT = defineStatement<AuditedEventParams, unknown>(
  'appendAuditedEvent',
  [...AUDIT_COLUMNS.map((k) => `audit_${k}` as const), ...EVENT_KEYS],
  (db, p) =>
    db
      .with('audit', (w) => w.insertInto('audit_events').values(Object.fromEntries(AUDIT_COLUMNS.map((k) => [k, p[`audit_${k}`]])) as unknown as AuditRow))
      .insertInto('events')
      .values({ ...(Object.fromEntries(EVENT_KEYS.map((k) => [k, p[k]])) as unknown as Omit<EventsTable, 'seq'>), seq: sql<number>`-nextval('event_placeholders')` }),
);

/**
 * A SCIM write's audit row and its feed event, in the caller's transaction: one statement on
 * PostgreSQL (APPEND_AUDITED_EVENT), the two inserts on SQLite, where a
 * statement costs no round trip.
 */
export async function appendAuditedEvent(ex: Executor, audit: AuditRow, event: Omit<EventsTable, 'seq'>): Promise<void> {
  const hooks = hooksOf(ex);
  if (hooks.feedNumberedAtCommit && hooks.writableCtes) {
    const params = { ...event } as Record<string, unknown>;
    for (const k of AUDIT_COLUMNS) params[`audit_${k}`] = audit[k];
    await hot(ex).run(ex, APPEND_AUDITED_EVENT, params as AuditedEventParams);
    return;
  }
  await insertAuditEvent(ex, audit);
  await appendEvent(ex, event);
}

const toRow = (r: EventsTable): EventRow => ({ ...r, seq: Number(r.seq) });

/** The team's events after `after`, oldest first, at most `limit`. */
export async function eventsAfter(ex: Executor, teamId: string, after: number, limit: number): Promise<EventRow[]> {
  const rows = await ex.selectFrom('events').selectAll().where('team_id', '=', teamId).where('seq', '>', after).orderBy('seq').limit(limit).execute();
  return rows.map(toRow);
}

/** The team's last seq handed out (0 before its first event): its counter or its newest event, whichever is greater. */
export async function lastSeq(ex: Executor, teamId: string): Promise<number> {
  const row = await ex
    .selectNoFrom((eb) => [
      eb.selectFrom('event_counters').select('seq').where('team_id', '=', teamId).as('counter'),
      eb.selectFrom('events').select((e) => e.fn.max('seq').as('seq')).where('team_id', '=', teamId).as('newest'),
    ])
    .executeTakeFirst();
  return Math.max(Number(row?.counter ?? 0), Number(row?.newest ?? 0));
}

/** The oldest seq still kept for the team (undefined when none is). */
export async function firstKeptSeq(ex: Executor, teamId: string): Promise<number | undefined> {
  const row = await ex.selectFrom('events').select((eb) => eb.fn.min('seq').as('seq')).where('team_id', '=', teamId).executeTakeFirst();
  return row?.seq === null || row?.seq === undefined ? undefined : Number(row.seq);
}

/**
 * Deletes up to `batch` events older than `before`, team by team: a team's events are appended
 * in seq order, so those past the retention are a prefix of its feed, found by walking its
 * primary key from the start (migration 011 dropped the index on `at`) and deleted as one seq
 * range. The prefix ends at the first event still kept, so what remains has no holes. On SQLite
 * the team's counter is raised to the prefix's end in the same transaction, so a feed pruned
 * empty still continues after its last number (it numbers from the newest event: see above).
 */
export async function pruneEvents(db: Db, before: string, batch: number): Promise<number> {
  const teams = await db.selectFrom('teams').select('id').orderBy('id').execute();
  let deleted = 0;
  for (const { id: teamId } of teams) {
    if (deleted >= batch) break;
    const oldest = await db.selectFrom('events').select(['seq', 'at']).where('team_id', '=', teamId).orderBy('seq').limit(batch - deleted).execute();
    let last: number | undefined;
    for (const e of oldest) {
      if (e.at >= before) break;
      last = Number(e.seq);
    }
    if (last === undefined) continue;
    const end = last;
    deleted += await db.transaction().execute(async (trx) => {
      // PostgreSQL's counter is past every event already; raising it would lock it (a no-op
      // upsert locks the row too) and hold the team's commits through the delete.
      if (!hooksOf(trx).feedNumberedAtCommit) {
        await trx
          .insertInto('event_counters')
          .values({ team_id: teamId, seq: end })
          .onConflict((oc) => oc.column('team_id').doUpdateSet({ seq: end }).where('event_counters.seq', '<', end))
          .execute();
      }
      const result = await trx.deleteFrom('events').where('team_id', '=', teamId).where('seq', '<=', end).executeTakeFirst();
      return Number(result.numDeletedRows);
    });
  }
  return deleted;
}

/**
 * Brings every team's counter up to its feed's newest event on PostgreSQL, whose counters hand
 * the numbers out (after `rollcall copy` from SQLite, whose counters only keep pruned feeds'
 * ends); nothing on SQLite, which numbers from the newest event.
 */
export async function raiseCountersToFeeds(db: Db): Promise<void> {
  if (!hooksOf(db).feedNumberedAtCommit) return;
  await db.transaction().execute(async (trx) => {
    const ends = await trx.selectFrom('events').select((eb) => ['team_id', eb.fn.max('seq').as('seq')]).groupBy('team_id').execute();
    for (const end of ends) {
      const seq = Number(end.seq);
      await trx
        .insertInto('event_counters')
        .values({ team_id: end.team_id, seq })
        .onConflict((oc) => oc.column('team_id').doUpdateSet({ seq }).where('event_counters.seq', '<', seq))
        .execute();
    }
  });
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
