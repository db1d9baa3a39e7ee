/**
 * The key fetcher (remote-keys.ts): JWK Sets (RFC 7517 section 5) published by a client's
 * `jwks_uri` or by an external issuer found through OpenID Connect Discovery 1.0 section 4
 * (`<issuer>/.well-known/openid-configuration`, its `issuer` equal to the one configured, its
 * `jwks_uri`), fetched only when an assertion needs them, by key-get.ts under the egress policy.
 * One fetcher per app, its cache shared by every team, one entry per source:
 *
 * - Freshness is the publisher's `Cache-Control: max-age` clamped to [minTtl, maxTtl] (5 minutes
 *   to 24 hours). `no-store`, `no-cache` or no header get the minimum: every assertion fetching
 *   again would let a client make Rollcall hammer an issuer, and five minutes is the shortest
 *   delay DESIGN.md section 11 allows before a removed key stops being trusted.
 * - An unknown `kid` fetches again only when the last attempt for the source is at least
 *   `kidRefetchMs` (a minute) old; otherwise the cached set answers and verification fails. So
 *   a rotated key is found within a minute, and assertions with made-up `kid`s cost one fetch a
 *   minute at most.
 * - Callers wanting the same source share one fetch (single flight).
 * - A failed fetch is remembered for `failureTtlMs`: meanwhile the source is not asked again
 *   and its callers get the same KeyFetchFailed at once, so a dead issuer is not hammered and
 *   delays only the requests that need it. Sources never share a failure.
 * - When a refetch fails, the last good set is served (stale) for at most `maxStaleMs` after its
 *   freshness ended: an issuer's outage does not stop its clients at once, and a set its
 *   publisher replaced is dropped as soon as a fetch succeeds.
 * - At most `maxSources` entries; the least recently used goes first.
 *
 * A whole retrieval (the OpenID configuration when needed, then the set) takes at most
 * `timeoutMs`. The configuration of an issuer source is cached beside its set, under the same
 * freshness rule. It owns no HTTP detail (key-get.ts) and no knowledge of assertions.
 */
import type { JSONWebKeySet, JWK } from 'jose';
import { systemClock } from '../clock.ts';
import type { Clock } from '../clock.ts';
import type { ReceiverPolicy } from '../events/receivers.ts';
import { getJson, keyUrl } from './key-get.ts';
import type { Fetched } from './key-get.ts';
import { KeyFetchFailed } from './remote-keys.ts';
import type { KeySource, RemoteKeys } from './remote-keys.ts';

export interface KeyFetchSettings {
  /** Which hosts may be reached (config.allowReceivers, as push delivery). */
  readonly policy: ReceiverPolicy;
  readonly clock?: Clock;
  /** The longest a retrieval may take, connection and body included. */
  readonly timeoutMs?: number;
  /** The largest body read; the connection is dropped past it. */
  readonly maxBytes?: number;
  readonly minTtlMs?: number;
  readonly maxTtlMs?: number;
  /** The shortest time between two fetches of a source caused by an unknown `kid`. */
  readonly kidRefetchMs?: number;
  /** How long a failed fetch is remembered. */
  readonly failureTtlMs?: number;
  /** How long past its freshness a set is served when its refetch fails. */
  readonly maxStaleMs?: number;
  readonly maxSources?: number;
  /** More keys than this and the set is refused. */
  readonly maxKeys?: number;
  /** Told of every fetch (for a log or a metric). */
  readonly onFetch?: (event: FetchEvent) => void;
}

export interface FetchEvent {
  /** `jwks <url>` or `issuer <url>`. */
  readonly source: string;
  readonly ok: boolean;
  /** Why it failed (for the operator's log only). */
  readonly reason?: string;
  /** A failed refetch whose callers are served the previous set. */
  readonly servedStale?: boolean;
}

export const KEY_FETCH_DEFAULTS = {
  timeoutMs: 5_000,
  maxBytes: 64 * 1024,
  minTtlMs: 5 * 60_000,
  maxTtlMs: 24 * 3_600_000,
  kidRefetchMs: 60_000,
  failureTtlMs: 30_000,
  maxStaleMs: 24 * 3_600_000,
  maxSources: 1_000,
  maxKeys: 100,
} as const;

