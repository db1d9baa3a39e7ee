/**
 * SSF streams and Shared Signals written straight to the database, for the delivery tests of
 * issue 33 (the stream management API and the signals' derivation are tested on their own): a
 * stream row as the contract describes it (event_subscriptions of format `ssf`, its StreamConfig
 * JSON, cursor at the team's feed end), a signal appended with feed.ts appendSignal in its own
 * transaction, a subject removed or added back (ssf_subjects).
 */
import { iso } from '../../src/clock.ts';
import { newId } from '../../src/ids.ts';
import { masterKey } from '../../src/keys/master.ts';
import { SecretBox } from '../../src/keys/sealed.ts';
import { appendSignal } from '../../src/events/feed.ts';
import { sealAuthorization, STREAM_SECRETS } from '../../src/events/stream-config.ts';
import type { StreamConfig } from '../../src/events/stream-config.ts';
import { lastSeq } from '../../src/storage/repos/events.ts';
import { insertSubscription } from '../../src/storage/repos/subscriptions.ts';
import { transact } from '../../src/storage/statements.ts';
import { TEST_SECRET_KEY } from './app.ts';
import type { TestApp } from './app.ts';

export const RISC = 'https://schemas.openid.net/secevent/risc/event-type';
export const ACCOUNT_DISABLED = `${RISC}/account-disabled`;
export const ACCOUNT_ENABLED = `${RISC}/account-enabled`;
export const VERIFICATION = 'https://schemas.openid.net/secevent/ssf/event-type/verification';

/** The box the app opens streams' Authorization headers with (the test instance secret). */
export const streamBox = (t: TestApp): SecretBox => new SecretBox(masterKey({ secretKey: TEST_SECRET_KEY, database: { engine: t.storage.hooks.name, sqlitePath: undefined } }), STREAM_SECRETS);

export interface StreamOptions {
  readonly id?: string;
  readonly teamId?: string;
  readonly method?: 'push' | 'poll';
  /** The receiver's URL (push). */
  readonly url?: string;
  readonly aud?: string;
  readonly events?: readonly string[];
  /** The receiver's Authorization header, sealed as the stream API stores it. */
  readonly authorization?: string;
  /** The sealed text as stored, as is (an unreadable one, for a test). */
  readonly sealedAuthorization?: string;
}

/** Inserts an enabled stream starting at the team's feed end; answers its id. */
export async function insertStream(t: TestApp, options: StreamOptions = {}): Promise<string> {
  const id = options.id ?? newId();
  const teamId = options.teamId ?? t.team.id;
  const events = options.events ?? [ACCOUNT_DISABLED, ACCOUNT_ENABLED];
  const sealed = options.authorization !== undefined ? sealAuthorization(streamBox(t), id, options.authorization) : options.sealedAuthorization;
  const config: StreamConfig = {
    aud: options.aud ?? 'https://receiver.example',
    eventsRequested: events,
    eventsDelivered: events,
    status: 'enabled',
    ...(sealed !== undefined ? { authorizationHeader: sealed } : {}),
  };
  const now = iso(t.clock);
  const method = options.method ?? 'push';
  await insertSubscription(t.storage.db, {
    id, team_id: teamId, method, url: method === 'push' ? (options.url ?? null) : null, events: null, full: 0, state: 'active', paused_reason: null,
    cursor: await lastSeq(t.storage.db, teamId), failures: 0, failing_since: null, next_attempt_at: now, lease_owner: null, lease_until: null,
    secret_hash: null, created_at: now, updated_at: now, creator_token: null, creator_user: null, format: 'ssf',
    webhook_secret: null, webhook_previous_secret: null, webhook_previous_until: null, ssf: JSON.stringify(config),
  });
  return id;
}

/** Appends one user's Shared Signal (a committed feed row of type ssf). */
export async function appendUserSignal(t: TestApp, userId: string, event = ACCOUNT_DISABLED, teamId = t.team.id): Promise<void> {
  await transact(t.storage.db, (trx) =>
    appendSignal({ clock: t.clock }, trx, {
      teamId, event, subject: { format: 'opaque', id: userId }, payload: {}, resourceType: 'User', resourceId: userId, version: 1, externalId: null,
      actor: { via: 'cli', clientId: null, userId: null }, txn: null,
    }),
  );
}

/** Appends a stream's own verification event. */
export async function appendVerification(t: TestApp, streamId: string, state: string): Promise<void> {
  await transact(t.storage.db, (trx) =>
    appendSignal({ clock: t.clock }, trx, {
      teamId: t.team.id, event: VERIFICATION, subject: { format: 'opaque', id: streamId }, payload: { state }, stream: streamId, resourceType: 'Stream', resourceId: streamId, version: 0,
      externalId: null, actor: { via: 'cli', clientId: null, userId: null }, txn: null,
    }),
  );
}

/** The receiver removes a subject (`included` false) or adds it back (true). */
export async function setSubject(t: TestApp, streamId: string, userId: string, included: boolean): Promise<void> {
  const db = t.storage.db;
  await db.deleteFrom('ssf_subjects').where('subscription_id', '=', streamId).where('user_id', '=', userId).execute();
  await db.insertInto('ssf_subjects').values({ subscription_id: streamId, team_id: t.team.id, user_id: userId, included: included ? 1 : 0, created_at: iso(t.clock) }).execute();
}
