/**
 * Event subscriptions: per team, push (RFC 8935: Rollcall POSTs each SET to the
 * receiver's URL) or poll (RFC 8936: the receiver fetches SETs with the subscription's own
 * credential). Created, listed, paused, resumed, replayed and deleted by the CLI (`rollcall
 * events ...`) and the HTTP API (events-plugin.ts), both through these functions.
 *
 * A new subscription starts at the team's current end of the feed (it receives what happens
 * from now on); `replay --from SEQ` moves its cursor back so events from SEQ on are delivered
 * again, in order (receivers de-duplicate by `jti`). A receiver URL is judged by receivers.ts
 * (https, or http on loopback; no address an operator has not allowed that is loopback,
 * link-local, private, unique-local or unspecified). Every change (create, pause, resume,
 * replay, delete) writes its audit row in the change's transaction, naming who made it (the CLI,
 * a bearer of the API, or a console admin). A team holds at most its `subscriptions` budget of
 * them. Only administrators change them (the API checks the token, oauth/administrators.ts), and
 * a subscription records the credential it was created (or last resumed) with: revoking that
 * credential pauses it (storage/repos/subscription-creators.ts); the CLI's have none. It owns no
 * SQL and no HTTP.
 */
import { createHash, randomBytes } from 'node:crypto';
import { CLI_ACTOR, recordEvent } from '../audit/events.ts';
import type { Actor, AuditAction } from '../audit/events.ts';
import { iso } from '../clock.ts';
import type { Clock } from '../clock.ts';
import { newId } from '../ids.ts';
import { budgetsOf, OverBudget } from '../budgets.ts';
import { invalidValue, notFound, pruned } from './errors.ts';
import { countEventsAfter, feedEnds, lastSeq } from '../storage/repos/events.ts';
import type { FeedEnds } from '../storage/repos/events.ts';
import { attemptsOf, attemptsPage, countSubscriptionsLocked, deleteSubscription, insertSubscription, subscriptionById, subscriptionsOfTeam, updateSubscription } from '../storage/repos/subscriptions.ts';
import type { AttemptRow, SubscriptionRow } from '../storage/repos/subscriptions.ts';
import type { Db, Executor } from '../storage/types.ts';
import { EVENT_TYPES, SIGNAL } from './feed.ts';
import type { EventType } from './feed.ts';
import type { ReceiverPolicy } from './receivers.ts';
import { eventUri } from './set.ts';
import { transact } from '../storage/statements.ts';
import type { SecretBox } from '../keys/sealed.ts';
import { newWebhookSecret } from './webhook-secrets.ts';
import { enableByTransmitter } from './ssf/stream-events.ts';

export interface SubscriptionDeps {
  readonly storage: { readonly db: Db };
  readonly clock: Clock;
}

/** What creating a subscription needs besides: the rules a receiver URL must meet, and (for a webhook) the box its secret is sealed in. */
export interface CreationDeps extends SubscriptionDeps {
  readonly receivers: ReceiverPolicy;
  readonly box?: SecretBox;
}

/**
 * The credential a change is made with: an administrator's access token (its
 * SHA-256) and its user, or a console admin's session (the user only). A subscription keeps its
 * creator's; revoking that credential pauses it (storage/repos/subscription-creators.ts).
 */
export interface Credential {
  readonly tokenHash: string | null;
  readonly userId: string | null;
}

/** Who asks for a change, for its audit row: the CLI (the operator, no credential) unless said otherwise. */
export interface ChangeOrigin {
  readonly actor: Actor;
  readonly requestId: string | null;
  readonly credential?: Credential;
}

export const CLI_ORIGIN: ChangeOrigin = { actor: CLI_ACTOR, requestId: null };

/**
 * The receiver URL as the audit trail keeps it: without its query, which often carries the
 * receiver's own secret (the subscription list shows the whole URL to the team's admins).
 */
export function auditedUrl(raw: string | null): string | null {
  if (raw === null) return null;
  try {
    const url = new URL(raw);
    return `${url.origin}${url.pathname}${url.search ? '?…' : ''}`;
  } catch {
    return null;
  }
}

