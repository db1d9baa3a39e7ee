/**
 * What the console's Events page reads and changes (the team's event subscriptions), for one
 * signed-in admin of one team: the team's subscriptions with what each has still to deliver, one
 * subscription's delivery log in pages by (at, id) seek, the overview's event health (pending
 * events, subscriptions paused or failing), and the actions create, pause, resume, replay and
 * delete. The actions go through events/subscriptions.ts, the functions the CLI and the API use,
 * so the rules (receiver URL https or loopback http, on an address receivers.ts allows; replay within the retention) and the audit
 * row in the change's transaction are the same; the admin is the actor. Form values are checked
 * here and refused with a ConsoleInputError. No SQL and no HTML here.
 */
import type { ReceiverPolicy } from '../events/receivers.ts';
import type { ScimContext } from '../scim/context.ts';
import { EVENT_TYPES } from '../events/feed.ts';
import type { EventType } from '../events/feed.ts';
import {
  createSubscription,
  deliveryLog,
  listSubscriptions,
  pauseSubscription,
  pendingCounts,
  removeSubscription,
  replaySubscription,
  resumeSubscription,
} from '../events/subscriptions.ts';
import type { AttemptView, ChangeOrigin, SubscriptionView } from '../events/subscriptions.ts';
import { feedEnds as readFeedEnds } from '../storage/repos/events.ts';
import type { FeedEnds } from '../storage/repos/events.ts';
import { ConsoleInputError } from './directory.ts';
import { invalidValue, pruned } from '../events/errors.ts';
import type { SecretBox } from '../keys/sealed.ts';
import { latencyFigures } from '../events/ssf/latency.ts';
import type { LatencyFigures } from '../events/ssf/latency.ts';
import { teamHasStreams } from '../storage/repos/subscriptions.ts';

export const LOG_PAGE_SIZE = 50;
export { EVENT_TYPES };

export interface SubscriptionShown extends SubscriptionView {
  /** Kept events after the cursor that it wants (an upper bound when not `pendingExact`). */
  readonly pending: number;
  readonly pendingExact: boolean;
}

export type { FeedEnds };

const deps = (ctx: ScimContext) => ({ storage: ctx.storage, clock: ctx.clock });
// The console admin's session: what a subscription they create or resume acts on (its user).
const origin = (ctx: ScimContext): ChangeOrigin => ({ actor: ctx.actor, requestId: ctx.requestId, credential: { tokenHash: null, userId: ctx.actor.userId } });
async function shown(ctx: ScimContext, list: readonly SubscriptionView[], feed: FeedEnds): Promise<SubscriptionShown[]> {
  const pending = await pendingCounts(deps(ctx), ctx.team.id, list, feed);
  return list.map((s, i) => ({ ...s, pending: pending[i]!.count, pendingExact: pending[i]!.exact }));
}

const feedEnds = (ctx: ScimContext): Promise<FeedEnds> => readFeedEnds(ctx.storage.db, ctx.team.id);

/** The team's subscriptions, oldest first, each with its pending count, and the feed's ends. */
export async function eventSubscriptions(ctx: ScimContext): Promise<{ feed: FeedEnds; subscriptions: SubscriptionShown[] }> {
  const [feed, list] = await Promise.all([feedEnds(ctx), listSubscriptions(deps(ctx), ctx.team.id)]);
  return { feed, subscriptions: await shown(ctx, list, feed) };
}

export interface SubscriptionDetail {
  readonly feed: FeedEnds;
  readonly subscription: SubscriptionShown;
  readonly attempts: readonly AttemptView[];
  /** The `before` of the next (older) page of the log. */
  readonly next: string | undefined;
}

/** One subscription and a page of its delivery log, newest first (`before` from the previous page). */
export async function subscriptionDetail(ctx: ScimContext, id: string, before?: string): Promise<SubscriptionDetail> {
  let position: { at: string; id: string } | undefined;
  if (before !== undefined && before !== '') {
    const match = /^(\d{4}-\d\d-\d\dT[\d:.]+Z)_([A-Z0-9]{1,40})$/.exec(before);
    if (!match) throw new ConsoleInputError('the page position is not valid');
    position = { at: match[1]!, id: match[2]! };
  }
  const log = await deliveryLog(deps(ctx), ctx.team.id, id, LOG_PAGE_SIZE, position);
  const feed = await feedEnds(ctx);
  const [subscription] = await shown(ctx, [log.subscription], feed);
  return { feed, subscription: subscription!, attempts: log.attempts, next: log.next ? `${log.next.at}_${log.next.id}` : undefined };
}

export interface EventProblem {
  readonly id: string;
  readonly url: string | null;
  readonly state: SubscriptionView['state'];
  /** Paused: the reason; failing: since when, how often, and when it tries again. */
  readonly detail: string;
}

export interface EventsHealth {
  readonly subscriptions: number;
  /** Pending events summed over the subscriptions. */
  readonly pending: number;
  /** False when some count is an upper bound (the sum is one too). */
  readonly exact: boolean;
  /** Paused subscriptions (with their reason) and active ones whose deliveries fail. */
  readonly problems: readonly EventProblem[];
}

