/**
 * The SSF 1.0 transmitter's streams (OpenID Shared Signals Framework 1.0 section 8, issue 33,
 * DESIGN.md section 14): a team's receivers create, read, update, replace and delete streams,
 * read and set their status, add and remove subjects, and ask for verification events. A stream
 * is an event subscription of format `ssf` (stream-config.ts), so it is delivered by the same
 * push and poll machinery, shows in the subscription listing and the console's Events page, and
 * counts against the team's `ssf.streams` budget (separately from `subscriptions`).
 *
 * What this module decides, where SSF leaves a choice (docs in notes and docs/signals.md):
 * - `aud` (transmitter-supplied) is the receiver's OAuth client id when its token has one, else
 *   the stream's endpoint URL; it never changes.
 * - `events_delivered` is the requested events Rollcall supports, in the order requested;
 *   requested URIs it does not know are kept in `events_requested` and ignored (SSF 7.1.1).
 * - Status: enabled delivers; paused holds (the cursor stays); disabled holds nothing (leaving
 *   disabled moves the cursor to the feed's end). A status the receiver sets sends no
 *   stream-updated event (SSF 8.1.5 sends it when the transmitter changes the status itself).
 *   A stream records the credential that created (or last enabled) it, like a subscription:
 *   revoking that credential pauses it (storage/repos/subscription-creators.ts), and its status
 *   then reads paused with the reason until a receiver enables it again.
 * - `default_subjects` is ALL: every user of the team, except those the receiver removed.
 *   A subject that resolves to no user is answered as if done (SSF 8.1.3.2 and 9.1, subject
 *   probing); a subject that is not a subject identifier at all is a 400.
 * - Verification: at most one request per `min_verification_interval`; sooner is a 429.
 * - The receiver's `authorization_header` is sealed (keys/sealed.ts) and never shown again.
 * Every change is one transaction with its audit row. The request bodies are read by
 * stream-input.ts, the answers shaped by stream-views.ts. It owns no SQL and no HTTP.
 */
import { iso } from '../../clock.ts';
import type { Clock } from '../../clock.ts';
import { recordEvent } from '../../audit/events.ts';
import type { AuditAction } from '../../audit/events.ts';
import { budgetsOf, OverBudget } from '../../budgets.ts';
import { newId } from '../../ids.ts';
import type { SecretBox } from '../../keys/sealed.ts';
import { lastSeq } from '../../storage/repos/events.ts';
import { markSubjects, replaceStreamConfig, streamById, streamForUpdate, streamsOfTeam, updateStream as storeStream } from '../../storage/repos/ssf-streams.ts';
import type { StreamChange } from '../../storage/repos/ssf-streams.ts';
import { countSubscriptionsLocked, deleteSubscription, insertSubscription } from '../../storage/repos/subscriptions.ts';
import type { SubscriptionRow } from '../../storage/repos/subscriptions.ts';
import { transact } from '../../storage/statements.ts';
import type { Db, Executor } from '../../storage/types.ts';
import { invalidValue, notFound } from '../errors.ts';
import type { ReceiverPolicy } from '../receivers.ts';
import { sealAuthorization, streamConfigOf } from '../stream-config.ts';
import type { StreamConfig, StreamStatus } from '../stream-config.ts';
import type { ChangeOrigin } from '../subscriptions.ts';
import { auditedUrl, newSubscriptionRow } from '../subscriptions.ts';
import { VERIFICATION_EVENT } from './event-types.ts';
import { appendStreamEvent } from './stream-events.ts';
import { checkTransmitterSupplied, deliveredOf, deliveryOf, descriptionOf, eventsRequestedOf, MAX_DESCRIPTION, streamIdOf } from './stream-input.ts';
import type { Body, Delivery } from './stream-input.ts';
import { MIN_VERIFICATION_INTERVAL, pollUrl, statusView, streamView } from './stream-views.ts';
import type { StatusView, StreamView } from './stream-views.ts';
import { resolveSubject } from './subjects.ts';

export { streamIdOf } from './stream-input.ts';
export { MIN_VERIFICATION_INTERVAL, transmitterConfiguration } from './stream-views.ts';
export type { StatusView, StreamView } from './stream-views.ts';

const MAX_STATE = 1_024;

export interface StreamDeps {
  readonly storage: { readonly db: Db };
  readonly clock: Clock;
  /** Where push endpoints may be (the egress policy of push subscriptions). */
  readonly receivers: ReceiverPolicy;
  /** Seals the receivers' authorization headers (KeyStore.box(STREAM_SECRETS), stream-config.ts). */
  readonly box: SecretBox;
  /** The transmitter's issuer: the public base URL, every SET's `iss`. */
  readonly issuer: string;
}

