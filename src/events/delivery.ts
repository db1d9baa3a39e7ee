/**
 * Push delivery (RFC 8935). Every instance runs one
 * DeliveryWorker, owned by its app and stopped when the app closes. A tick numbers the feeds'
 * committed events (PostgreSQL: repos/events.ts numberFeeds), finds push subscriptions that are
 * active, due and behind their team's feed, a few per team, and takes each one's lease (a
 * conditional UPDATE that one instance wins, on both engines; a lease whose instance died
 * expires and is taken over). The holder keeps the lease until the subscription has caught up,
 * but delivers in turns (fair-queue.ts): a turn POSTs one SET, moves the cursor by
 * compare-and-set, and puts the subscription at the back of its team's queue; teams take turns
 * round robin, each with at most its `delivery.slots` in flight on this instance, and each
 * request waits at most the team's `receiver.ms` (never more than the instance's timeout). So a
 * subscription's order is kept (one turn of it at a time, each after the previous SET was
 * accepted), an event is sent again only when its acceptance was not recorded (at-least-once;
 * receivers de-duplicate by `jti`), and a team's slow receivers or long backlog spend that
 * team's slots only: another team's event waits for at most one turn per team.
 *
 * Before each connection the receiver's host is resolved and every address checked
 * (receivers.ts), and the socket connects to a checked address only (`pinnedLookup`).
 *
 * A failure (a refused address, a network error, the timeout, a redirect, which is never
 * followed, or any answer but 2xx) is logged (one warning per attempt: subscription, team, seq,
 * status, reason), counted (`failures`: rollcall_event_delivery_failures_total{reason}), and retried after an exponential backoff with
 * jitter; after 24 hours of failures the subscription pauses with the reason
 * (SubscriptionView.pausedReason). The log keeps a category only (`failureCategory`: refused,
 * tls, timeout, dns, forbidden-address, network, `http <status>`), never the receiver's answer
 * nor the network error's text: a receiver URL is a team's choice, and what an internal
 * service answers, or how a port fails, is not theirs to read. A 400 with an RFC 8935 error
 * body means the receiver read the SET and refused it: retrying cannot help, so it is logged
 * (with the error code when RFC 8935 registers it) and the stream moves on. SCIM requests never
 * wait for delivery.
 *
 * An SSF stream (format `ssf`, issue 33) sends only the Shared Signals it carries (ssf/carriage.ts:
 * its events, less the subjects its receiver removed, re-read with its configuration once per
 * batch), with its receiver's Authorization header when it gave one (never logged); each 2xx is
 * reported to `latency` (ssf/latency.ts) with the signal's commit-to-acceptance time.
 *
 * A `webhook` subscription (issue 34) sends a Standard Webhooks request rendered and signed by
 * webhook.ts instead of a SET; its order, retries, leases, turns, egress checks and log are these.
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.ts';
import { newId } from '../ids.ts';
import type { Storage } from '../storage/connect.ts';
import { transact } from '../storage/statements.ts';
import { eventsAfter, numberFeeds } from '../storage/repos/events.ts';
import type { EventRow } from '../storage/repos/events.ts';
import { advanceCursor, claimLease, dueSubscriptions, insertAttempt, recordDelivered, recordFailure, releaseLease, renewLease, streamConfigText } from '../storage/repos/subscriptions.ts';
import type { AttemptRow, SubscriptionRow } from '../storage/repos/subscriptions.ts';
import type { Executor } from '../storage/types.ts';
import { pinnedLookup, ReceiverRefused, until } from './receivers.ts';
import type { ReceiverPolicy } from './receivers.ts';
import { budgetsOf } from '../budgets.ts';
import { FairQueue } from './fair-queue.ts';
import { setClaims } from './set.ts';
import { audienceOf, wantedBy } from './stream-config.ts';
import type { SetSigner } from './set.ts';
import type { Rendered, WebhookSigner } from './webhook.ts';
import { WebhookSecretUnreadable } from './webhook-secrets.ts';
import type { SecretBox } from '../keys/sealed.ts';
import { carriedOf, pushAuthorization, StreamAuthorizationUnreadable } from './ssf/carriage.ts';
import type { Carries } from './ssf/carriage.ts';
import { observeAccepted } from './ssf/latency.ts';
import type { SignalLatency } from './ssf/latency.ts';

export interface DeliverySettings {
  /** How often an idle worker looks for due subscriptions. */
  readonly pollIntervalMs: number;
  /** How long a claim lasts without renewal (renewed before every send; > timeout). */
  readonly leaseMs: number;
  readonly timeoutMs: number;
  /** Subscriptions one instance delivers at once. */
  readonly maxConcurrent: number;
  readonly backoffBaseMs: number;
  readonly backoffMaxMs: number;
  /** Failing this long pauses the subscription. */
  readonly giveUpAfterMs: number;
}

