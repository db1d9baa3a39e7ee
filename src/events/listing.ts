/**
 * The plain JSON listing of the feed: `GET /v2/events?after=SEQ&
 * limit=N` answers the team's events after SEQ in seq order, at most N, with the cursor to ask
 * with next. Because seq is gap-free and an event is numbered only once committed, never below
 * one a reader has seen (repos/events.ts), a client that always asks with the last seq it saw
 * never misses an event and never sees one twice. Asking for events that retention already
 * pruned is a 410, so a client learns it must resynchronise instead of silently skipping
 * changes. It owns no SQL and no HTTP.
 */
import { invalidValue, pruned } from './errors.ts';
import { eventsAfter, feedEnds } from '../storage/repos/events.ts';
import { isScimEvent } from './feed.ts';
import type { EventRow } from '../storage/repos/events.ts';
import type { Executor } from '../storage/types.ts';
import { ASYNC_RESPONSE, asyncOutcomeOf } from './feed.ts';
import type { AsyncOutcome, ChangeType } from './feed.ts';
import { eventUri } from './set.ts';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

export interface EventView {
  readonly seq: number;
  readonly at: string;
  /** The RFC 9967 event URI (the `:notice` variant). */
  readonly event: string;
  readonly change: string;
  readonly resourceType: string;
  readonly id: string;
  readonly externalId: string | null;
  /** The ETag after the change (an asyncresp event's only when its outcome has one). */
  readonly version?: string;
  readonly changed: readonly string[];
  readonly members?: unknown;
  readonly actor: unknown;
  readonly txn: string | null;
  /** An asyncresp event's outcome (RFC 9967 section 2.5.1.3: method, bulkId, version, location, status, response). */
  readonly outcome?: AsyncOutcome;
}

export interface EventPage {
  readonly events: readonly EventView[];
  /** The `after` to ask with next. */
  readonly next: number;
  /** Whether more events were already there when this page was read. */
  readonly more: boolean;
}

/**
 * An asyncresp row's view: `change` 'asyncresp', the resource (`id` '' when the write created
 * nothing), `version` the outcome's (absent when it has none), and the outcome itself.
 */
function asyncView(row: EventRow): EventView {
  const outcome = asyncOutcomeOf(row);
  return {
    seq: row.seq,
    at: row.at,
    event: eventUri(ASYNC_RESPONSE, false),
    change: row.type,
    resourceType: row.resource_type,
    id: row.resource_id,
    externalId: null,
    ...(outcome.version !== undefined ? { version: outcome.version } : {}),
    changed: [],
    actor: JSON.parse(row.actor) as unknown,
    txn: row.txn,
    outcome,
  };
}

export const viewOf = (row: EventRow): EventView => (row.type === ASYNC_RESPONSE ? asyncView(row) : {
  seq: row.seq,
  at: row.at,
  event: eventUri(row.type as ChangeType, false),
  change: row.type,
  resourceType: row.resource_type,
  id: row.resource_id,
  externalId: row.external_id,
  version: `W/"${row.version}"`,
  changed: JSON.parse(row.changed) as string[],
  ...(row.members ? { members: JSON.parse(row.members) as unknown } : {}),
  actor: JSON.parse(row.actor) as unknown,
  txn: row.txn,
});

/** A whole number from a query parameter, or a 400 naming it. */
export function queryInteger(name: string, raw: unknown, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  if (typeof raw !== 'string' || !/^\d{1,16}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw invalidValue(`${name} must be a whole number from ${min} to ${max}`);
  }
  return Number(raw);
}

/** Throws 410 when events after `after` were pruned (the client cannot continue from there). */
export async function assertNotPruned(ex: Executor, teamId: string, after: number): Promise<void> {
  const { firstKept: first, lastSeq: last } = await feedEnds(ex, teamId);
  const gone = first === undefined ? last > after : first > after + 1;
  if (gone) {
    throw pruned(`events after ${after} were pruned by the retention; the oldest kept is ${first ?? 'none'}: read the resources again, then follow from the latest seq`);
  }
}

export async function listEvents(ex: Executor, teamId: string, after: number, limit: number): Promise<EventPage> {
  const rows = await eventsAfter(ex, teamId, after, limit + 1);
  if (rows.length === 0) await assertNotPruned(ex, teamId, after);
  else if (rows[0]!.seq !== after + 1) await assertNotPruned(ex, teamId, after);
  const page = rows.slice(0, limit);
  // A team with SSF streams has Shared Signal rows in its feed: the listing passes over them (its
  // seqs then skip theirs), and `next` follows the last row read, shown or not.
  return { events: page.filter(isScimEvent).map(viewOf), next: page.at(-1)?.seq ?? after, more: rows.length > limit };
}