/** The overview's view of the team's events: what is pending, and what is paused or failing. */
export async function eventsHealth(ctx: ScimContext): Promise<EventsHealth> {
  const { subscriptions } = await eventSubscriptions(ctx);
  const problems = subscriptions.flatMap((s): EventProblem[] => {
    if (s.state === 'paused') return [{ id: s.id, url: s.url, state: s.state, detail: s.pausedReason ?? 'paused' }];
    if (s.failures > 0) return [{ id: s.id, url: s.url, state: s.state, detail: `failing since ${s.failingSince ?? 'unknown'} (${s.failures} attempts); next attempt ${s.nextAttemptAt}` }];
    return [];
  });
  return {
    subscriptions: subscriptions.length,
    pending: subscriptions.reduce((n, s) => n + s.pending, 0),
    exact: subscriptions.every((s) => s.pendingExact),
    problems,
  };
}

/** The overview's Shared Signals figure (issue 33): commit to acceptance by push in the last hour. */
export type SignalsHealth = LatencyFigures;

/** The team's deprovisioning figure, or undefined when it has no SSF stream and delivered no signal. */
export async function signalsHealth(ctx: ScimContext): Promise<SignalsHealth | undefined> {
  const figures = await latencyFigures(ctx.storage.db, ctx.clock, ctx.team.id);
  if (figures.count === 0 && !(await teamHasStreams(ctx.storage.db, ctx.team.id))) return undefined;
  return figures;
}

/** The create form as sent: the receiver URL, the event types ticked (none: every event), full, the format (set or webhook). */
export interface SubscriptionForm {
  readonly url: string;
  readonly events: readonly string[];
  readonly full: boolean;
  readonly format?: string;
}

/** Creates a push subscription; a webhook's secret is in the answer, to be shown this once. */
export async function createFromConsole(ctx: ScimContext, form: SubscriptionForm, receivers: ReceiverPolicy, box: SecretBox): Promise<{ subscription: SubscriptionView; secret?: string }> {
  const url = form.url.trim();
  if (url === '') throw new ConsoleInputError('enter the receiver URL (https, or http on a loopback address)');
  if (url.length > 2000) throw new ConsoleInputError('the receiver URL is at most 2,000 characters');
  const unknown = form.events.find((e) => !EVENT_TYPES.includes(e as EventType));
  if (unknown !== undefined) throw new ConsoleInputError(`unknown event "${unknown}": choose among ${EVENT_TYPES.join(', ')}`);
  const format = form.format === undefined || form.format === '' ? 'set' : form.format;
  const created = await createSubscription({ ...deps(ctx), receivers, box }, ctx.team, { method: 'push', url, ...(form.events.length > 0 ? { events: form.events } : {}), full: form.full, format }, origin(ctx));
  return { subscription: created.subscription, ...(created.secret ? { secret: created.secret } : {}) };
}

/** Pauses with the admin's reason (at most 200 characters), or a default naming the console. */
export async function pauseFromConsole(ctx: ScimContext, id: string, reason: string): Promise<SubscriptionView> {
  const trimmed = reason.trim();
  if (trimmed.length > 200) throw new ConsoleInputError('the reason is at most 200 characters');
  return pauseSubscription(deps(ctx), ctx.team.id, id, trimmed || 'paused by an administrator in the console', origin(ctx));
}

export const resumeFromConsole = (ctx: ScimContext, id: string): Promise<SubscriptionView> => resumeSubscription(deps(ctx), ctx.team.id, id, origin(ctx));

export const deleteFromConsole = (ctx: ScimContext, id: string): Promise<void> => removeSubscription(deps(ctx), ctx.team.id, id, origin(ctx));

/** The sequence number typed in the replay form (digits only, 1 or more). */
function replayStart(from: string): number {
  const trimmed = from.trim();
  if (!/^\d{1,15}$/.test(trimmed) || Number(trimmed) < 1) throw new ConsoleInputError('replay from a sequence number: a whole number, 1 or more');
  return Number(trimmed);
}

/** Replays from the sequence number typed in the form (digits only). */
export async function replayFromConsole(ctx: ScimContext, id: string, from: string): Promise<SubscriptionView> {
  return replaySubscription(deps(ctx), ctx.team.id, id, replayStart(from), origin(ctx));
}

/** What a replay from `from` would do, for its confirmation page: the events it would send again. */
export interface ReplayPreview {
  readonly subscription: SubscriptionShown;
  readonly from: number;
  /** The feed's last seq: the replay sends the kept events from `from` to it that the subscription takes. */
  readonly to: number;
  /** How many it would send (an upper bound when not `exact`). */
  readonly count: number;
  readonly exact: boolean;
}

/**
 * Counts what replaying from `from` would send again, with the same refusals as the replay
 * itself (not a sequence number, past the feed's end, pruned by the retention); changes nothing.
 */
export async function replayPreview(ctx: ScimContext, id: string, from: string): Promise<ReplayPreview> {
  const start = replayStart(from);
  const { feed, subscription } = await subscriptionDetail(ctx, id);
  if (start > feed.lastSeq + 1) throw invalidValue(`from ${start} is past the end of the feed (last seq ${feed.lastSeq})`);
  if (feed.firstKept === undefined ? start <= feed.lastSeq : start < feed.firstKept) {
    throw pruned(`events before ${feed.firstKept ?? feed.lastSeq + 1} were pruned by the retention; replay from ${feed.firstKept ?? feed.lastSeq + 1} or later`);
  }
  const [counted] = await pendingCounts(deps(ctx), ctx.team.id, [{ ...subscription, cursor: start - 1 }], feed);
  return { subscription, from: start, to: feed.lastSeq, count: counted!.count, exact: counted!.exact };
}
