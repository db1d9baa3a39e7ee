/**
 * Event subscriptions and their delivery log (migration 007). A
 * subscription's cursor moves only by compare-and-set (`from` the value the mover read), so a
 * delivery racing a replay or another instance never moves it backwards or past an event. The
 * lease (owner, until) is taken by a conditional UPDATE that succeeds for one instance only,
 * on both engines; an expired lease (its instance died) is taken over the same way.
 */
import { defineChain, runChain } from '../chain.ts';
import { defineStatement, hooksIfAny, hot } from '../statements.ts';
import type { Db, EventAttemptsTable, EventSubscriptionsTable, Executor } from '../types.ts';

export interface SubscriptionRow extends Omit<EventSubscriptionsTable, 'cursor'> {
  cursor: number;
}

const toRow = (r: EventSubscriptionsTable): SubscriptionRow => ({ ...r, cursor: Number(r.cursor) });

export async function insertSubscription(ex: Executor, row: SubscriptionRow): Promise<void> {
  await ex.insertInto('event_subscriptions').values(row).execute();
}

/**
 * How many subscriptions of a kind the team holds, counted after its row is locked for the rest
 * of the transaction (a write that changes nothing takes the row lock on PostgreSQL and the write
 * lock on SQLite): two creations of one team cannot both count below its cap. SSF streams
 * (format `ssf`) count against their own budget (`ssf.streams`), the other subscriptions against
 * `subscriptions`.
 */
