/**
 * A rate limiter in process memory whose store holds at most `maxKeys` keys:
 * the brute-force limits (limits.ts) count what anonymous callers send, names and addresses
 * included, so an unbounded store grows with every random name. It keeps the counting rules of
 * rate-limiter-flexible's RateLimiterMemory (a fixed window from a key's first point; `block`
 * sets `points + 1` for its seconds; `blockDuration` blocks a key the first time it goes over)
 * and is a RateLimiterCompatibleAbstract, so it also serves as RateLimiterRedis's insurance
 * limiter. `execEvenly` is not offered (nothing here uses it). Entries expire lazily, on their
 * next read or when evicted: no timer per key.
 *
 * Eviction is two-tier. A key touched once waits in `fresh`; a second touch moves it to
 * `repeated`. When the store is full the least recently used fresh key goes first, a repeated
 * key only once no fresh key is left. One-shot keys (random names, random addresses) therefore
 * push out only each other, and a key being guessed at, which is touched on every guess, keeps
 * its count. A flood that touches each of `maxKeys` keys twice can still push it out; then the
 * other limits on the same attempt (per address, per identity) still apply.
 */
import { RateLimiterCompatibleAbstract, RateLimiterRes } from 'rate-limiter-flexible';

interface Entry {
  value: number;
  /** Epoch milliseconds; null for never. */
  readonly expiresAt: number | null;
}

export interface BoundedLimiterOptions {
  readonly points: number;
  /** Seconds of a window (0: never expires). */
  readonly duration: number;
  readonly keyPrefix: string;
  readonly maxKeys: number;
  readonly blockDuration?: number;
}

export class BoundedMemoryLimiter extends RateLimiterCompatibleAbstract {
  readonly points: number;
  readonly duration: number;
  override readonly keyPrefix: string;
  override blockDuration: number;
  /** Not offered: RateLimiterRedis copies its own (false) onto its insurance limiter; nothing reads it here. */
  override execEvenly = false;
  readonly #maxKeys: number;
  readonly #fresh = new Map<string, Entry>();
  readonly #repeated = new Map<string, Entry>();

  constructor(options: BoundedLimiterOptions) {
    super();
    this.points = options.points;
    this.duration = options.duration;
    this.keyPrefix = options.keyPrefix;
    this.blockDuration = options.blockDuration ?? 0;
    this.#maxKeys = Math.max(1, Math.floor(options.maxKeys));
  }

  getKey(key: string | number): string {
    return `${this.keyPrefix}:${key}`;
  }

  /** Keys held now, expired ones not yet dropped included (metrics, tests). */
  get size(): number {
    return this.#fresh.size + this.#repeated.size;
  }

  override consume(key: string | number, points = 1): Promise<RateLimiterRes> {
    const rlKey = this.getKey(key);
    let res = this.#add(rlKey, points, this.duration);
    if (res.consumedPoints <= this.points) return Promise.resolve(res);
    if (this.blockDuration > 0 && res.consumedPoints <= this.points + points) res = this.#put(rlKey, res.consumedPoints, this.blockDuration);
    return Promise.reject(res);
  }

  override penalty(key: string | number, points = 1): Promise<RateLimiterRes> {
    return Promise.resolve(this.#add(this.getKey(key), points, this.duration));
  }

  override reward(key: string | number, points = 1): Promise<RateLimiterRes> {
    return Promise.resolve(this.#add(this.getKey(key), -points, this.duration));
  }

  /** A read is a use: the key becomes the most recently used of its tier (a blocked source polling stays remembered). */
  override get(key: string | number): Promise<RateLimiterRes | null> {
    const rlKey = this.getKey(key);
    const entry = this.#live(rlKey);
    if (!entry) return Promise.resolve(null);
    const tier = this.#fresh.has(rlKey) ? this.#fresh : this.#repeated;
    tier.delete(rlKey);
    tier.set(rlKey, entry);
    return Promise.resolve(this.#res(entry, false));
  }

  /** Like RateLimiterMemory's, the answer of `set` and `block` leaves remainingPoints at 0. */
  override set(key: string | number, points: number, secDuration: number): Promise<RateLimiterRes> {
    return Promise.resolve(this.#stated(this.#put(this.getKey(key), points, secDuration >= 0 ? secDuration : this.duration)));
  }

  override block(key: string | number, secDuration: number): Promise<RateLimiterRes> {
    return Promise.resolve(this.#stated(this.#put(this.getKey(key), this.points + 1, secDuration)));
  }

  override delete(key: string | number): Promise<boolean> {
    const rlKey = this.getKey(key);
    // An expired entry counts as gone already (#live drops it).
    if (!this.#live(rlKey)) return Promise.resolve(false);
    return Promise.resolve(this.#fresh.delete(rlKey) || this.#repeated.delete(rlKey));
  }

  /** The entry of `rlKey` unless it has expired (then it is dropped). */
  #live(rlKey: string): Entry | undefined {
    const entry = this.#fresh.get(rlKey) ?? this.#repeated.get(rlKey);
    if (entry && entry.expiresAt !== null && entry.expiresAt <= Date.now()) {
      this.#fresh.delete(rlKey);
      this.#repeated.delete(rlKey);
      return undefined;
    }
    return entry;
  }

  /** Adds `points` to a live entry (a touch: it becomes the most recently used, and repeated), or starts a window. */
  #add(rlKey: string, points: number, seconds: number): RateLimiterRes {
    const entry = this.#live(rlKey);
    if (!entry) return this.#put(rlKey, points, seconds);
    entry.value += points;
    this.#fresh.delete(rlKey);
    this.#repeated.delete(rlKey);
    this.#repeated.set(rlKey, entry);
    return this.#res(entry, false);
  }

  /** Sets `rlKey` to `value` for `seconds`; a key already held counts as touched again. */
  #put(rlKey: string, value: number, seconds: number): RateLimiterRes {
    const held = this.#fresh.delete(rlKey) || this.#repeated.delete(rlKey);
    if (!held) this.#makeRoom();
    const entry: Entry = { value, expiresAt: seconds > 0 ? Date.now() + seconds * 1000 : null };
    (held ? this.#repeated : this.#fresh).set(rlKey, entry);
    return this.#res(entry, true);
  }

  /**
   * While full: drops the least recently used repeated key if it has expired, else evicts the
   * least recently used fresh key, else the least recently used repeated one.
   */
  #makeRoom(): void {
    while (this.size >= this.#maxKeys) {
      const oldestRepeated = this.#repeated.entries().next().value;
      const expired = oldestRepeated !== undefined && oldestRepeated[1].expiresAt !== null && oldestRepeated[1].expiresAt <= Date.now();
      const tier = !expired && this.#fresh.size > 0 ? this.#fresh : this.#repeated;
      tier.delete(tier.keys().next().value!);
    }
  }

  #stated(res: RateLimiterRes): RateLimiterRes {
    return new RateLimiterRes(0, res.msBeforeNext, res.consumedPoints, res.isFirstInDuration);
  }

  #res(entry: Entry, first: boolean): RateLimiterRes {
    const ms = entry.expiresAt === null ? -1 : Math.max(0, entry.expiresAt - Date.now());
    return new RateLimiterRes(Math.max(this.points - entry.value, 0), ms, entry.value, first);
  }
}
