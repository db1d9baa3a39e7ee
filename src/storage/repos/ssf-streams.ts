/**
 * SSF 1.0 streams as storage keeps them (migration 025): a stream is a row of
 * `event_subscriptions` of format `ssf` with its configuration in `ssf` (JSON), and the subjects
 * its receiver added or removed are rows of `ssf_subjects` (a stream carries every user of its
 * team by default; a row with `included` 0 removes one, a row with `included` 1, added back, is
 * the default again). Plain functions over Kysely; the rules
 * (what a stream may be changed to, which subjects resolve to which users) live in events/ssf.
 */
import { hooksOf } from '../statements.ts';
import { predicateSql, ROW } from '../predicate-sql.ts';
import type { Predicate } from '../predicate.ts';
import type { EventSubscriptionsTable, Executor } from '../types.ts';
import type { SubscriptionRow } from './subscriptions.ts';

const toRow = (r: EventSubscriptionsTable): SubscriptionRow => ({ ...r, cursor: Number(r.cursor) });

/** The team's streams, oldest first. */
export async function streamsOfTeam(ex: Executor, teamId: string): Promise<SubscriptionRow[]> {
  const rows = await ex.selectFrom('event_subscriptions').selectAll().where('team_id', '=', teamId).where('format', '=', 'ssf').orderBy('created_at').orderBy('id').execute();
  return rows.map(toRow);
}

/** The team's stream `id` (undefined when the team has none of that id, or it is no stream). */
export async function streamById(ex: Executor, teamId: string, id: string): Promise<SubscriptionRow | undefined> {
  const row = await ex.selectFrom('event_subscriptions').selectAll().where('team_id', '=', teamId).where('id', '=', id).where('format', '=', 'ssf').executeTakeFirst();
  return row ? toRow(row) : undefined;
}

export type StreamChange = Partial<Pick<EventSubscriptionsTable, 'method' | 'url' | 'ssf' | 'state' | 'paused_reason' | 'cursor' | 'failures' | 'failing_since' | 'next_attempt_at' | 'updated_at' | 'creator_token' | 'creator_user' | 'lease_owner' | 'lease_until'>>;

/** Changes the team's stream `id`; false when there is none. */
export async function updateStream(ex: Executor, teamId: string, id: string, change: StreamChange): Promise<boolean> {
  const result = await ex.updateTable('event_subscriptions').set(change).where('team_id', '=', teamId).where('id', '=', id).where('format', '=', 'ssf').executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Marks users as added (`included` 1) to or removed (0) from a stream, replacing an earlier mark. */
export async function markSubjects(ex: Executor, stream: { id: string; teamId: string }, userIds: readonly string[], included: 0 | 1, at: string): Promise<void> {
  if (userIds.length === 0) return;
  await ex
    .insertInto('ssf_subjects')
    .values(userIds.map((userId) => ({ subscription_id: stream.id, team_id: stream.teamId, user_id: userId, included, created_at: at })))
    .onConflict((oc) => oc.columns(['subscription_id', 'user_id']).doUpdateSet({ included, created_at: at }))
    .execute();
}

/** A stream's marked subjects (user id and whether it is included). */
export async function subjectsOf(ex: Executor, streamId: string): Promise<{ user_id: string; included: number }[]> {
  return ex.selectFrom('ssf_subjects').select(['user_id', 'included']).where('subscription_id', '=', streamId).orderBy('user_id').execute();
}

/**
 * Which of `userIds` the stream's receiver removed (at most as many as asked about): read by
 * delivery per batch of feed rows with the users of that batch only, so the read is bounded by
 * the batch (primary key lookups), whatever the number of subjects the receiver removed.
 */
export async function removedAmong(ex: Executor, subscriptionId: string, userIds: readonly string[]): Promise<string[]> {
  if (userIds.length === 0) return [];
  const rows = await ex.selectFrom('ssf_subjects').select('user_id').where('subscription_id', '=', subscriptionId).where('user_id', 'in', [...userIds]).where('included', '=', 0).execute();
  return rows.map((r) => r.user_id);
}

/** Forgets a stream's subjects (the stream is deleted). */
export async function deleteSubjectsOf(ex: Executor, streamId: string): Promise<void> {
  await ex.deleteFrom('ssf_subjects').where('subscription_id', '=', streamId).execute();
}

/** The ids of the team's users (not deleted) that satisfy `where`, at most `limit` of them. */
export async function userIdsWhere(ex: Executor, teamId: string, where: Predicate, limit: number): Promise<string[]> {
  const rows = await ex
    .selectFrom(`users as ${ROW}`)
    .select(`${ROW}.id as id`)
    .where(`${ROW}.team_id`, '=', teamId)
    .where(`${ROW}.deleted_at`, 'is', null)
    .where(predicateSql(hooksOf(ex), 'users', where))
    .orderBy(`${ROW}.id`)
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Replaces a stream's configuration only if it still is `expected` (the one the caller read):
 * false when another change replaced it first (compare-and-set, as webhook secret rotation).
 */
export async function replaceStreamConfig(ex: Executor, id: string, expected: string, next: string): Promise<boolean> {
  const result = await ex.updateTable('event_subscriptions').set({ ssf: next }).where('id', '=', id).where('ssf', '=', expected).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * The team's stream `id`, read after its row is locked for the rest of the transaction (a write
 * that changes nothing takes the row lock on PostgreSQL and the write lock on SQLite): two
 * changes of one stream's configuration (an update and a status change) cannot both read the same
 * configuration and the second write back what the first replaced.
 */
export async function streamForUpdate(ex: Executor, teamId: string, id: string): Promise<SubscriptionRow | undefined> {
  await ex.updateTable('event_subscriptions').set((eb) => ({ ssf: eb.ref('ssf') })).where('team_id', '=', teamId).where('id', '=', id).where('format', '=', 'ssf').execute();
  return streamById(ex, teamId, id);
}