/** The receiver a request comes from: its team (with its budget overrides) and its OAuth client, if any. */
export interface StreamReceiver {
  readonly team: { readonly id: string; readonly limits?: string | null };
  readonly clientId: string | null;
}

/** A verification asked for sooner than min_verification_interval allows (SSF 8.1.4.2: 429). */
export class VerificationTooSoon extends Error {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number) {
    super(`a verification event of this stream was asked for less than ${MIN_VERIFICATION_INTERVAL} seconds ago (its min_verification_interval); retry after ${retryAfterSeconds} seconds`);
    this.name = 'VerificationTooSoon';
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

// ---- Reading ------------------------------------------------------------------------------------

async function requireStream(ex: Executor, teamId: string, id: string): Promise<SubscriptionRow> {
  const row = await streamById(ex, teamId, id);
  if (!row) throw notFound(`Stream ${id} not found`);
  return row;
}

/** The stream, its row locked for the rest of the change's transaction (changes of one stream take turns). */
async function lockStream(trx: Executor, teamId: string, id: string): Promise<SubscriptionRow> {
  const row = await streamForUpdate(trx, teamId, id);
  if (!row) throw notFound(`Stream ${id} not found`);
  return row;
}

export async function readStream(deps: Pick<StreamDeps, 'storage' | 'issuer'>, teamId: string, id: string): Promise<StreamView> {
  return streamView(await requireStream(deps.storage.db, teamId, id), deps.issuer);
}

export async function listStreams(deps: Pick<StreamDeps, 'storage' | 'issuer'>, teamId: string): Promise<StreamView[]> {
  return (await streamsOfTeam(deps.storage.db, teamId)).map((row) => streamView(row, deps.issuer));
}

export async function readStatus(deps: Pick<StreamDeps, 'storage' | 'issuer'>, teamId: string, id: string): Promise<StatusView> {
  return statusView(await requireStream(deps.storage.db, teamId, id));
}

// ---- Changing -----------------------------------------------------------------------------------

const audit = (ex: Executor, deps: StreamDeps, teamId: string, by: ChangeOrigin, action: AuditAction, id: string, detail: Record<string, unknown>): Promise<void> =>
  recordEvent(ex, deps.clock, { teamId, actor: by.actor, requestId: by.requestId, action, resourceType: 'Subscription', resourceId: id, detail });

const sealed = (deps: StreamDeps, id: string, delivery: Delivery): string | undefined =>
  delivery.method === 'push' && delivery.authorization !== undefined ? sealAuthorization(deps.box, id, delivery.authorization) : undefined;

/** SSF 1.0 section 8.1.1.1: a new stream (poll when no delivery is given), receiving what happens from now on. */
export async function createStream(deps: StreamDeps, receiver: StreamReceiver, body: Body, by: ChangeOrigin): Promise<StreamView> {
  const id = newId();
  const delivery = body.delivery === undefined ? ({ method: 'poll' } as const) : await deliveryOf(deps, body.delivery, undefined);
  const requested = body.events_requested === undefined ? [] : eventsRequestedOf(body.events_requested);
  const description = body.description === undefined ? undefined : descriptionOf(body.description);
  const url = delivery.method === 'push' ? delivery.url : null;
  const authorizationHeader = sealed(deps, id, delivery);
  const config: StreamConfig = {
    aud: receiver.clientId ?? url ?? pollUrl(deps.issuer, id),
    ...(description !== undefined ? { description } : {}),
    eventsRequested: requested,
    eventsDelivered: deliveredOf(requested),
    status: 'enabled',
    ...(authorizationHeader !== undefined ? { authorizationHeader } : {}),
    minVerificationInterval: MIN_VERIFICATION_INTERVAL,
  };
  const teamId = receiver.team.id;
  const row = await transact(deps.storage.db, async (trx) => {
    const cap = budgetsOf(receiver.team)['ssf.streams'];
    const held = await countSubscriptionsLocked(trx, teamId, 'streams');
    if (held >= cap) throw new OverBudget(teamId, 'ssf.streams', `the team holds ${held} SSF streams, its budget is ${cap}: delete one first, or ask the operator to raise the ssf.streams limit`);
    const now = iso(deps.clock);
    const created = newSubscriptionRow({ id, team_id: teamId, method: delivery.method, url, format: 'ssf', cursor: await lastSeq(trx, teamId) }, now, by, { ssf: JSON.stringify(config) });
    await insertSubscription(trx, created);
    await audit(trx, deps, teamId, by, 'stream_created', id, { method: delivery.method, url: auditedUrl(url), eventsDelivered: config.eventsDelivered, authorizationHeader: authorizationHeader !== undefined, from: created.cursor + 1 });
    return created;
  });
  return streamView(row, deps.issuer);
}

/** The receiver-supplied properties after an update (`replace`: missing ones are deleted). */
interface Changes {
  readonly delivery?: Delivery;
  readonly eventsRequested?: readonly string[];
  readonly description?: string | null;
}

/** Applies an update or a replacement of the receiver-supplied properties, in one transaction. */
async function reconfigure(deps: StreamDeps, teamId: string, body: Body, by: ChangeOrigin, replace: boolean): Promise<StreamView> {
  const id = streamIdOf(body.stream_id);
  const before = await requireStream(deps.storage.db, teamId, id);
  checkTransmitterSupplied(body, streamView(before, deps.issuer));
  if (replace && body.delivery === undefined) throw invalidValue('a replacement carries every receiver-supplied property: delivery is required');
  const changes: Changes = {
    ...(body.delivery !== undefined ? { delivery: await deliveryOf(deps, body.delivery, id) } : {}),
    ...(body.events_requested !== undefined ? { eventsRequested: eventsRequestedOf(body.events_requested) } : replace ? { eventsRequested: [] } : {}),
    ...(body.description !== undefined ? { description: descriptionOf(body.description) } : replace ? { description: null } : {}),
  };
  const row = await transact(deps.storage.db, async (trx) => {
    const current = await lockStream(trx, teamId, id);
    const config = streamConfigOf(current)!;
    const { description: _old, authorizationHeader: oldHeader, ...kept } = config;
    const description = changes.description === undefined ? config.description : changes.description ?? undefined;
    const authorizationHeader = changes.delivery ? sealed(deps, id, changes.delivery) : oldHeader;
    const requested = changes.eventsRequested ?? config.eventsRequested;
    const next: StreamConfig = {
      ...kept,
      ...(description !== undefined ? { description } : {}),
      eventsRequested: requested,
      eventsDelivered: deliveredOf(requested),
      ...(authorizationHeader !== undefined ? { authorizationHeader } : {}),
    };
    const now = iso(deps.clock);
    const change: StreamChange = {
      ssf: JSON.stringify(next),
      updated_at: now,
      // A new endpoint starts with a fresh retry budget. Its lease is taken back: the instance
      // holding the stream may be pushing a backlog to the old endpoint, and its next cursor move
      // (conditional on the lease) now fails, so it stops; the stream is claimed again with the
      // new delivery. Only the push in flight at this commit still goes to the old endpoint.
      ...(changes.delivery ? { method: changes.delivery.method, url: changes.delivery.method === 'push' ? changes.delivery.url : null, failures: 0, failing_since: null, next_attempt_at: now, lease_owner: null, lease_until: null } : {}),
    };
    await storeStream(trx, teamId, id, change);
    await audit(trx, deps, teamId, by, replace ? 'stream_replaced' : 'stream_updated', id, {
      ...(changes.delivery ? { method: changes.delivery.method, url: auditedUrl(change.url ?? null), authorizationHeader: authorizationHeader !== undefined } : {}),
      eventsDelivered: next.eventsDelivered,
    });
    return (await streamById(trx, teamId, id))!;
  });
  return streamView(row, deps.issuer);
}

/** SSF 1.0 section 8.1.1.3 (PATCH): the receiver-supplied properties present are changed, the others kept. */
export const updateStream = (deps: StreamDeps, teamId: string, body: Body, by: ChangeOrigin): Promise<StreamView> => reconfigure(deps, teamId, body, by, false);

/** SSF 1.0 section 8.1.1.4 (PUT): every receiver-supplied property is given; a missing one is deleted. */
export const replaceStream = (deps: StreamDeps, teamId: string, body: Body, by: ChangeOrigin): Promise<StreamView> => reconfigure(deps, teamId, body, by, true);

/** SSF 1.0 section 8.1.1.5: the stream, its subjects and its delivery log go. */
export async function deleteStream(deps: StreamDeps, teamId: string, id: string, by: ChangeOrigin): Promise<void> {
  await transact(deps.storage.db, async (trx) => {
    const row = await lockStream(trx, teamId, id);
    if (!(await deleteSubscription(trx, teamId, id))) throw notFound(`Stream ${id} not found`);
    await audit(trx, deps, teamId, by, 'stream_deleted', id, { method: row.method, url: auditedUrl(row.url), cursor: row.cursor });
  });
}

const STATUSES: readonly StreamStatus[] = ['enabled', 'paused', 'disabled'];

/**
 * SSF 1.0 section 8.1.2.2: the receiver sets its stream's status. Enabled delivers from where it
 * was (with a fresh retry budget); paused holds events; disabled drops them, so leaving disabled
 * starts after the feed's current end.
 */
export async function setStatus(deps: StreamDeps, teamId: string, body: Body, by: ChangeOrigin): Promise<StatusView> {
  const id = streamIdOf(body.stream_id);
  const status = body.status;
  if (typeof status !== 'string' || !STATUSES.includes(status as StreamStatus)) throw invalidValue('status must be "enabled", "paused" or "disabled"');
  if (body.reason !== undefined && typeof body.reason !== 'string') throw invalidValue('reason must be a string');
  const reason = typeof body.reason === 'string' ? body.reason.slice(0, MAX_DESCRIPTION) : undefined;
  const row = await transact(deps.storage.db, async (trx) => {
    const current = await lockStream(trx, teamId, id);
    const config = streamConfigOf(current)!;
    const was = statusView(current).status;
    const { reason: _old, ...kept } = config;
    const next: StreamConfig = { ...kept, status: status as StreamStatus, ...(reason !== undefined ? { reason } : {}) };
    const now = iso(deps.clock);
    const change: StreamChange = {
      ssf: JSON.stringify(next),
      updated_at: now,
      ...(status === 'enabled'
        ? // Whoever enables the stream takes it over, as resuming a subscription does: revoking that credential pauses it again.
          { state: 'active', paused_reason: null, failures: 0, failing_since: null, next_attempt_at: now, creator_token: by.credential?.tokenHash ?? null, creator_user: by.credential?.userId ?? null }
        : { state: 'paused', paused_reason: reason ?? `${status} by the receiver (SSF status endpoint)` }),
      ...(config.status === 'disabled' && status !== 'disabled' ? { cursor: await lastSeq(trx, teamId) } : {}),
    };
    await storeStream(trx, teamId, id, change);
    await audit(trx, deps, teamId, by, 'stream_status_changed', id, { was, status, ...(reason !== undefined ? { reason } : {}) });
    return (await streamById(trx, teamId, id))!;
  });
  return statusView(row);
}

/**
 * SSF 1.0 sections 8.1.3.2 and 8.1.3.3: the users a subject identifies are added to (or removed
 * from) the stream. A subject that identifies none is answered as done (subject probing, SSF 9.1).
 */
export async function changeSubject(deps: StreamDeps, teamId: string, body: Body, by: ChangeOrigin, add: boolean): Promise<void> {
  const id = streamIdOf(body.stream_id);
  if (body.verified !== undefined && typeof body.verified !== 'boolean') throw invalidValue('verified must be true or false');
  await requireStream(deps.storage.db, teamId, id);
  const users = await resolveSubject(deps.storage.db, teamId, deps.issuer, body.subject);
  await transact(deps.storage.db, async (trx) => {
    await lockStream(trx, teamId, id);
    await markSubjects(trx, { id, teamId }, users.userIds, add ? 1 : 0, iso(deps.clock));
    await audit(trx, deps, teamId, by, add ? 'stream_subject_added' : 'stream_subject_removed', id, { format: users.format, users: users.userIds });
  });
}

/**
 * SSF 1.0 section 8.1.4.2: a verification event for this stream only (its `state` echoed),
 * appended to the feed so it is delivered in order by the stream's own delivery. At most one per
 * min_verification_interval: the stream's last verification time is moved only from the value
 * read, so two requests at once cannot both pass.
 */
export async function requestVerification(deps: StreamDeps, teamId: string, body: Body, by: ChangeOrigin): Promise<void> {
  const id = streamIdOf(body.stream_id);
  if (body.state !== undefined && (typeof body.state !== 'string' || body.state.length > MAX_STATE)) throw invalidValue(`state must be a string of at most ${MAX_STATE} characters`);
  const state = body.state as string | undefined;
  await transact(deps.storage.db, async (trx) => {
    const row = await lockStream(trx, teamId, id);
    const config = streamConfigOf(row)!;
    const now = deps.clock.now().getTime();
    const interval = (config.minVerificationInterval ?? MIN_VERIFICATION_INTERVAL) * 1000;
    const last = config.lastVerificationAt === undefined ? undefined : Date.parse(config.lastVerificationAt);
    if (last !== undefined && now - last < interval) throw new VerificationTooSoon(Math.max(1, Math.ceil((last + interval - now) / 1000)));
    const next: StreamConfig = { ...config, lastVerificationAt: iso(deps.clock) };
    if (!(await replaceStreamConfig(trx, id, row.ssf!, JSON.stringify(next)))) throw new VerificationTooSoon(Math.ceil(interval / 1000));
    await appendStreamEvent(deps, trx, { id, teamId }, VERIFICATION_EVENT, state !== undefined ? { state } : {}, by);
    await audit(trx, deps, teamId, by, 'stream_verification_requested', id, { state: state !== undefined });
  });
}
