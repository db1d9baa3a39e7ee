/**
 * Poll delivery (RFC 8936): a poll subscription's receiver POSTs to
 * `/v2/events/poll` with the subscription's own credential (the `rce_` token shown once at
 * creation) and gets its pending SETs, keyed by `jti`, in seq order. Acknowledgements (`ack`)
 * and error reports (`setErrs`, logged with the attempt log) settle SETs; the subscription's
 * cursor moves over every leading SET that is settled (or not wanted by its events filter), so
 * a SET not acknowledged is returned again on the next poll (at-least-once), and order holds.
 * With `returnImmediately: false` (RFC 8936's default) a poll with nothing pending waits up to
 * LONG_POLL_MS for the next event, and stops waiting as soon as its `stop` signal fires. Errors answer in RFC 8936 section 2.6's shape (`err`,
 * `description`). An SSF stream (issue 33) is polled the same way at `/v2/ssf/poll/{id}`
 * (http/ssf-poll.ts, with a bearer token of its team): it returns only the signals it carries
 * (ssf/carriage.ts: its receiver's removed subjects are passed over like unwanted events), and
 * each acknowledged signal's commit-to-acknowledgement time is reported to `latency`.
 * It owns no SQL and no HTTP.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { iso } from '../clock.ts';
import type { Clock } from '../clock.ts';
import { newId } from '../ids.ts';
import { eventsAfter } from '../storage/repos/events.ts';
import type { EventRow } from '../storage/repos/events.ts';
import { insertAttempt, moveCursor, subscriptionBySecret } from '../storage/repos/subscriptions.ts';
import type { SubscriptionRow } from '../storage/repos/subscriptions.ts';
import type { Db } from '../storage/types.ts';
import { setClaims } from './set.ts';
import { audienceOf, wantedBy } from './stream-config.ts';
import type { SetSigner } from './set.ts';
import { digestOf } from './subscriptions.ts';
import { carriedOf } from './ssf/carriage.ts';
import { observeAccepted } from './ssf/latency.ts';
import type { SignalLatency } from './ssf/latency.ts';

export const DEFAULT_MAX_EVENTS = 100;
export const MAX_EVENTS = 1000;
export const LONG_POLL_MS = 15_000;
const LONG_POLL_STEP_MS = 100;

/** An RFC 8936 section 2.6 error. */
export class PollError extends Error {
  readonly status: number;
  readonly err: string;
  constructor(status: number, err: string, description: string) {
    super(description);
    this.status = status;
    this.err = err;
  }
  toBody(): Record<string, string> {
    return { err: this.err, description: this.message };
  }
}

export interface PollDeps {
  readonly storage: { readonly db: Db };
  readonly clock: Clock;
  readonly signer: SetSigner;
  readonly issuer: string;
  /** Told each Shared Signal a receiver acknowledged, with its commit-to-acknowledgement time. */
  readonly latency?: SignalLatency;
}

export interface PollRequest {
  readonly maxEvents: number;
  readonly returnImmediately: boolean;
  readonly ack: readonly string[];
  readonly setErrs: Readonly<Record<string, { err: string; description?: string }>>;
}

/** The body of a poll request, checked (RFC 8936 section 2.4). */
export function parsePollRequest(body: unknown): PollRequest {
  const b = (body ?? {}) as Record<string, unknown>;
  if (typeof b !== 'object' || Array.isArray(b)) throw new PollError(400, 'invalid_request', 'the body must be a JSON object');
  const maxEvents = b.maxEvents ?? DEFAULT_MAX_EVENTS;
  if (typeof maxEvents !== 'number' || !Number.isInteger(maxEvents) || maxEvents < 0 || maxEvents > MAX_EVENTS) throw new PollError(400, 'invalid_request', `maxEvents must be a whole number from 0 to ${MAX_EVENTS}`);
  const returnImmediately = b.returnImmediately ?? false;
  if (typeof returnImmediately !== 'boolean') throw new PollError(400, 'invalid_request', 'returnImmediately must be true or false');
  const ack = b.ack ?? [];
  if (!Array.isArray(ack) || ack.length > MAX_EVENTS || !ack.every((j) => typeof j === 'string' && j.length <= 100)) throw new PollError(400, 'invalid_request', 'ack must be an array of jti strings');
  const setErrs = b.setErrs ?? {};
  if (typeof setErrs !== 'object' || setErrs === null || Array.isArray(setErrs) || Object.keys(setErrs).length > MAX_EVENTS) throw new PollError(400, 'invalid_request', 'setErrs must be an object keyed by jti');
  for (const value of Object.values(setErrs as Record<string, unknown>)) {
    if (typeof value !== 'object' || value === null || typeof (value as { err?: unknown }).err !== 'string') throw new PollError(400, 'invalid_request', 'each setErrs member needs an err string');
  }
  return { maxEvents, returnImmediately, ack: ack as string[], setErrs: setErrs as PollRequest['setErrs'] };
}