const audit = (ex: Executor, deps: SubscriptionDeps, teamId: string, by: ChangeOrigin, action: AuditAction, id: string, detail: Record<string, unknown>): Promise<void> =>
  recordEvent(ex, deps.clock, { teamId, actor: by.actor, requestId: by.requestId, action, resourceType: 'Subscription', resourceId: id, detail });

/** Event names a subscription may ask for: the change types and asyncresp, or their RFC 9967 URIs (either variant). */
export function parseEventTypes(values: readonly string[]): EventType[] {
  const types = new Set<EventType>();
  for (const value of values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean)) {
    const type = EVENT_TYPES.find((t) => t === value || eventUri(t, false) === value || eventUri(t, true) === value);
    if (!type) throw invalidValue(`unknown event "${value}": expected one of ${EVENT_TYPES.join(', ')} or their RFC 9967 URIs`);
    types.add(type);
  }
  return [...types];
}

export interface SubscriptionView {
  readonly id: string;
  readonly method: 'push' | 'poll';
  /** What a push sends: RFC 8935 SETs, Standard Webhooks JSON (webhook.ts), or an SSF stream's SETs (stream-config.ts). */
  readonly format: 'set' | 'webhook' | 'ssf';
  readonly url: string | null;
  readonly events: readonly string[] | null;
  readonly full: boolean;
  readonly state: 'active' | 'paused';
  readonly pausedReason: string | null;
  /** The last seq delivered (push) or acknowledged (poll). */
  readonly cursor: number;
  readonly failures: number;
  readonly failingSince: string | null;
  readonly nextAttemptAt: string;
  readonly createdAt: string;
  readonly attempts?: readonly AttemptView[];
}

export interface AttemptView {
  readonly at: string;
  readonly seq: number;
  readonly status: number | null;
  readonly latencyMs: number;
  readonly error: string | null;
}

const attemptView = (a: AttemptRow): AttemptView => ({ at: a.at, seq: a.seq, status: a.status, latencyMs: a.latency_ms, error: a.error });

export const subscriptionView = (row: SubscriptionRow, attempts?: readonly AttemptRow[]): SubscriptionView => ({
  id: row.id,
  method: row.method,
  format: row.format,
  url: row.url,
  events: row.events === null ? null : (JSON.parse(row.events) as string[]),
  full: row.full === 1,
  state: row.state,
  pausedReason: row.paused_reason,
  cursor: row.cursor,
  failures: row.failures,
  failingSince: row.failing_since,
  nextAttemptAt: row.next_attempt_at,
  createdAt: row.created_at,
  ...(attempts ? { attempts: attempts.map(attemptView) } : {}),
});

export interface NewSubscription {
  readonly method: 'push' | 'poll';
  readonly url?: string;
  readonly events?: readonly string[];
  readonly full?: boolean;
  /** `set` (the default) or `webhook` (push only). */
  readonly format?: string;
}

/** The poll credential (shown once) and its digest, which is all the database keeps. */
export const digestOf = (secret: string): string => createHash('sha256').update(secret).digest('hex');

/** The team a subscription is created for, with its budget overrides (`subscriptions` caps how many it holds). */
export interface SubscribingTeam {
  readonly id: string;
  readonly limits?: string | null;
}

/**
 * A new subscription's row (an SSF stream's too, events/ssf/streams.ts): active, due now, no
 * failures, no lease, its creator's credential; `extra` sets what its kind has (an events filter,
 * a poll credential, a webhook secret, a stream's configuration).
 */
export function newSubscriptionRow(
  base: Pick<SubscriptionRow, 'id' | 'team_id' | 'method' | 'url' | 'format' | 'cursor'>,
  now: string,
  by: ChangeOrigin,
  extra: Partial<Pick<SubscriptionRow, 'events' | 'full' | 'secret_hash' | 'webhook_secret' | 'ssf'>> = {},
): SubscriptionRow {
  return {
    ...base,
    events: null,
    full: 0,
    state: 'active',
    paused_reason: null,
    failures: 0,
    failing_since: null,
    next_attempt_at: now,
    lease_owner: null,
    lease_until: null,
    secret_hash: null,
    created_at: now,
    updated_at: now,
    creator_token: by.credential?.tokenHash ?? null,
    creator_user: by.credential?.userId ?? null,
    webhook_secret: null,
    webhook_previous_secret: null,
    webhook_previous_until: null,
    ssf: null,
    ...extra,
  };
}

