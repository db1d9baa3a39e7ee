/**
 * The change feed's rows (migrations 007, 011, 013 and 015): the events, the
 * per-team counter, and their pruning. What every SCIM write runs is one compiled insert
 * (statements.ts); the rest uses the query builder. bigint columns come back as strings from
 * PostgreSQL and are turned into numbers here.
 *
 * A team's seq (DESIGN.md section 8: strictly increasing, gap-free in commit order) is given by
 * the engine's FeedNumbering (storage/feed-numbering.ts): by the insert on SQLite, by the feed's
 * readers once committed on PostgreSQL. Readers see numbered events only.
 */
import type { InsertObject } from 'kysely';
import type { DialectHooks } from '../dialect.ts';
import { defineWrite, hooksOf, hot } from '../statements.ts';
import type { Database, Db, EventsTable, Executor } from '../types.ts';
import { insertAuditEvent } from './audit.ts';
import type { AuditRow } from './audit.ts';

export interface EventRow extends Omit<EventsTable, 'seq'> {
  seq: number;
}

const EVENT_KEYS = ['team_id', 'at', 'type', 'resource_type', 'resource_id', 'version', 'changed', 'actor', 'txn', 'external_id', 'data', 'members'] as const;

/**
 * The insert of one event with its seq, whatever runs it (appendEvent, or a chain's step, whose
 * values may read an earlier step's row): the seq the engine's feed numbering writes it with.
 */
export const eventInsert = (db: Db, row: Omit<InsertObject<Database, 'events'>, 'seq'>, hooks: DialectHooks) =>
  db.insertInto('events').values({ ...row, seq: hooks.feed.seqOnInsert(row.team_id) });

const APPEND_EVENT = defineWrite<Omit<EventsTable, 'seq'>>('appendEvent', EVENT_KEYS, eventInsert);

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
/** Placeholders the delivery workers' sweep numbers per team per tick. */
const SWEEP_BATCH = 10_000;

/**
 * Numbers what is committed of every team's feed (the delivery workers, each tick, and `rollcall
 * copy` before it reads a feed); answers how many teams it numbered (storage/feed-numbering.ts).
 */
export const numberFeeds = (db: Db): Promise<number> => hooksOf(db).feed.numberAll(db, SWEEP_BATCH);

/** Whether any committed event is still unnumbered (never on SQLite). */
export const anyUnnumbered = (db: Db): Promise<boolean> => hooksOf(db).feed.anyUnnumbered(db);

/** A push delivery's read: it gets rows only while `owner` holds the subscription and it is active. */
export interface ReadFor {
  readonly subscriptionId: string;
  readonly owner: string;
}

/**
 * The team's events after `after` (>= 0), oldest first, at most `limit`. A read that reaches the
 * feed's end numbers what has been committed since (FeedNumbering catchUp) and reads on, so a reader sees
 * every event committed before it asked.
 *
 * With `readFor`, each read also asks, in the same statement, that the subscription is still
 * active and leased to its owner, and answers nothing when it is not: a statement sees one
 * snapshot, so an event it returns was written before any pause it does not see. An event
 * written after a pause (or a revocation's) committed is then never handed to a send.
 */
export async function eventsAfter(ex: Executor, teamId: string, after: number, limit: number, readFor?: ReadFor): Promise<EventRow[]> {
  const read = async (from: number, n: number): Promise<EventRow[]> => {
    let query = ex.selectFrom('events').selectAll().where('team_id', '=', teamId).where('seq', '>', from);
    if (readFor !== undefined) {
      const { subscriptionId, owner } = readFor;
      query = query.where(({ exists, selectFrom }) =>
        exists(selectFrom('event_subscriptions').select('id').where('id', '=', subscriptionId).where('state', '=', 'active').where('lease_owner', '=', owner)),
      );
    }
    return (await query.orderBy('seq').limit(n).execute()).map(toRow);
  };
  const rows = await read(after, limit);
  if (rows.length >= limit) return rows;
  const end = rows.at(-1)?.seq ?? after;
  const last = await hooksOf(ex).feed.catchUp(ex, teamId, READER_BATCH);
  if (last === undefined || last <= end) return rows;
  return [...rows, ...(await read(end, limit - rows.length))];
}

/** The team's last seq handed out (0 before its first event), once what is committed is numbered. */
export const lastSeq = (ex: Executor, teamId: string): Promise<number> => hooksOf(ex).feed.lastSeq(ex, teamId, SWEEP_BATCH);

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
export async function firstKeptSeq(ex: Executor, teamId: string): Promise<number | undefined> {
  const row = await ex.selectFrom('events').select((eb) => eb.fn.min('seq').as('seq')).where('team_id', '=', teamId).where('seq', '>', 0).executeTakeFirst();
  return row?.seq === null || row?.seq === undefined ? undefined : Number(row.seq);
}

/**
 * Deletes up to `batch` events older than `before`, team by team: a team's events are numbered
 * once committed, in the order they were written, so those past the retention are a prefix of its feed, found
 * by walking its primary key from the start (migration 011 dropped the index on `at`) and
 * deleted as one seq range. The prefix ends at the first event still kept, so what remains has
 * no holes. What is committed is numbered first (FeedNumbering catchUp, PostgreSQL): an event nobody had
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
    await hooksOf(db).feed.catchUp(db, teamId, READER_BATCH);
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
