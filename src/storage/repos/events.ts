/**
 * The change feed's rows (issue 10 item 1; migration 007): the per-team counter, the events, and
 * their pruning. The two statements every SCIM write runs (bump the counter, insert the event)
 * are compiled once (statements.ts); the rest uses the query builder. bigint columns come back
 * as strings from PostgreSQL and are turned into numbers here.
 */
import { defineStatement, hot } from '../statements.ts';
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

/** Appends one event with the team's next seq (in the caller's transaction); answers the seq. */
export async function appendEvent(ex: Executor, row: Omit<EventsTable, 'seq'>): Promise<number> {
  const st = hot(ex);
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

/** Deletes up to `batch` events older than `before`; answers how many went. */
export async function pruneEvents(ex: Executor, before: string, batch: number): Promise<number> {
  const victims = await ex.selectFrom('events').select(['team_id', 'seq']).where('at', '<', before).orderBy('at').limit(batch).execute();
  if (victims.length === 0) return 0;
  const byTeam = new Map<string, number[]>();
  for (const v of victims) (byTeam.get(v.team_id) ?? byTeam.set(v.team_id, []).get(v.team_id)!).push(Number(v.seq));
  let deleted = 0;
  for (const [teamId, seqs] of byTeam) {
    const result = await ex.deleteFrom('events').where('team_id', '=', teamId).where('seq', 'in', seqs).executeTakeFirst();
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