/** The subscription a poll credential names, or 401. */
export async function pollSubscription(deps: PollDeps, token: string | undefined): Promise<SubscriptionRow> {
  const sub = token && token.startsWith('rce_') && token.length < 100 ? await subscriptionBySecret(deps.storage.db, digestOf(token)) : undefined;
  if (!sub || sub.method !== 'poll') throw new PollError(401, 'authentication_failed', 'send the poll subscription\'s token as a Bearer token');
  return sub;
}

const seqOf = (teamId: string, jti: string): number | undefined => {
  const match = new RegExp(`^${teamId}\\.(\\d{1,15})$`).exec(jti);
  return match ? Number(match[1]) : undefined;
};

/** Settles acknowledged and refused SETs, moving the cursor over the leading settled ones. */
async function settle(deps: PollDeps, sub: SubscriptionRow, request: PollRequest): Promise<number> {
  const settled = new Set<number>();
  const acknowledged = new Set<number>();
  for (const jti of request.ack) {
    const seq = seqOf(sub.team_id, jti);
    if (seq !== undefined && seq > sub.cursor) {
      settled.add(seq);
      acknowledged.add(seq);
    }
  }
  for (const [jti, error] of Object.entries(request.setErrs)) {
    const seq = seqOf(sub.team_id, jti);
    if (seq === undefined || seq <= sub.cursor) continue;
    settled.add(seq);
    await insertAttempt(deps.storage.db, { id: newId(), subscription_id: sub.id, seq, at: iso(deps.clock), status: null, latency_ms: 0, error: `receiver reported ${error.err}${error.description ? `: ${String(error.description).slice(0, 300)}` : ''}` });
  }
  if (settled.size === 0) return sub.cursor;
  const wanted = wantedBy(sub);
  let cursor = sub.cursor;
  const highest = Math.max(...settled);
  const passed: EventRow[] = [];
  while (cursor < highest) {
    const rows = await eventsAfter(deps.storage.db, sub.team_id, cursor, 500);
    if (rows.length === 0) break;
    const carries = await carriedOf(deps.storage.db, sub, wanted, rows);
    let stopped = false;
    for (const row of rows) {
      if (row.seq > highest || (carries(row) && !settled.has(row.seq))) {
        stopped = true;
        break;
      }
      cursor = row.seq;
      if (acknowledged.has(row.seq)) passed.push(row);
    }
    if (stopped) break;
  }
  if (cursor !== sub.cursor && !(await moveCursor(deps.storage.db, sub.id, sub.cursor, cursor, iso(deps.clock)))) {
    throw new PollError(409, 'invalid_request', 'another poll of this subscription settled SETs at the same time; poll again');
  }
  for (const row of passed) observeAccepted(deps.latency, deps.clock, 'poll', row);
  return cursor;
}

export interface PollResponse {
  readonly sets: Record<string, string>;
  readonly moreAvailable: boolean;
}

/**
 * One poll: settle, then answer the pending SETs (waiting for one when asked to). `stop` ends a
 * wait at once (the client went away, or the server is closing): the answer is what is pending then.
 */
export async function poll(deps: PollDeps, sub: SubscriptionRow, request: PollRequest, stop: AbortSignal = new AbortController().signal): Promise<PollResponse> {
  const cursor = await settle(deps, sub, request);
  if (request.maxEvents === 0 || sub.state !== 'active') return { sets: {}, moreAvailable: false };
  const wanted = wantedBy(sub);
  const deadline = Date.now() + (request.returnImmediately ? 0 : LONG_POLL_MS);
  for (;;) {
    const pending: EventRow[] = [];
    let after = cursor;
    let more = false;
    // Reads past unwanted events until maxEvents wanted ones (or the end) are found.
    for (;;) {
      const rows = await eventsAfter(deps.storage.db, sub.team_id, after, Math.min(500, request.maxEvents + 1));
      const carries = await carriedOf(deps.storage.db, sub, wanted, rows);
      for (const row of rows) {
        if (!carries(row)) continue;
        if (pending.length === request.maxEvents) {
          more = true;
          break;
        }
        pending.push(row);
      }
      if (more || rows.length === 0) break;
      after = rows.at(-1)!.seq;
    }
    if (pending.length > 0 || Date.now() >= deadline || stop.aborted) {
      const sets: Record<string, string> = {};
      for (const row of pending) {
        const claims = setClaims(row, { issuer: deps.issuer, audience: audienceOf(sub, `${deps.issuer}/v2/events/poll/${sub.id}`), full: sub.full === 1 });
        sets[String(claims.jti)] = await deps.signer.sign(claims);
      }
      return { sets, moreAvailable: more };
    }
    await sleep(LONG_POLL_STEP_MS, undefined, { signal: stop }).catch(() => {});
    // Stopped while waiting: nothing was pending at the last look.
    if (stop.aborted) return { sets: {}, moreAvailable: false };
  }
}