export async function countSubscriptionsLocked(ex: Executor, teamId: string, kind: 'streams' | 'subscriptions'): Promise<number> {
  await ex.updateTable('teams').set((eb) => ({ limits: eb.ref('limits') })).where('id', '=', teamId).execute();
  const row = await ex
    .selectFrom('event_subscriptions')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('team_id', '=', teamId)
    .where('format', kind === 'streams' ? '=' : '!=', 'ssf')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function subscriptionsOfTeam(ex: Executor, teamId: string): Promise<SubscriptionRow[]> {
  return (await ex.selectFrom('event_subscriptions').selectAll().where('team_id', '=', teamId).orderBy('created_at').orderBy('id').execute()).map(toRow);
}

export async function subscriptionById(ex: Executor, teamId: string, id: string): Promise<SubscriptionRow | undefined> {
  const row = await ex.selectFrom('event_subscriptions').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
  return row ? toRow(row) : undefined;
}

export async function subscriptionBySecret(ex: Executor, secretHash: string): Promise<SubscriptionRow | undefined> {
  const row = await ex.selectFrom('event_subscriptions').selectAll().where('secret_hash', '=', secretHash).executeTakeFirst();
  return row ? toRow(row) : undefined;
}

export async function deleteSubscription(ex: Executor, teamId: string, id: string): Promise<boolean> {
  const result = await ex.deleteFrom('event_subscriptions').where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
  await ex.deleteFrom('event_attempts').where('subscription_id', '=', id).execute();
  await ex.deleteFrom('ssf_subjects').where('subscription_id', '=', id).execute();
  return Number(result.numDeletedRows) > 0;
}

export type SubscriptionChange = Partial<
  Pick<EventSubscriptionsTable, 'state' | 'paused_reason' | 'failures' | 'failing_since' | 'next_attempt_at' | 'updated_at' | 'cursor' | 'creator_token' | 'creator_user' | 'webhook_secret' | 'webhook_previous_secret' | 'webhook_previous_until'>
>;

export async function updateSubscription(ex: Executor, teamId: string, id: string, change: SubscriptionChange): Promise<boolean> {
  const result = await ex.updateTable('event_subscriptions').set(change).where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Replaces a webhook subscription's secret only if it still is `expected` (the one the caller
 * read): false when another rotation replaced it first. Compare-and-set, so two rotations
 * reading the same row under READ COMMITTED cannot both win.
 */
export async function replaceWebhookSecret(ex: Executor, teamId: string, id: string, expected: string | null, change: SubscriptionChange): Promise<boolean> {
  const result = await ex
    .updateTable('event_subscriptions')
    .set(change)
    .where('team_id', '=', teamId)
    .where('id', '=', id)
    .where((eb) => (expected === null ? eb('webhook_secret', 'is', null) : eb('webhook_secret', '=', expected)))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** A webhook subscription's sealed secrets (migration 022), read at each attempt so a rotation signs the next one. */
export async function webhookSecretsOf(ex: Executor, id: string): Promise<Pick<EventSubscriptionsTable, 'webhook_secret' | 'webhook_previous_secret' | 'webhook_previous_until'> | undefined> {
  return ex.selectFrom('event_subscriptions').select(['webhook_secret', 'webhook_previous_secret', 'webhook_previous_until']).where('id', '=', id).executeTakeFirst();
}

/** A due subscription with its team's budget overrides (teams.limits), which its delivery spends. */
export interface DueSubscription extends SubscriptionRow {
  readonly team_limits: string | null;
}

export interface DueQuery {
  readonly now: string;
  readonly limit: number;
  /** At most this many of one team. */
  readonly perTeam: number;
  /** Teams left out (the caller holds enough of theirs). */
  readonly skipTeams: readonly string[];
}

/**
 * Push subscriptions that are active, due, not leased (or whose lease expired), and behind their
 * team's feed: at most `perTeam` of a team, the teams interleaved (each team's most overdue
 * first, then each team's second...), so that one team's many subscriptions never fill the list.
 */
export async function dueSubscriptions(ex: Executor, q: DueQuery): Promise<DueSubscription[]> {
  let due = ex
    .selectFrom('event_subscriptions as s')
    .innerJoin('teams as t', 't.id', 's.team_id')
    .selectAll('s')
    .select((eb) => ['t.limits as team_limits', eb.fn.agg<number>('row_number').over((ob) => ob.partitionBy('s.team_id').orderBy('s.next_attempt_at').orderBy('s.id')).as('rank_in_team')])
    .where('s.method', '=', 'push')
    .where('s.state', '=', 'active')
    .where('s.next_attempt_at', '<=', q.now)
    .where((eb) => eb.or([eb('s.lease_until', 'is', null), eb('s.lease_until', '<', q.now)]))
    // Behind the feed's newest event (one step down the team's primary key).
    .where((eb) => eb('s.cursor', '<', eb.selectFrom('events as e').select((e) => e.fn.max('e.seq').as('newest')).whereRef('e.team_id', '=', 's.team_id')));
  if (q.skipTeams.length > 0) due = due.where('s.team_id', 'not in', q.skipTeams);
  const rows = await ex.selectFrom(due.as('d')).selectAll('d').where('d.rank_in_team', '<=', q.perTeam).orderBy('d.rank_in_team').orderBy('d.next_attempt_at').limit(q.limit).execute();
  return rows.map(({ rank_in_team: _rank, ...r }) => ({ ...toRow(r), team_limits: r.team_limits ?? null }));
}

/** Takes the lease if it is free or expired; true for exactly one of several instances racing. */
export async function claimLease(ex: Executor, id: string, owner: string, now: string, until: string): Promise<boolean> {
  const result = await ex
    .updateTable('event_subscriptions')
    .set({ lease_owner: owner, lease_until: until })
    .where('id', '=', id)
    .where('state', '=', 'active')
    // Still due: another instance may have failed it (and set a later retry) since it was listed.
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Extends a lease this owner still holds; false when it lost it (expired and taken over). */
export async function renewLease(ex: Executor, id: string, owner: string, now: string, until: string): Promise<boolean> {
  const result = await ex
    .updateTable('event_subscriptions')
    .set({ lease_until: until })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .where('lease_until', '>=', now)
    .where('state', '=', 'active')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function releaseLease(ex: Executor, id: string, owner: string): Promise<void> {
  await ex.updateTable('event_subscriptions').set({ lease_owner: null, lease_until: null }).where('id', '=', id).where('lease_owner', '=', owner).execute();
}

export type AttemptRow = Omit<EventAttemptsTable, 'seq'> & { seq: number };

const ATTEMPT_COLUMNS = ['id', 'subscription_id', 'seq', 'at', 'status', 'latency_ms', 'error'] as const satisfies readonly (keyof AttemptRow)[];

/** A delivery attempt's insert (its columns picked from `p`, which may hold more). */
const insertAttemptQuery = (db: Db, p: AttemptRow) =>
  db.insertInto('event_attempts').values({ id: p.id, subscription_id: p.subscription_id, seq: p.seq, at: p.at, status: p.status, latency_ms: p.latency_ms, error: p.error });

interface Advance {
  readonly id: string;
  readonly owner: string;
  readonly from: number;
  readonly to: number;
  readonly now: string;
  readonly until: string;
}

// One statement per delivered event: the cursor moves, the lease is extended, and the answer
// tells whether the subscription is still active (an administrator may have paused it meanwhile).
const advanceCursorQuery = (db: Db, p: Advance) =>
  db
    .updateTable('event_subscriptions')
    .set({ cursor: p.to, failures: 0, failing_since: null, updated_at: p.now, lease_until: p.until })
    .where('id', '=', p.id)
    .where('lease_owner', '=', p.owner)
    .where('lease_until', '>=', p.now)
    .where('cursor', '=', p.from)
    .returning('state');

const ADVANCE_CURSOR = defineStatement<Advance, { state: string }>('advanceCursor', ['to', 'now', 'until', 'id', 'owner', 'from'], advanceCursorQuery);

// The attempt logged and the cursor moved together (chain.ts): on PostgreSQL one statement, one
// round trip, atomic as one statement is.
const DELIVERED = defineChain<AttemptRow & Omit<Advance, 'id'>, { state: string }>(
  'recordDelivered',
  [...ATTEMPT_COLUMNS, 'to', 'now', 'until', 'owner', 'from'],
  [
    { name: 'insertAttempt', build: (db, p) => insertAttemptQuery(db, p) },
    { name: 'advanceCursor', build: (db, p) => advanceCursorQuery(db, { ...p, id: p.subscription_id }) },
  ],
);

/**
 * A delivered event: its attempt logged and the cursor advanced (advanceCursor) together, in one
 * statement on PostgreSQL, in one transaction on SQLite. Answers what advanceCursor answers.
 */
export async function recordDelivered(db: Db, attempt: AttemptRow, advance: Omit<Advance, 'id'>): Promise<string | undefined> {
  return (await runChain(db, DELIVERED, { ...attempt, ...advance }))?.state;
}

/**
 * Moves the cursor from `from` to `to` while `owner` holds an unexpired lease, and extends the
 * lease to `until`. Answers the subscription's state ('active', 'paused'), or undefined when the
 * owner lost the lease or something else moved the cursor meanwhile (a replay).
 */
export async function advanceCursor(ex: Executor, advance: Advance): Promise<string | undefined> {
  return (await hot(ex).first(ex, ADVANCE_CURSOR, advance))?.state;
}

/** Moves a poll subscription's cursor from `from` to `to` (acknowledgements). */
export async function moveCursor(ex: Executor, id: string, from: number, to: number, updatedAt: string): Promise<boolean> {
  const result = await ex.updateTable('event_subscriptions').set({ cursor: to, updated_at: updatedAt }).where('id', '=', id).where('cursor', '=', from).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records a failed attempt while `owner` holds the lease: the retry time, or the pause. */
export async function recordFailure(ex: Executor, id: string, owner: string, change: SubscriptionChange): Promise<void> {
  await ex.updateTable('event_subscriptions').set(change).where('id', '=', id).where('lease_owner', '=', owner).execute();
}

const INSERT_ATTEMPT = defineStatement<AttemptRow, unknown>('insertAttempt', ATTEMPT_COLUMNS, insertAttemptQuery);

export async function insertAttempt(ex: Executor, row: AttemptRow): Promise<void> {
  await hot(ex).run(ex, INSERT_ATTEMPT, row);
}

/** The latest attempts of a subscription, newest first. */
export async function attemptsOf(ex: Executor, subscriptionId: string, limit: number): Promise<AttemptRow[]> {
  const rows = await ex.selectFrom('event_attempts').selectAll().where('subscription_id', '=', subscriptionId).orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
}

/** A page of a subscription's delivery log, newest first, before the (at, id) position when given. */
export async function attemptsPage(ex: Executor, subscriptionId: string, limit: number, before?: { at: string; id: string }): Promise<AttemptRow[]> {
  let query = ex.selectFrom('event_attempts').selectAll().where('subscription_id', '=', subscriptionId);
  if (before) query = query.where((eb) => eb.or([eb('at', '<', before.at), eb.and([eb('at', '=', before.at), eb('id', '<', before.id)])]));
  const rows = await query.orderBy('at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
}

/**
 * Whether the team has an SSF stream (a subscription of format `ssf`, migration 025): a SCIM
 * write appends Shared Signals (events/feed.ts appendSignal) only then. Read in the write's
 * transaction; a stream created at the same moment starts after the write's event.
 */
export async function teamHasStreams(ex: Executor, teamId: string): Promise<boolean> {
  const row = await ex.selectFrom('event_subscriptions').select('id').where('team_id', '=', teamId).where('format', '=', 'ssf').limit(1).executeTakeFirst();
  return row !== undefined;
}

/**
 * teamHasStreams for a write about to derive Shared Signals, read after a share lock on the
 * team's row where the engine locks rows (PostgreSQL; SQLite runs one write at a time). A
 * stream's creation updates that row first (countSubscriptionsLocked) and takes its cursor (the feed's
 * last seq) after it, so the two take turns: either the creation waits for this write, and the
 * write's events are numbered at or before the new stream's cursor (not its to carry), or this
 * write waits for the creation and then sees the stream. Without the lock, a write that read "no
 * stream" before the creation committed could commit after it: its event numbered after the
 * stream's cursor, with no signal for the stream.
 */
export async function teamHasStreamsForWrite(ex: Executor, teamId: string): Promise<boolean> {
  if (hooksIfAny(ex)?.rowLocks) await ex.selectFrom('teams').select('id').where('id', '=', teamId).forShare().execute();
  return teamHasStreams(ex, teamId);
}

/** A stream's configuration and delivery as stored now (`ssf`, `method`, `url`; undefined when the subscription is gone): re-read by delivery per batch. */
export async function streamConfigText(ex: Executor, id: string): Promise<Pick<SubscriptionRow, 'ssf' | 'method' | 'url'> | undefined> {
  return ex.selectFrom('event_subscriptions').select(['ssf', 'method', 'url']).where('id', '=', id).executeTakeFirst();
}