export async function createSubscription(deps: CreationDeps, team: SubscribingTeam, input: NewSubscription, by: ChangeOrigin = CLI_ORIGIN): Promise<{ subscription: SubscriptionView; pollToken?: string; secret?: string }> {
  const teamId = team.id;
  if (input.method !== 'push' && input.method !== 'poll') throw invalidValue('method must be "push" or "poll"');
  const format = input.format ?? 'set';
  if (format !== 'set' && format !== 'webhook') throw invalidValue('format must be "set" (RFC 8935 SETs) or "webhook" (Standard Webhooks JSON)');
  if (format === 'webhook' && input.method === 'poll') throw invalidValue('a poll subscription fetches SETs (RFC 8936): format "webhook" is for push subscriptions only (give a url instead of method "poll")');
  if (format === 'webhook' && input.full) throw invalidValue('full applies to SETs only: a webhook names the changed attributes; read the resource at its location');
  if (input.method === 'push') {
    if (typeof input.url !== 'string') throw invalidValue('a push subscription needs the receiver url');
    const problem = await deps.receivers.problem(input.url);
    if (problem) throw invalidValue(problem);
  } else if (input.url !== undefined) {
    throw invalidValue('a poll subscription has no url: the receiver polls');
  }
  const events = input.events === undefined ? null : parseEventTypes(input.events);
  if (events !== null && events.length === 0) throw invalidValue('events must name at least one event');
  const now = iso(deps.clock);
  const pollToken = input.method === 'poll' ? `rce_${randomBytes(24).toString('base64url')}` : undefined;
  const id = newId();
  if (format === 'webhook' && !deps.box) throw new Error('creating a webhook subscription needs the box its secret is sealed in');
  const webhook = format === 'webhook' ? newWebhookSecret(deps.box!, id) : undefined;
  const row = await transact(deps.storage.db, async (trx) => {
    const cap = budgetsOf(team).subscriptions;
    const held = await countSubscriptionsLocked(trx, teamId, 'subscriptions');
    if (held >= cap) throw new OverBudget(teamId, 'subscriptions', `the team holds ${held} event subscriptions, its budget is ${cap}: delete one first, or ask the operator to raise the subscriptions limit`);
    const created = newSubscriptionRow(
      { id, team_id: teamId, method: input.method, url: input.method === 'push' ? input.url! : null, format, cursor: await lastSeq(trx, teamId) },
      now,
      by,
      {
        events: events === null ? null : JSON.stringify(events),
        full: input.full ? 1 : 0,
        secret_hash: pollToken ? digestOf(pollToken) : null,
        webhook_secret: webhook?.sealed ?? null,
      },
    );
    await insertSubscription(trx, created);
    await audit(trx, deps, teamId, by, 'subscription_created', created.id, { method: created.method, format, url: auditedUrl(created.url), events, full: input.full === true, from: created.cursor + 1 });
    return created;
  });
  return { subscription: subscriptionView(row), ...(pollToken ? { pollToken } : {}), ...(webhook ? { secret: webhook.secret } : {}) };
}

export async function listSubscriptions(deps: SubscriptionDeps, teamId: string): Promise<SubscriptionView[]> {
  return (await subscriptionsOfTeam(deps.storage.db, teamId)).map((row) => subscriptionView(row));
}

async function requireSubscription(ex: Executor, teamId: string, id: string): Promise<SubscriptionRow> {
  const row = await subscriptionById(ex, teamId, id);
  if (!row) throw notFound(`Subscription ${id} not found`);
  return row;
}

/** One subscription with its latest delivery attempts (why it failed or paused). */
export async function getSubscription(deps: SubscriptionDeps, teamId: string, id: string, attempts = 20): Promise<SubscriptionView> {
  const row = await requireSubscription(deps.storage.db, teamId, id);
  return subscriptionView(row, await attemptsOf(deps.storage.db, id, attempts));
}

