/**
 * The change feed's rows (issue 10 item 1; migrations 007, 011 and 013): the per-team counter, the
 * events, and their pruning. What every SCIM write runs (SQLite: bump the counter, insert the
 * event; PostgreSQL: insert the event, numbered at COMMIT) is compiled once (statements.ts); the
 * rest uses the query builder. bigint columns come back
 * as strings from PostgreSQL and are turned into numbers here.
 */
import { sql } from 'kysely';
import { defineStatement, hooksOf, hot } from '../statements.ts';
import type { EventsTable, Executor } from '../types.ts';
import { insertAuditEvent } from './audit.ts';
import type { AuditRow } from './audit.ts';

export interface EventRow extends Omit<EventsTable, 'seq'> {
  seq: number;
}

/**
 * Takes the team's next sequence number: one upsert that creates the counter row at 1 or bumps
 * it. On PostgreSQL the row stays locked until the transaction ends, so the next writer of the
 * team waits and gets the following number only once this one committed or rolled back.
 */
const NEXT_SEQ = defineStatement<{ team_id: string }, { seq: number | string }>('nextEventSeq', ['team_id'], (db, p) =>
  db
    .insertInto('event_counters')
    .values({ team_id: p.team_id, seq: 1 })
    .onConflict((oc) => oc.column('team_id').doUpdateSet((eb) => ({ seq: eb('event_counters.seq', '+', 1) })))
    .returning('seq'),
);

const INSERT_EVENT = defineStatement<EventsTable, unknown>(
  'insertEvent',
  ['team_id', 'seq', 'at', 'type', 'resource_type', 'resource_id', 'version', 'changed', 'actor', 'txn', 'external_id', 'data', 'members'],
  (db, row) => db.insertInto('events').values(row),
);

/**
 * The event alone, with a placeholder seq (negative, never a real number), where the database
 * numbers it at COMMIT (migration 013, PostgreSQL): the team's counter row is locked only for
 * the commit, not from this statement to it.
 */
const INSERT_UNNUMBERED = defineStatement<Omit<EventsTable, 'seq'>, unknown>(
  'appendEvent',
  ['team_id', 'at', 'type', 'resource_type', 'resource_id', 'version', 'changed', 'actor', 'txn', 'external_id', 'data', 'members'],
  (db, row) => db.insertInto('events').values({ ...row, seq: sql<number>`-nextval('event_placeholders')` }),
);

/**
 * Appends one event to the team's feed in the caller's transaction. Its seq is the team's next
 * one when the transaction commits: taken here on SQLite (one writer at a time), at COMMIT on
 * PostgreSQL (DialectHooks.feedNumberedAtCommit); read it back with eventsAfter.
 */
export async function appendEvent(ex: Executor, row: Omit<EventsTable, 'seq'>): Promise<void> {
  const st = hot(ex);
  if (hooksOf(ex).feedNumberedAtCommit) {
    await st.run(ex, INSERT_UNNUMBERED, row);
    return;
  }
  const counter = await st.first(ex, NEXT_SEQ, { team_id: row.team_id });
  if (!counter) throw new Error('event counter did not answer');
  await st.run(ex, INSERT_EVENT, { ...row, seq: Number(counter.seq) });
}

/** An audit row and a feed event, as appendAuditedEvent takes them in one parameter list. */
type AuditedEventParams = { [K in keyof AuditRow as `audit_${K}`]: AuditRow[K] } & Omit<EventsTable, 'seq'>;

const AUDIT_KEYS = ['id', 'team_id', 'at', 'actor', 'request_id', 'action', 'resource_type', 'resource_id', 'detail'] as const;
const EVENT_KEYS = ['team_id', 'at', 'type', 'resource_type', 'resource_id', 'version', 'changed', 'actor', 'txn', 'external_id', 'data', 'members'] as const;

/**
 * A write's audit row and its feed event in one statement where the event is numbered at COMMIT
 * and a WITH may hold an INSERT (PostgreSQL): a data-modifying WITH runs whether or not the
 * statement reads it. One round trip for what took two.
 */
const APPEND_AUDITED_EVENT = defineStatement<AuditedEventParams, unknown>(
  'appendAuditedEvent',
  [...AUDIT_KEYS.map((k) => `audit_${k}` as const), ...EVENT_KEYS],
  (db, p) =>
    db
      .with('audit', (w) => w.insertInto('audit_events').values(Object.fromEntries(AUDIT_KEYS.map((k) => [k, p[`audit_${k}`]])) as unknown as AuditRow))
      .insertInto('events')
      .values({ ...(Object.fromEntries(EVENT_KEYS.map((k) => [k, p[k]])) as unknown as Omit<EventsTable, 'seq'>), seq: sql<number>`-nextval('event_placeholders')` }),
);

/**
 * A SCIM write's audit row and its feed event, in the caller's transaction: one statement on
 * PostgreSQL (APPEND_AUDITED_EVENT), the two inserts (and the counter bump) on SQLite, where a
 * statement costs no round trip.
 */
export async function appendAuditedEvent(ex: Executor, audit: AuditRow, event: Omit<EventsTable, 'seq'>): Promise<void> {
  const hooks = hooksOf(ex);
  if (hooks.feedNumberedAtCommit && hooks.writableCtes) {
    const params = { ...event } as Record<string, unknown>;
    for (const k of AUDIT_KEYS) params[`audit_${k}`] = audit[k];
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

/** The team's last seq handed out (0 before its first event). */
export async function lastSeq(ex: Executor, teamId: string): Promise<number> {
  const row = await ex.selectFrom('event_counters').select('seq').where('team_id', '=', teamId).executeTakeFirst();
  return row ? Number(row.seq) : 0;
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
 * range. The prefix ends at the first event still kept, so what remains has no holes.
 */
export async function pruneEvents(ex: Executor, before: string, batch: number): Promise<number> {
  const teams = await ex.selectFrom('event_counters').select('team_id').orderBy('team_id').execute();
  let deleted = 0;
  for (const { team_id } of teams) {
    if (deleted >= batch) break;
    const oldest = await ex.selectFrom('events').select(['seq', 'at']).where('team_id', '=', team_id).orderBy('seq').limit(batch - deleted).execute();
    let last: number | undefined;
    for (const e of oldest) {
      if (e.at >= before) break;
      last = Number(e.seq);
    }
    if (last === undefined) continue;
    const result = await ex.deleteFrom('events').where('team_id', '=', team_id).where('seq', '<=', last).executeTakeFirst();
    deleted += Number(result.numDeletedRows);
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