export const DEFAULT_DELIVERY: DeliverySettings = {
  pollIntervalMs: 200,
  leaseMs: 30_000,
  timeoutMs: 10_000,
  maxConcurrent: 16,
  backoffBaseMs: 1_000,
  backoffMaxMs: 60 * 60_000,
  giveUpAfterMs: 24 * 60 * 60_000,
};

const BATCH = 100;
/** Bytes of a receiver's answer read to recognise an RFC 8935 error (never stored); the rest is discarded. */
const ANSWER_BYTES = 2048;

export interface DeliveryDeps {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly signer: SetSigner;
  /** Renders and signs the attempts of `webhook` subscriptions (webhook.ts) instead of a SET. */
  readonly webhooks: WebhookSigner;
  readonly issuer: string;
  readonly log: FastifyBaseLogger;
  readonly settings: DeliverySettings;
  /** Where a receiver may be: checked again before every connection. */
  readonly receivers: ReceiverPolicy;
  /** Opens SSF streams' sealed Authorization headers (KeyStore.box(STREAM_SECRETS)). */
  readonly streams?: SecretBox;
  /** Told each Shared Signal a receiver accepted, with its commit-to-acceptance time. */
  readonly latency?: SignalLatency;
  /** Told each failed attempt, by reason (http/metrics.ts counts them). */
  readonly failures?: DeliveryFailures;
}

/** What counts failed push attempts (the metrics), by `failureReason`. */
export interface DeliveryFailures {
  deliveryFailed(reason: string): void;
}

/**
 * A failed attempt's reason as a metric label, from the few the log keeps: the category
 * (refused, tls, timeout, dns, forbidden_address, network, secret), an answer's status class
 * (`http_4xx`, `http_5xx`, ...), or `set_rejected` for a SET its receiver read and refused (RFC
 * 8935 2.3: settled, not retried, but the event never arrived).
 */
export function failureReason(error: string | null): string {
  if (error === null) return 'unknown';
  const http = /^http (\d)\d\d( .+)?$/.exec(error);
  if (http) return http[2] === undefined ? `http_${http[1]}xx` : 'set_rejected';
  return error.replace(/-/g, '_');
}

/** The retry delay after `failures` consecutive failures: exponential, capped, half of it jittered. */
export function backoffMs(settings: Pick<DeliverySettings, 'backoffBaseMs' | 'backoffMaxMs'>, failures: number, random = Math.random): number {
  const delay = Math.min(settings.backoffMaxMs, settings.backoffBaseMs * 2 ** Math.min(30, Math.max(0, failures - 1)));
  return Math.round(delay / 2 + (random() * delay) / 2);
}

interface Outcome {
  readonly delivered: boolean;
  readonly status: number | null;
  readonly error: string | null;
}

interface Answer {
  readonly status: number;
  /** The first ANSWER_BYTES of the body. */
  readonly body: string;
}

/** RFC 8935 section 2.4's registered error codes: the only words of a receiver's answer the log keeps. */
const SET_ERRORS = new Set(['invalid_request', 'invalid_key', 'invalid_issuer', 'invalid_audience', 'authentication_failed', 'access_denied']);

/** The `err` of an RFC 8935 error body (a registered code, or `refused` for any other), or undefined when the body is none. */
function setError(body: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const err = typeof parsed === 'object' && parsed !== null ? (parsed as { err?: unknown }).err : undefined;
  if (typeof err !== 'string') return undefined;
  return SET_ERRORS.has(err) ? err : 'refused';
}

/**
 * The outcome of an answer: 2xx delivered; a 400 with an RFC 8935 error settles a SET (a webhook
 * has no such answer: Standard Webhooks counts anything but 2xx a failure); anything else fails.
 */