/** Runs `change` on the team's subscription `id` in one transaction with its audit row; a 404 when there is none. */
export async function changeSubscription(
  deps: SubscriptionDeps,
  teamId: string,
  id: string,
  by: ChangeOrigin,
  action: AuditAction,
  change: (trx: Executor, row: SubscriptionRow) => Promise<Record<string, unknown>>,
): Promise<SubscriptionView> {
  await transact(deps.storage.db, async (trx) => {
    const row = await requireSubscription(trx, teamId, id);
    const detail = await change(trx, row);
    await audit(trx, deps, teamId, by, action, id, { url: auditedUrl(row.url), ...detail });
  });
  return getSubscription(deps, teamId, id);
}

export async function pauseSubscription(deps: SubscriptionDeps, teamId: string, id: string, reason = 'paused by an administrator', by: ChangeOrigin = CLI_ORIGIN): Promise<SubscriptionView> {
  return changeSubscription(deps, teamId, id, by, 'subscription_paused', async (trx, row) => {
    // SSF 1.0 section 8.1.5 has the transmitter tell the receiver before it stops a stream, which
    // a pause here cannot: the stream's receiver pauses it (SSF status endpoint), or it is deleted.
    if (row.format === 'ssf') throw invalidValue('an SSF stream is paused by its receiver through the SSF status endpoint (POST /v2/ssf/status); an administrator may delete it');
    await updateSubscription(trx, teamId, id, { state: 'paused', paused_reason: reason, updated_at: iso(deps.clock) });
    return { reason };
  });
}

/**
 * Resumes delivery now, with a fresh retry budget. Whoever resumes takes the subscription over:
 * from now on it acts on their credential (a subscription paused because its creator's was
 * revoked goes on only on another administrator's authority).
 */
export async function resumeSubscription(deps: SubscriptionDeps, teamId: string, id: string, by: ChangeOrigin = CLI_ORIGIN): Promise<SubscriptionView> {
  return changeSubscription(deps, teamId, id, by, 'subscription_resumed', async (trx, row) => {
    if (row.format === 'ssf') {
      // The transmitter re-enables an SSF stream: its status, cursor and stream-updated event.
      await updateSubscription(trx, teamId, id, { creator_token: by.credential?.tokenHash ?? null, creator_user: by.credential?.userId ?? null });
      return enableByTransmitter(deps, trx, row, by);
    }
    const now = iso(deps.clock);
    await updateSubscription(trx, teamId, id, {
      state: 'active',
      paused_reason: null,
      failures: 0,
      failing_since: null,
      next_attempt_at: now,
      updated_at: now,
      creator_token: by.credential?.tokenHash ?? null,
      creator_user: by.credential?.userId ?? null,
    });
    return { was: row.state, ...(row.paused_reason ? { pausedReason: row.paused_reason } : {}) };
  });
}

export async function removeSubscription(deps: SubscriptionDeps, teamId: string, id: string, by: ChangeOrigin = CLI_ORIGIN): Promise<void> {
  await transact(deps.storage.db, async (trx) => {
    const row = await requireSubscription(trx, teamId, id);
    if (!(await deleteSubscription(trx, teamId, id))) throw notFound(`Subscription ${id} not found`);
    await audit(trx, deps, teamId, by, 'subscription_deleted', id, { method: row.method, url: auditedUrl(row.url), cursor: row.cursor });
  });
}

/** Delivers again every event from `from` on (still kept by the retention), in order. */
export async function replaySubscription(deps: SubscriptionDeps, teamId: string, id: string, from: number, by: ChangeOrigin = CLI_ORIGIN): Promise<SubscriptionView> {
  if (!Number.isSafeInteger(from) || from < 1) {
    await requireSubscription(deps.storage.db, teamId, id);
    throw invalidValue('from must be a sequence number (1 or more)');
  }
  return changeSubscription(deps, teamId, id, by, 'subscription_replayed', async (trx, row) => {
    const { firstKept: first, lastSeq: last } = await feedEnds(trx, teamId);
    if (from > last + 1) throw invalidValue(`from ${from} is past the end of the feed (last seq ${last})`);
    if (first === undefined ? from <= last : from < first) {
      throw pruned(`events before ${first ?? last + 1} were pruned by the retention; replay from ${first ?? last + 1} or later`);
    }
    const now = iso(deps.clock);
    await updateSubscription(trx, teamId, id, { cursor: from - 1, next_attempt_at: now, failures: 0, failing_since: null, updated_at: now });
    return { from, cursorWas: row.cursor };
  });
}