/** A JWK member that only a private key has (RFC 7518 sections 6.2.2 and 6.3.2). */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;
const EC_CURVES = new Set(['P-256', 'P-384', 'P-521']);

/** `key` when it is a public RSA or EC key with its members present, else undefined. */
function publicKey(key: unknown): JWK | undefined {
  if (typeof key !== 'object' || key === null || Array.isArray(key)) return undefined;
  const k = key as Record<string, unknown>;
  if (PRIVATE_MEMBERS.some((member) => member in k)) return undefined;
  if (k['kid'] !== undefined && typeof k['kid'] !== 'string') return undefined;
  if (k['kty'] === 'RSA' && typeof k['n'] === 'string' && typeof k['e'] === 'string') return k as JWK;
  if (k['kty'] === 'EC' && typeof k['crv'] === 'string' && EC_CURVES.has(k['crv']) && typeof k['x'] === 'string' && typeof k['y'] === 'string') return k as JWK;
  return undefined;
}

/** The public RSA and EC keys of a JWK Set document; any other key is dropped. */
export function jwkSetOf(body: unknown, where: string, maxKeys: number): JSONWebKeySet {
  const keys = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { keys?: unknown }).keys : undefined;
  if (!Array.isArray(keys)) throw new KeyFetchFailed(`${where} is not a JWK Set (no "keys" array)`);
  if (keys.length > maxKeys) throw new KeyFetchFailed(`${where} holds ${keys.length} keys, over the ${maxKeys} accepted`);
  // Frozen: one set answers every caller until it is replaced.
  return Object.freeze({ keys: Object.freeze(keys.flatMap((key) => publicKey(key) ?? []).map((key) => Object.freeze(key))) as JWK[] });
}

interface Entry {
  /** The last set fetched, and until when it is fresh (ms since the epoch). */
  set?: JSONWebKeySet;
  freshUntil: number;
  /** An issuer source's `jwks_uri`, from its configuration, and until when that is fresh. */
  jwksUri?: string;
  jwksUriFreshUntil: number;
  /** When the source was last asked (success or not). */
  lastAttempt: number;
  /** The last failure and until when it answers for the source. */
  failure?: { readonly error: KeyFetchFailed; readonly until: number };
  inflight?: Promise<JSONWebKeySet>;
}

const hasKid = (set: JSONWebKeySet, kid: string): boolean => set.keys.some((key) => key.kid === kid);

export class KeyFetcher implements RemoteKeys {
  readonly #policy: ReceiverPolicy;
  readonly #clock: Clock;
  readonly #s: { readonly [K in keyof typeof KEY_FETCH_DEFAULTS]: number };
  readonly #onFetch: ((event: FetchEvent) => void) | undefined;
  /** Entries by source, least recently used first. */
  readonly #entries = new Map<string, Entry>();