function answered(answer: Answer, isSet: boolean): Outcome {
  const { status } = answer;
  if (status >= 200 && status < 300) return { delivered: true, status, error: null };
  const refusal = status === 400 && isSet ? setError(answer.body) : undefined;
  // RFC 8935 section 2.3: the receiver read the SET and refused it; sending it again cannot help.
  if (refusal !== undefined) return { delivered: true, status, error: `http 400 ${refusal}` };
  return { delivered: false, status, error: `http ${status}` };
}

/** A SET's request header (RFC 8935 section 2); webhook.ts renders a webhook's. */
const SET_HEADERS = { 'content-type': 'application/secevent+jwt' } as const;

const TLS_CODES = /^(ERR_SSL_|ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|EPROTO$|HOSTNAME_MISMATCH$)/;

/**
 * What the attempt log keeps of a failure with no answer: a category, never the error's text
 * (which names internal hosts, addresses and how a port failed).
 */
export function failureCategory(error: unknown, why: { timedOut: boolean; stopped: boolean }): string {
  if (error instanceof ReceiverRefused) return error.category;
  if (error instanceof WebhookSecretUnreadable || error instanceof StreamAuthorizationUnreadable) return 'secret';
  if (why.timedOut) return 'timeout';
  if (why.stopped) return 'stopped';
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  if (code === 'ECONNREFUSED') return 'refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'dns';
  if (typeof code === 'string' && TLS_CODES.test(code)) return 'tls';
  return 'network';
}


/**
 * One POST through node:http(s) on the worker's keep-alive agents (not fetch, whose web streams
 * and Request/Response objects are a large share of a delivery's CPU). Never follows a
 * redirect (node:http does not); reads the first ANSWER_BYTES of the answer and drops the
 * connection if more comes. `signal` aborts it (timeout or shutdown). A new connection goes to
 * one of `addresses` (checked by the receiver policy), never to a fresh DNS answer.
 */
function post(url: URL, { body, headers }: Rendered, agents: { http: HttpAgent; https: HttpsAgent }, signal: AbortSignal, addresses: Parameters<typeof pinnedLookup>[0]): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const secure = url.protocol === 'https:';
    const options = {
      method: 'POST',
      headers: { ...headers, accept: 'application/json', 'content-length': Buffer.byteLength(body) },
      signal,
      lookup: pinnedLookup(addresses),
    };
    const request = secure ? httpsRequest(url, { ...options, agent: agents.https }) : httpRequest(url, { ...options, agent: agents.http });
    request.once('error', reject);
    request.once('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).subarray(0, ANSWER_BYTES).toString('utf8') });
      };
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.byteLength;
        if (size >= ANSWER_BYTES) {
          response.destroy();
          finish();
        }
      });
      response.once('end', finish);
      response.once('error', reject);
      // Aborted (timeout, shutdown) or cut off while the answer was coming: no 'end'.
      response.once('close', () => {
        if (!done) reject(signal.aborted ? signal.reason : new Error('the receiver closed the connection before its answer ended'));
      });
    });
    request.end(body);
  });
}

/** A subscription this instance holds the lease of, between its turns. */
interface Held {
  sub: SubscriptionRow;
  /** Which feed rows it wants (stream-config.ts wantedBy; a stream's, as of its last batch). */
  wanted: Carries;
  /** Which rows of `ahead` it delivers (ssf/carriage.ts); the others are passed over. */
  carries: Carries;
  /** The lease as this instance last set it (ms since the epoch). */
  leaseUntil: number;
  /** Events after the cursor read ahead (one read per BATCH events, not one per turn). */
  ahead: EventRow[];
  /** The worker's count of ended turns when it was put in its queue (see #pump). */
  queuedAt: number;
  /** The team's budgets when the subscription was claimed. */
  readonly slots: number;
  readonly receiverMs: number;
}

/** Subscriptions one instance holds per delivery slot (waiting for their turn or in one). */
const HELD_PER_SLOT = 4;

export class DeliveryWorker {
  readonly #deps: DeliveryDeps;
  readonly #owner = `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  readonly #held = new Map<string, Held>();
  readonly #queue = new FairQueue<Held>();
  readonly #running = new Set<Promise<void>>();
  readonly #stop = new AbortController();
  readonly #agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<void> | undefined;
  /** Turns ended so far. */
  #ended = 0;

  constructor(deps: DeliveryDeps) {
    this.#deps = deps;
  }

  start(): void {
    this.#schedule(0);
  }