/** A filtered subscription's pending events are counted one by one only this close to the end of the feed. */
export const PENDING_SCAN = 2_000;

export interface Pending {
  /** Events still to deliver (push) or to see acknowledged (poll). */
  readonly count: number;
  /** False: an upper bound (a filtered subscription far behind: the kept events after its cursor). */
  readonly exact: boolean;
}

/**
 * What each subscription has still to deliver (push) or to see acknowledged (poll): the kept
 * events after its cursor that its events filter wants. The kept events are the contiguous range
 * (first kept, last seq], since seq is gap-free and the retention prunes the oldest first, so an
 * unfiltered subscription's count is arithmetic. A filtered one's is counted (a walk of the
 * (team_id, seq) key) when at most PENDING_SCAN events follow its cursor; further behind, the
 * kept events after its cursor are given as an upper bound, so the cost stays bounded however far
 * behind a receiver is.
 */
export async function pendingCounts(
  deps: SubscriptionDeps,
  teamId: string,
  subscriptions: readonly (Pick<SubscriptionView, 'cursor' | 'events'> & Partial<Pick<SubscriptionView, 'format'>>)[],
  /** The feed's ends when the caller has read them already. */
  ends?: FeedEnds,
): Promise<Pending[]> {
  if (subscriptions.length === 0) return [];
  const { lastSeq: last, firstKept: first } = ends ?? (await feedEnds(deps.storage.db, teamId));
  const behind = (s: { cursor: number }) => (first === undefined ? 0 : Math.max(0, last - Math.max(s.cursor, first - 1)));
  // Whether the feed may hold Shared Signals a SCIM subscription without an events filter would
  // count: yes when the team has a stream; else one probe for an `ssf` row after the furthest
  // behind of those subscriptions that are counted exactly (at most PENDING_SCAN rows from the
  // feed's end: a team's last stream deleted leaves its signals until retention prunes them).
  // A subscription further behind is counted as every row after its cursor, as before.
  let signals = subscriptions.some((s) => s.format === 'ssf');
  if (!signals) {
    const near = subscriptions.filter((s) => s.format !== 'ssf' && (s.events ?? null) === null && behind(s) > 0 && behind(s) <= PENDING_SCAN);
    if (near.length > 0) {
      const from = Math.min(...near.map((s) => s.cursor));
      signals = (await countEventsAfter(deps.storage.db, teamId, from, [SIGNAL], 1)) > 0;
    }
  }
  return Promise.all(
    subscriptions.map(async (s): Promise<Pending> => {
      const after = behind(s);
      // Counted by type when the subscription takes only some of the feed's rows: an events
      // filter, an SSF stream (Shared Signals only), or any SCIM subscription when the feed may
      // hold Shared Signals (above).
      const types = s.format === 'ssf' ? [SIGNAL] : s.events ?? (signals ? EVENT_TYPES : null);
      if (types === null || after === 0) return { count: after, exact: true };
      if (after > PENDING_SCAN) return { count: after, exact: false };
      return { count: await countEventsAfter(deps.storage.db, teamId, s.cursor, types, PENDING_SCAN), exact: true };
    }),
  );
}

/** A position in a delivery log: the (at, id) of the last attempt shown. */
export interface AttemptPosition {
  readonly at: string;
  readonly id: string;
}

/** A page of a subscription's delivery log, newest first, with the position of the next (older) page. */
export async function deliveryLog(deps: SubscriptionDeps, teamId: string, id: string, limit: number, before?: AttemptPosition): Promise<{ subscription: SubscriptionView; attempts: AttemptView[]; next: AttemptPosition | undefined }> {
  const row = await requireSubscription(deps.storage.db, teamId, id);
  const rows = await attemptsPage(deps.storage.db, id, limit + 1, before);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { subscription: subscriptionView(row), attempts: page.map(attemptView), next: rows.length > limit && last ? { at: last.at, id: last.id } : undefined };
}
