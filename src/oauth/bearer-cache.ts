/**
 * The bearer check of every API request (RFC 6750 2.1, 3.1), with verified access tokens kept
 * in this process for a short time so that a request costs no database round trip for its token.
 * What it must not do: serve a token after its access was taken away.
 *
 * - Keyed by the token's SHA-256 (what storage keys it by), never the raw token.
 * - Bounded: at most `maxEntries` tokens (the oldest entry makes room), each for at most
 *   `ttlSeconds` and never past the token's own expiry.
 * - Revocation takes effect at once: every write that ends a token's access announces it
 *   (storage/revocations.ts) and the matching entries are dropped: the token itself, its grant,
 *   its user, its client, or its team (the cached team row is part of the answer). In this
 *   process a notice arrives when the write commits, before the write's response; from another
 *   instance through PostgreSQL's LISTEN/NOTIFY. A lookup that began before a notice is not
 *   cached (`#generation`), since it may have read the row as it was before the write.
 * - Fail safe: while the feed is not live (the LISTEN connection is down) nothing is served
 *   from memory or added to it; the feed's recovery empties the cache.
 *
 * Unknown, expired and revoked tokens are not cached: each costs its lookup.
 */
import type { Clock } from '../clock.ts';
import { sha256 } from '../ids.ts';
import type { Storage } from '../storage/connect.ts';
import type { Revoked } from '../storage/revocations.ts';
import { accessTokenByHash, isAccessTokenShaped } from './tokens.ts';
import type { Bearer } from './tokens.ts';

export interface BearerCacheSettings {
  /** How long a verified token is served from memory (0: never; every request reads it). */
  readonly ttlSeconds: number;
  readonly maxEntries: number;
}

export const DEFAULT_BEARER_CACHE: BearerCacheSettings = { ttlSeconds: 30, maxEntries: 10_000 };

interface Entry {
  readonly bearer: Bearer;
  /** Epoch ms after which the entry is not served: the earlier of the TTL and the token's expiry. */
  readonly until: number;
  readonly familyId: string | null;
}

export class BearerCache {
  readonly #storage: Storage;
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  /** Insertion order is age order: the first key is the oldest entry. */
  readonly #entries = new Map<string, Entry>();
  /** Bumped by every notice: a lookup that started under an older generation is not kept. */
  #generation = 0;
  readonly #unsubscribe: () => void;

  constructor(storage: Storage, clock: Clock, settings: BearerCacheSettings = DEFAULT_BEARER_CACHE) {
    this.#storage = storage;
    this.#clock = clock;
    this.#ttlMs = Math.max(0, settings.ttlSeconds) * 1000;
    this.#maxEntries = Math.max(1, settings.maxEntries);
    this.#unsubscribe = this.#ttlMs > 0 ? storage.revocations.subscribe((revoked) => this.#revoked(revoked)) : () => {};
  }

  /** Entries held now (tests, metrics). */
  get size(): number {
    return this.#entries.size;
  }

  /** Resolves once revocations from every instance reach this cache (or after `timeoutMs`). */
  ready(timeoutMs: number): Promise<boolean> {
    return this.#ttlMs > 0 ? this.#storage.revocations.ready(timeoutMs) : Promise.resolve(true);
  }

  /** The grant behind a presented access token, or undefined if it is unknown, expired or revoked. */
  async verify(token: string): Promise<Bearer | undefined> {
    if (!isAccessTokenShaped(token)) return undefined;
    const hash = sha256(token);
    const now = this.#clock.now().getTime();
    const caching = this.#ttlMs > 0 && this.#storage.revocations.live;
    if (caching) {
      const hit = this.#entries.get(hash);
      if (hit) {
        if (now < hit.until) return hit.bearer;
        this.#entries.delete(hash);
      }
    }
    const generation = this.#generation;
    const found = await accessTokenByHash(this.#storage.db, this.#clock, hash);
    if (!found) return undefined;
    if (caching && generation === this.#generation && this.#storage.revocations.live) {
      if (this.#entries.size >= this.#maxEntries) {
        const oldest = this.#entries.keys().next();
        if (!oldest.done) this.#entries.delete(oldest.value);
      }
      const until = Math.min(now + this.#ttlMs, Date.parse(found.expiresAt));
      this.#entries.set(hash, { bearer: found.bearer, until, familyId: found.familyId });
    }
    return found.bearer;
  }

  close(): void {
    this.#unsubscribe();
    this.#entries.clear();
  }

  #revoked(revoked: Revoked): void {
    this.#generation++;
    if (revoked.kind === 'all') {
      this.#entries.clear();
      return;
    }
    if (revoked.kind === 'token') {
      this.#entries.delete(revoked.id);
      return;
    }
    const id = revoked.id;
    for (const [hash, entry] of this.#entries) {
      const { bearer } = entry;
      const hit =
        revoked.kind === 'user' ? bearer.userId === id
          : revoked.kind === 'client' ? bearer.clientId === id
            : revoked.kind === 'team' ? bearer.team.id === id
              : entry.familyId === id;
      if (hit) this.#entries.delete(hash);
    }
  }
}