  /**
   * Stops looking for work, aborts requests in flight (their events stay pending), waits for
   * every turn to end and gives back the leases of the subscriptions waiting for one.
   */
  async stop(): Promise<void> {
    this.#stop.abort();
    clearTimeout(this.#timer);
    await this.#ticking;
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
    await Promise.allSettled(this.#queue.drain().map((held) => this.#release(held)));
    this.#agents.http.destroy();
    this.#agents.https.destroy();
  }

  #schedule(ms: number): void {
    if (this.#stop.signal.aborted) return;
    this.#timer = setTimeout(() => {
      this.#ticking = this.#tick()
        .catch((error: unknown) => this.#deps.log.warn({ err: error }, 'event delivery: looking for work failed; will try again'))
        .finally(() => {
          this.#ticking = undefined;
          this.#schedule(this.#deps.settings.pollIntervalMs);
        });
    }, ms);
    this.#timer.unref();
  }

  #leaseUntil(now: Date): string {
    return new Date(now.getTime() + this.#deps.settings.leaseMs).toISOString();
  }

  /**
   * Numbers the feeds, then claims due subscriptions into their teams' queues: a few per team
   * at most (its slots times HELD_PER_SLOT), the teams interleaved, so that no team's number of
   * subscriptions keeps another's from being claimed.
   */
  async #tick(): Promise<void> {
    const { storage, clock, settings } = this.#deps;
    // Committed events are numbered by the feed's readers on PostgreSQL (migration 015): this
    // worker numbers every team's, so a subscription is due as soon as its team wrote. A team
    // that fails to number holds up no other team, nor the delivery of what is numbered.
    await numberFeeds(storage.db).catch((error: unknown) => this.#deps.log.warn({ err: error }, 'event delivery: numbering the feed failed; will try again'));
    const room = settings.maxConcurrent * HELD_PER_SLOT - this.#held.size;
    if (room > 0 && !this.#stop.signal.aborted) {
      const heldPerTeam = new Map<string, number>();
      const full = new Set<string>();
      for (const held of this.#held.values()) {
        const n = (heldPerTeam.get(held.sub.team_id) ?? 0) + 1;
        heldPerTeam.set(held.sub.team_id, n);
        if (n >= held.slots * HELD_PER_SLOT) full.add(held.sub.team_id);
      }
      const due = await dueSubscriptions(storage.db, { now: clock.now().toISOString(), limit: room, perTeam: HELD_PER_SLOT, skipTeams: [...full] });
      for (const { team_limits: limits, ...sub } of due) {
        if (this.#stop.signal.aborted) break;
        if (this.#held.has(sub.id)) continue;
        const budgets = budgetsOf({ limits });
        const teamHeld = heldPerTeam.get(sub.team_id) ?? 0;
        if (teamHeld >= budgets['delivery.slots'] * HELD_PER_SLOT) continue;
        const now = clock.now();
        if (!(await claimLease(storage.db, sub.id, this.#owner, now.toISOString(), this.#leaseUntil(now)))) continue;
        heldPerTeam.set(sub.team_id, teamHeld + 1);
        const held: Held = {
          sub,
          wanted: wantedBy(sub),
          carries: wantedBy(sub),
          leaseUntil: now.getTime() + settings.leaseMs,
          ahead: [],
          queuedAt: 0,
          slots: budgets['delivery.slots'],
          receiverMs: budgets['receiver.ms'],
        };
        this.#held.set(sub.id, held);
        this.#wait(held);
      }
    }
    this.#pump();
  }

  /** Puts a held subscription at the back of its team's queue. */
  #wait(held: Held): void {
    held.queuedAt = this.#ended;
    this.#queue.setSlots(held.sub.team_id, held.slots);
    this.#queue.push(held.sub.team_id, held);
  }

  /** Starts turns while the instance has a free slot and some team may take one. */
  #pump(): void {
    while (!this.#stop.signal.aborted && this.#queue.inFlight < this.#deps.settings.maxConcurrent) {
      const turn = this.#queue.take();
      if (!turn) return;
      const held = turn.item;
      // Other turns ended while it waited: an administrator may have paused it (or a revocation
      // did) meanwhile, so its state is read again, with its lease, before it sends anything.
      const recheck = this.#ended > held.queuedAt;
      const run: Promise<void> = this.#turn(held, recheck)
        .catch((error: unknown) => {
          this.#deps.log.warn({ err: error, subscription: held.sub.id }, 'event delivery failed; the events stay pending');
          return false;
        })
        .then(async (again) => {
          this.#ended += 1;
          if (again && !this.#stop.signal.aborted) this.#wait(held);
          else await this.#release(held);
        })
        .finally(() => {
          this.#queue.done(turn.teamId);
          this.#running.delete(run);
          this.#pump();
        });
      this.#running.add(run);
    }
  }

  async #release(held: Held): Promise<void> {
    this.#held.delete(held.sub.id);
    await releaseLease(this.#deps.storage.db, held.sub.id, this.#owner).catch(() => {});
  }

  /** Moves the cursor past `to` (with the attempt that delivered it, if any); false to stop. */
  async #advance(held: Held, to: number, attempt?: AttemptRow): Promise<boolean> {
    const { storage, clock, settings } = this.#deps;
    const now = clock.now();
    const move = { owner: this.#owner, from: held.sub.cursor, to, now: now.toISOString(), until: this.#leaseUntil(now) };
    const state = attempt ? await recordDelivered(storage.db, attempt, move) : await advanceCursor(storage.db, { ...move, id: held.sub.id });
    if (state === undefined) return false;
    held.leaseUntil = now.getTime() + settings.leaseMs;
    held.sub = { ...held.sub, cursor: to };
    return state === 'active';
  }

  /**
   * One turn of a subscription: its next wanted event sent (events it does not want are passed
   * over without a request, a batch at most, each run of them by one cursor move). Answers
   * whether it goes on (back to its team's queue) or stops: caught up, failed (retried after
   * the backoff), paused, or its lease lost. Each accepted event costs one transaction (one
   * statement on PostgreSQL): its attempt logged, the cursor moved and the lease extended by one
   * conditional UPDATE that also answers the state. The lease is renewed on its own only when
   * less than a send's timeout of it is left, so a send never outlives it. A read of the feed
   * answers only while the subscription is active and held here (repos/events.ts `readFor`), so an
   * event written after a pause or a revocation committed is never sent; one read before it, in
   * hand, may still be, unless the state is read again first (`recheck`).
   */
  async #turn(held: Held, recheck: boolean): Promise<boolean> {
    const { storage, clock, settings } = this.#deps;
    for (let passed = 0; passed <= BATCH; ) {
      if (this.#stop.signal.aborted) return false;
      if (held.ahead.length === 0) {
        held.ahead = await eventsAfter(storage.db, held.sub.team_id, held.sub.cursor, BATCH, { subscriptionId: held.sub.id, owner: this.#owner });
        if (held.ahead.length === 0) return false;
        if (!(await this.#carriage(held))) return false;
      }
      const row = held.ahead[0]!;
      const now = clock.now();
      if (recheck || held.leaseUntil - now.getTime() <= settings.timeoutMs * 1.5) {
        recheck = false;
        if (!(await renewLease(storage.db, held.sub.id, this.#owner, now.toISOString(), this.#leaseUntil(now)))) return false;
        held.leaseUntil = now.getTime() + settings.leaseMs;
      }
      if (!held.carries(row)) {
        // Not asked for: the cursor moves past it, and past the rows after it in hand that are
        // not asked for either (an SSF stream passes over every SCIM event), by one statement.
        let skip = 1;
        while (skip < held.ahead.length && !held.carries(held.ahead[skip]!)) skip += 1;
        if (!(await this.#advance(held, held.ahead[skip - 1]!.seq))) return false;
        held.ahead.splice(0, skip);
        passed += skip;
        continue;
      }
      const { outcome, attempt } = await this.#send(held.sub, row, Math.min(settings.timeoutMs, held.receiverMs));
      if (outcome.error !== null && outcome.error !== 'stopped') this.#reportFailure(held.sub, row.seq, outcome);
      if (!outcome.delivered) {
        // The attempt and the retry state it leads to, together (one commit; readers never see one without the other).
        const stopping = this.#stop.signal.aborted;
        await transact(storage.db, async (trx) => {
          await insertAttempt(trx, attempt);
          if (!stopping) await this.#failed(trx, held.sub, outcome);
        });
        return false;
      }
      if (outcome.status !== null && outcome.status < 300) observeAccepted(this.#deps.latency, clock, 'push', row);
      if (!(await this.#advance(held, row.seq, attempt))) return false;
      held.ahead.shift();
      held.sub = { ...held.sub, failures: 0, failing_since: null };
      return true;
    }
    return true;
  }

  /**
   * What the subscription carries of the batch just read: a stream's configuration is read again
   * first (its events, its Authorization header may have changed while this instance held it).
   * False when the stream is gone, or its delivery (method, endpoint) changed: this instance then
   * stops holding it, and the stream is claimed again with its new delivery (a delivery change
   * also takes the lease back, streams.ts).
   */
  async #carriage(held: Held): Promise<boolean> {
    const { db } = this.#deps.storage;
    if (held.sub.format === 'ssf') {
      const now = await streamConfigText(db, held.sub.id);
      if (now === undefined || now.method !== held.sub.method || now.url !== held.sub.url) return false;
      const { ssf } = now;
      if (ssf !== held.sub.ssf) {
        held.sub = { ...held.sub, ssf };
        held.wanted = wantedBy(held.sub);
      }
    }
    held.carries = await carriedOf(db, held.sub, held.wanted, held.ahead);
    return true;
  }

  /** One POST of the event's SET; answers the outcome and the attempt to log. */
  async #send(sub: SubscriptionRow, row: EventRow, timeoutMs: number): Promise<{ outcome: Outcome; attempt: AttemptRow }> {
    const { clock, signer, issuer, receivers } = this.#deps;
    const started = performance.now();
    const at = clock.now().toISOString();
    const timeout = AbortSignal.timeout(timeoutMs);
    let outcome: Outcome;
    try {
      const raw = sub.url ?? '';
      if (receivers.shapeProblem(raw) !== undefined) throw new ReceiverRefused('forbidden-address', 'the receiver URL breaks the rules');
      const url = new URL(raw);
      const signal = AbortSignal.any([timeout, this.#stop.signal]);
      // Resolved and checked now, for this connection: the socket goes to these addresses only.
      const addresses = await until(receivers.vetted(url), signal);
      const isSet = sub.format !== 'webhook';
      const authorization = pushAuthorization(this.#deps.streams, sub);
      const headers = authorization === undefined ? SET_HEADERS : { ...SET_HEADERS, authorization };
      const request = isSet ? { body: await signer.sign(setClaims(row, { issuer, audience: audienceOf(sub, raw), full: sub.full === 1 })), headers } : await this.#deps.webhooks.render(sub.id, row);
      outcome = answered(await post(url, request, this.#agents, signal, addresses), isSet);
    } catch (error) {
      outcome = { delivered: false, status: null, error: failureCategory(error, { timedOut: timeout.aborted, stopped: this.#stop.signal.aborted }) };
    }
    const attempt = { id: newId(), subscription_id: sub.id, seq: row.seq, at, status: outcome.status, latency_ms: Math.round(performance.now() - started), error: outcome.error };
    return { outcome, attempt };
  }

  /** One log line and one count per failed attempt (a shutdown's aborted attempt is no failure). */
  #reportFailure(sub: SubscriptionRow, seq: number, outcome: Outcome): void {
    const reason = failureReason(outcome.error);
    this.#deps.failures?.deliveryFailed(reason);
    const settled = outcome.delivered ? 'the receiver refused the SET; it is not sent again' : 'will retry after the backoff';
    this.#deps.log.warn({ subscription: sub.id, team: sub.team_id, seq, status: outcome.status, reason: outcome.error, failures: sub.failures + 1 }, `event delivery attempt failed (${outcome.error ?? 'unknown'}): ${settled}`);
  }

  async #failed(ex: Executor, sub: SubscriptionRow, outcome: Outcome): Promise<void> {
    const { clock, settings } = this.#deps;
    const now = clock.now();
    const failures = sub.failures + 1;
    const failingSince = sub.failing_since ?? now.toISOString();
    if (now.getTime() - Date.parse(failingSince) >= settings.giveUpAfterMs) {
      const reason = `paused after failing since ${failingSince} (${failures} attempts); last error: ${outcome.error ?? 'unknown'}`;
      await recordFailure(ex, sub.id, this.#owner, { state: 'paused', paused_reason: reason, failures, failing_since: failingSince, updated_at: now.toISOString() });
      this.#deps.log.warn({ subscription: sub.id, team: sub.team_id }, reason);
      return;
    }
    const next = new Date(now.getTime() + backoffMs(settings, failures)).toISOString();
    await recordFailure(ex, sub.id, this.#owner, { failures, failing_since: failingSince, next_attempt_at: next, updated_at: now.toISOString() });
  }
}
