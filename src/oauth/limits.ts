/**
 * Brute-force protection (RFC 6749 2.3.1 and 4.3.2; RFC 9700 2.4; OAUTH-CHECKLIST E12, F3;
 * docs/SECURITY.md 13.1 and 13.5). Counters live in Redis when REDIS_URL is set, so every
 * instance sees the same ones (falling back to process memory while Redis is unreachable), and in
 * process memory otherwise. Windows run on wall-clock time.
 *
 * Every key is a SHA-256 digest of what it counts, so a counter costs the same whatever the
 * caller sent. Failures are counted per pair (identity, source address): a source that fails
 * is blocked with exponential backoff, and nobody else is; a generous ceiling per identity stops
 * guessing spread over many addresses. A password attempt is reserved (a point consumed,
 * atomically, in Redis or in memory) before the password is verified and refunded on success, so
 * parallel guesses cannot pass a "locked?" check together. Every store in process memory holds
 * a bounded number of keys (bounded-limiter.ts), so anonymous traffic leaves memory flat. This
 * module only counts; it never decides whether a credential is right.
 */
import type { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import type { RateLimiterLike, RateLimiterRes } from 'rate-limiter-flexible';
import { sha256 } from '../ids.ts';
import { BoundedMemoryLimiter } from './bounded-limiter.ts';
import { tooManyAttempts } from './errors.ts';

export interface Window {
  /** Attempts (or failures) allowed within the window. */
  readonly points: number;
  readonly seconds: number;
}

/** A window whose exhaustion blocks the key, for `blockSeconds` doubling with each block. */
export interface Backoff extends Window {
  /** The first block once `points` are used (default: `seconds`). */
  readonly blockSeconds?: number;
  /** The longest block; blocks are remembered this long (default: one day). */
  readonly maxBlockSeconds?: number;
}

export interface LimitSettings {
  /** Failed sign-ins (password grant and sign-in form) per pair (account, address). */
  readonly accountFailures: Backoff;
  /** Failed sign-ins per account from all addresses together (distributed guessing). */
  readonly accountCeiling: Window;
  /** Failed client authentications per pair (client id, address). */
  readonly clientFailures: Backoff;
  /** Failed client authentications per client id from all addresses together. */
  readonly clientCeiling: Window;
  /** Password-grant requests per client. */
  readonly passwordPerClient: Window;
  /** Sign-in form posts per remote address. */
  readonly signinPerAddress: Window;
  /**
   * Failed requests (4xx answers) to /oauth/token, /oauth/revoke and /oauth/introspect per remote
   * address; once used up, every request from the address is refused until the window ends.
   */
  readonly oauthPerAddress: Window;
  /**
   * Keys each limiter keeps in process memory: beyond it the least recently used
   * key seen once goes first (bounded-limiter.ts). With Redis, the bound of the memory fallback.
   */
  readonly memoryKeys: number;
}

export const DEFAULT_LIMITS: LimitSettings = {
  accountFailures: { points: 5, seconds: 15 * 60, blockSeconds: 5 * 60, maxBlockSeconds: 86_400 },
  accountCeiling: { points: 100, seconds: 15 * 60 },
  clientFailures: { points: 10, seconds: 5 * 60, blockSeconds: 5 * 60, maxBlockSeconds: 86_400 },
  clientCeiling: { points: 1000, seconds: 5 * 60 },
  passwordPerClient: { points: 120, seconds: 60 },
  signinPerAddress: { points: 30, seconds: 60 },
  oauthPerAddress: { points: 100, seconds: 60 },
  memoryKeys: 10_000,
};

export type LimitKind = Exclude<keyof LimitSettings, 'memoryKeys'>;
type BackoffKind = 'accountFailures' | 'clientFailures';
type StrikeKind = `${BackoffKind}Strikes`;

/**
 * A reserved sign-in attempt; exactly one of its methods is called: `succeeded` or `failed` once
 * the password was checked, `abandoned` when it could not be (a busy server, a database error),
 * which gives the point back: only a checked password may count against anyone.
 */
export interface Reservation {
  succeeded(): Promise<void>;
  failed(): Promise<void>;
  abandoned(): Promise<void>;
}

const isLimiterRes = (value: unknown): value is RateLimiterRes =>
  typeof value === 'object' && value !== null && 'msBeforeNext' in value;

const retryAfter = (res: RateLimiterRes): number => Math.max(1, Math.ceil(res.msBeforeNext / 1000));

/** A bounded key: the digest of its parts (an identifier may be anything the caller sent). */
const digest = (...parts: readonly string[]): string => sha256(parts.join('\u0000'));

export class Limits {
  readonly #limiters: Record<LimitKind | StrikeKind, RateLimiterLike>;
  readonly #settings: LimitSettings;
  /** Every store in process memory (the limiters themselves, or Redis's fallbacks), by name. */
  readonly #memory = new Map<string, BoundedMemoryLimiter>();

  /** `keyPrefix` separates deployments (or tests) sharing one Redis. */
  constructor(settings: LimitSettings, redis?: Redis, keyPrefix = 'rollcall') {
    this.#settings = settings;
    const make = (kind: string, points: number, duration: number): RateLimiterLike => {
      const options = { points, duration, keyPrefix: `${keyPrefix}:${kind}` };
      const memory = new BoundedMemoryLimiter({ ...options, maxKeys: settings.memoryKeys });
      this.#memory.set(kind, memory);
      if (!redis) return memory;
      // While Redis is unreachable, each instance keeps counting in its own memory rather than
      // failing sign-ins or letting them through unlimited.
      return new RateLimiterRedis({ ...options, storeClient: redis, rejectIfRedisNotReady: true, insuranceLimiter: memory });
    };
    const window = (kind: LimitKind) => make(kind, settings[kind].points, settings[kind].seconds);
    const strikes = (kind: BackoffKind) => make(`${kind}Strikes`, Number.MAX_SAFE_INTEGER, this.#maxBlock(kind));
    this.#limiters = {
      accountFailures: window('accountFailures'),
      accountCeiling: window('accountCeiling'),
      clientFailures: window('clientFailures'),
      clientCeiling: window('clientCeiling'),
      passwordPerClient: window('passwordPerClient'),
      signinPerAddress: window('signinPerAddress'),
      oauthPerAddress: window('oauthPerAddress'),
      accountFailuresStrikes: strikes('accountFailures'),
      clientFailuresStrikes: strikes('clientFailures'),
    };
  }

  /** Keys each store in process memory holds now, by limiter (metrics, tests). */
  memoryKeys(): Record<string, number> {
    return Object.fromEntries([...this.#memory].map(([kind, limiter]) => [kind, limiter.size]));
  }

  #maxBlock(kind: BackoffKind): number {
    return this.#settings[kind].maxBlockSeconds ?? 86_400;
  }

  /** Consumes one point of `key` (atomically): the count after it, and whether it went over the limit. */
  async #consume(kind: LimitKind, key: string): Promise<{ res: RateLimiterRes; over: boolean }> {
    try {
      return { res: await this.#limiters[kind].consume(key, 1), over: false };
    } catch (rejection) {
      if (isLimiterRes(rejection)) return { res: rejection, over: true };
      throw rejection;
    }
  }

  /** Blocks `key` for the next step of its backoff: blockSeconds, doubled per earlier block. */
  async #strike(kind: BackoffKind, key: string): Promise<void> {
    const strikes = (await this.#limiters[`${kind}Strikes`].penalty(key, 1)).consumedPoints;
    const first = this.#settings[kind].blockSeconds ?? this.#settings[kind].seconds;
    const seconds = Math.min(first * 2 ** Math.min(strikes - 1, 30), this.#maxBlock(kind));
    await this.#limiters[kind].block(key, seconds);
  }

  /** Throws 429 while `address` has used up its failed requests (does not count this one). */
  async assertAddressAllowed(address: string): Promise<void> {
    const res = await this.#limiters.oauthPerAddress.get(digest(address));
    if (res && res.consumedPoints >= this.#settings.oauthPerAddress.points) throw tooManyAttempts(retryAfter(res), false);
  }

  /** Counts one failed request from `address`. */
  async addressFailed(address: string): Promise<void> {
    await this.#limiters.oauthPerAddress.penalty(digest(address), 1);
  }

  /** Counts one attempt of `key`; throws 429 once the window's attempts are used up. */
  async attempt(kind: 'passwordPerClient' | 'signinPerAddress', key: string): Promise<void> {
    const { res, over } = await this.#consume(kind, digest(key));
    if (over) throw tooManyAttempts(retryAfter(res));
  }

  /**
   * Reserves one password attempt for `account` from `address` before the password is verified:
   * throws 429, without anything to verify, once the pair is blocked or the account's ceiling is
   * reached. `account` is a normalised login name of bounded length.
   */
  async reserveSignIn(account: string, address: string): Promise<Reservation> {
    const pair = digest('account', account, address);
    const identity = digest('account', account);
    const own = await this.#consume('accountFailures', pair);
    if (own.over) throw tooManyAttempts(retryAfter(own.res));
    const all = await this.#consume('accountCeiling', identity);
    if (all.over) {
      // Refused for the others' failures: this source's own count is given back.
      await this.#limiters.accountFailures.reward(pair, 1);
      await this.#limiters.accountCeiling.reward(identity, 1);
      throw tooManyAttempts(retryAfter(all.res));
    }
    return {
      succeeded: async () => {
        await this.#limiters.accountFailures.delete(pair);
        await this.#limiters.accountFailuresStrikes.delete(pair);
        await this.#limiters.accountCeiling.reward(identity, 1);
      },
      failed: async () => {
        if (own.res.consumedPoints >= this.#settings.accountFailures.points) await this.#strike('accountFailures', pair);
      },
      abandoned: async () => {
        await this.#limiters.accountFailures.reward(pair, 1);
        await this.#limiters.accountCeiling.reward(identity, 1);
      },
    };
  }

  /**
   * Counts a failed authentication of `clientId` from `address` (called only for a client that
   * exists, after the secret was checked and was wrong). Returns the seconds that source must
   * wait when it is over its limit (or the client over its ceiling), undefined otherwise. A
   * right secret is never counted nor refused here.
   */
  async clientFailed(clientId: string, address: string): Promise<number | undefined> {
    const pair = digest('client', clientId, address);
    const own = await this.#consume('clientFailures', pair);
    if (!own.over && own.res.consumedPoints >= this.#settings.clientFailures.points) await this.#strike('clientFailures', pair);
    const all = await this.#consume('clientCeiling', digest('client', clientId));
    if (own.over) return retryAfter(own.res);
    if (all.over) return retryAfter(all.res);
    return undefined;
  }
}
