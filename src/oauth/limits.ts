/**
 * Brute-force protection (RFC 6749 2.3.1 and 4.3.2; OAUTH-CHECKLIST E12, F3): failed sign-ins
 * per account, failed client authentications per client, password-grant attempts per client and
 * sign-in form posts per address. Counters live in Redis when REDIS_URL is set, so every
 * instance sees the same ones (falling back to process memory while Redis is unreachable), and in
 * process memory otherwise. Windows run on wall-clock time.
 */
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import type { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { tooManyAttempts } from './errors.ts';

export interface Window {
  /** Attempts (or failures) allowed within the window. */
  readonly points: number;
  readonly seconds: number;
}

export interface LimitSettings {
  /** Failed sign-ins (password grant and sign-in form) per account. */
  readonly accountFailures: Window;
  /** Failed client authentications per client id. */
  readonly clientFailures: Window;
  /** Password-grant requests per client. */
  readonly passwordPerClient: Window;
  /** Sign-in form posts per remote address. */
  readonly signinPerAddress: Window;
}

export const DEFAULT_LIMITS: LimitSettings = {
  accountFailures: { points: 5, seconds: 15 * 60 },
  clientFailures: { points: 10, seconds: 5 * 60 },
  passwordPerClient: { points: 120, seconds: 60 },
  signinPerAddress: { points: 30, seconds: 60 },
};

export type LimitKind = keyof LimitSettings;

const isLimiterRes = (value: unknown): value is RateLimiterRes =>
  typeof value === 'object' && value !== null && 'msBeforeNext' in value;

const retryAfter = (res: RateLimiterRes): number => Math.max(1, Math.ceil(res.msBeforeNext / 1000));

export class Limits {
  readonly #limiters: Record<LimitKind, RateLimiterAbstract>;
  readonly #settings: LimitSettings;

  constructor(settings: LimitSettings, redis?: Redis) {
    this.#settings = settings;
    const make = (kind: LimitKind): RateLimiterAbstract => {
      const options = { points: settings[kind].points, duration: settings[kind].seconds, keyPrefix: `rollcall:${kind}` };
      if (!redis) return new RateLimiterMemory(options);
      // While Redis is unreachable, each instance keeps counting in its own memory rather than
      // failing sign-ins or letting them through unlimited.
      return new RateLimiterRedis({ ...options, storeClient: redis, rejectIfRedisNotReady: true, insuranceLimiter: new RateLimiterMemory(options) });
    };
    this.#limiters = {
      accountFailures: make('accountFailures'),
      clientFailures: make('clientFailures'),
      passwordPerClient: make('passwordPerClient'),
      signinPerAddress: make('signinPerAddress'),
    };
  }

  /** Throws 429 when `key` has used up its failures (does not count this attempt). */
  async assertNotBlocked(kind: LimitKind, key: string): Promise<void> {
    const res = await this.#limiters[kind].get(key);
    if (res && res.consumedPoints >= this.#settings[kind].points) throw tooManyAttempts(retryAfter(res));
  }

  /** Counts one failure of `key`. */
  async failed(kind: LimitKind, key: string): Promise<void> {
    await this.#limiters[kind].penalty(key, 1);
  }

  /** Forgets the failures of `key` after a success. */
  async succeeded(kind: LimitKind, key: string): Promise<void> {
    await this.#limiters[kind].delete(key);
  }

  /** Counts one attempt of `key`; throws 429 once the window's attempts are used up. */
  async attempt(kind: LimitKind, key: string): Promise<void> {
    try {
      await this.#limiters[kind].consume(key, 1);
    } catch (rejection) {
      if (isLimiterRes(rejection)) throw tooManyAttempts(retryAfter(rejection));
      throw rejection;
    }
  }
}