  constructor(settings: KeyFetchSettings) {
    this.#policy = settings.policy;
    this.#clock = settings.clock ?? systemClock;
    this.#onFetch = settings.onFetch;
    const d = KEY_FETCH_DEFAULTS;
    this.#s = {
      timeoutMs: settings.timeoutMs ?? d.timeoutMs,
      maxBytes: settings.maxBytes ?? d.maxBytes,
      minTtlMs: settings.minTtlMs ?? d.minTtlMs,
      maxTtlMs: settings.maxTtlMs ?? d.maxTtlMs,
      kidRefetchMs: settings.kidRefetchMs ?? d.kidRefetchMs,
      failureTtlMs: settings.failureTtlMs ?? d.failureTtlMs,
      maxStaleMs: settings.maxStaleMs ?? d.maxStaleMs,
      maxSources: settings.maxSources ?? d.maxSources,
      maxKeys: settings.maxKeys ?? d.maxKeys,
    };
  }

  async keySet(source: KeySource, kid: string | undefined): Promise<JSONWebKeySet> {
    const name = 'jwksUri' in source ? `jwks ${source.jwksUri}` : `issuer ${source.issuer}`;
    const entry = this.#entry(name);
    const now = this.#now();
    // 1. Fresh, and it has the key asked for, or the source was asked less than a minute ago.
    if (entry.set !== undefined && now < entry.freshUntil) {
      if (kid === undefined || hasKid(entry.set, kid) || now - entry.lastAttempt < this.#s.kidRefetchMs) return entry.set;
    }
    // 2. A fetch under way answers every caller.
    if (entry.inflight !== undefined) return entry.inflight;
    // 3. A recent failure answers without asking the source again (the stale set, while it may).
    if (entry.failure !== undefined && now < entry.failure.until) {
      if (this.#usable(entry, now)) return entry.set!;
      throw entry.failure.error;
    }
    // 4. Fetch.
    entry.inflight = this.#refresh(name, source, entry).finally(() => {
      entry.inflight = undefined;
    });
    return entry.inflight;
  }

  /** How many sources are cached (for tests and a metric). */
  get size(): number {
    return this.#entries.size;
  }

  #now(): number {
    return this.#clock.now().getTime();
  }

  /** A set that may still answer when its refetch failed. */
  #usable(entry: Entry, now: number): boolean {
    return entry.set !== undefined && now < entry.freshUntil + this.#s.maxStaleMs;
  }

  #entry(name: string): Entry {
    let entry = this.#entries.get(name);
    if (entry !== undefined) {
      this.#entries.delete(name);
    } else {
      entry = { freshUntil: 0, jwksUriFreshUntil: 0, lastAttempt: Number.NEGATIVE_INFINITY };
      while (this.#entries.size >= this.#s.maxSources) {
        const oldest = this.#entries.keys().next().value;
        if (oldest === undefined) break;
        this.#entries.delete(oldest);
      }
    }
    this.#entries.set(name, entry);
    return entry;
  }

  #ttl(fetched: Fetched): number {
    const asked = fetched.maxAgeSeconds === undefined ? 0 : fetched.maxAgeSeconds * 1000;
    return Math.min(this.#s.maxTtlMs, Math.max(this.#s.minTtlMs, asked));
  }

  /** Fetches the source's set (and its configuration when stale), within one deadline. */
  async #refresh(name: string, source: KeySource, entry: Entry): Promise<JSONWebKeySet> {
    const started = this.#now();
    entry.lastAttempt = started;
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new KeyFetchFailed(`${name}: no key set within ${this.#s.timeoutMs} ms`)), this.#s.timeoutMs);
    try {
      const jwksUri = 'jwksUri' in source ? source.jwksUri : await this.#discover(source.issuer, entry, started, deadline.signal);
      const url = keyUrl(jwksUri, this.#policy);
      const fetched = await getJson(url, this.#policy, deadline.signal, this.#s.maxBytes);
      const set = jwkSetOf(fetched.body, `${url.origin}${url.pathname}`, this.#s.maxKeys);
      entry.set = set;
      entry.freshUntil = started + this.#ttl(fetched);
      entry.failure = undefined;
      this.#onFetch?.({ source: name, ok: true });
      return set;
    } catch (thrown) {
      const error = thrown instanceof KeyFetchFailed ? thrown : new KeyFetchFailed(`${name}: ${String(thrown)}`);
      entry.failure = { error, until: this.#now() + this.#s.failureTtlMs };
      const stale = this.#usable(entry, this.#now());
      this.#onFetch?.({ source: name, ok: false, reason: error.message, servedStale: stale });
      if (stale) return entry.set!;
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The issuer's `jwks_uri`, from its cached OpenID configuration or a fresh one. */
  async #discover(issuer: string, entry: Entry, now: number, signal: AbortSignal): Promise<string> {
    if (entry.jwksUri !== undefined && now < entry.jwksUriFreshUntil) return entry.jwksUri;
    const base = keyUrl(issuer, this.#policy);
    if (base.search || base.hash) throw new KeyFetchFailed(`${issuer}: an issuer identifier has no query or fragment`);
    const url = keyUrl(`${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`, this.#policy);
    const fetched = await getJson(url, this.#policy, signal, this.#s.maxBytes);
    const body = fetched.body;
    const config = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as { issuer?: unknown; jwks_uri?: unknown }) : {};
    if (config.issuer !== issuer) throw new KeyFetchFailed(`${url.origin}${url.pathname} names another issuer than ${issuer}`);
    if (typeof config.jwks_uri !== 'string') throw new KeyFetchFailed(`${url.origin}${url.pathname} names no jwks_uri`);
    entry.jwksUri = config.jwks_uri;
    entry.jwksUriFreshUntil = now + this.#ttl(fetched);
    return config.jwks_uri;
  }
}
