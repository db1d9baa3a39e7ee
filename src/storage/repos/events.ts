/**
 * The change feed's rows (issue 10 item 1; migrations 007 and 011): the per-team counter, the events, and
 * their pruning. The two statements every SCIM write runs (bump the counter, insert the event)
 * are compiled once (statements.ts); the rest uses the query builder. bigint columns come back
 * as strings from PostgreSQL and are turned into numbers here.
 */
import { defineStatement, hooksOf, hot } from '../statements.ts';
import type { EventsTable, Executor } from '../types.ts';

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
 * The same two writes as one statement where the engine takes an INSERT inside WITH: the
 * counter bump feeds the event's seq through a scalar subquery (a data-modifying WITH runs
 * exactly once). One round trip instead of two on PostgreSQL, and the counter row's lock, which
 * the team's next writer waits on, is taken one round trip before the commit instead of two.
 */
const APPEND_EVENT = defineStatement<EventsTable, { seq: number | string }>(
  'appendEvent',
  ['team_id', 'at', 'type', 'resource_type', 'resource_id', 'version', 'changed', 'actor', 'txn', 'external_id', 'data', 'members'],
  (db, row) =>
    db
      .with('next_seq', (w) =>
        w
          .insertInto('event_counters')
          .values({ team_id: row.team_id, seq: 1 })
          .onConflict((oc) => oc.column('team_id').doUpdateSet((eb) => ({ seq: eb('event_counters.seq', '+', 1) })))
          .returning('seq'),
      )
      .insertInto('events')
      .values((eb) => ({ ...row, seq: eb.selectFrom('next_seq').select('next_seq.seq') }))
      .returning('seq'),
);

/** Appends one event with the team's next seq (in the caller's transaction); answers the seq. */
export async function appendEvent(ex: Executor, row: Omit<EventsTable, 'seq'>): Promise<number> {
  const st = hot(ex);
  if (hooksOf(ex).writableCtes) {
    const appended = await st.first(ex, APPEND_EVENT, { ...row, seq: 0 });
    if (!appended) throw new Error('the event insert did not answer');
    return Number(appended.seq);
  }
  const counter = await st.first(ex, NEXT_SEQ, { team_id: row.team_id });
  if (!counter) throw new Error('event counter did not answer');
  const seq = Number(counter.seq);
  await st.run(ex, INSERT_EVENT, { ...row, seq });
  return seq;
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
