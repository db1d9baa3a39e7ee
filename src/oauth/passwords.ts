/**
 * Password hashing with scrypt from node:crypto (OWASP parameters: N=2^17, r=8, p=1), encoded
 * as `scrypt$N$r$p$salt$hash`. Verification is constant-time. No native build, no download.
 *
 * Each derivation takes 128 MiB and one libuv thread for about a quarter of a second, so the app
 * owns one PasswordHasher (issue 13 item 4) through which every SCIM write that sets a password
 * and every sign-in goes: a few derivations at a time, a bounded queue behind them, and beyond
 * it a HashingBusy the caller answers with 503 / 429 and Retry-After in its protocol's shape. A
 * sign-in storm then holds at most `concurrency` x 128 MiB and leaves the other libuv threads to
 * file and DNS work. Hashing never happens inside a database transaction (the callers' rule).
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import type { ScryptOptions } from 'node:crypto';

const N = 131072;
const R = 8;
const P = 1;
const KEYLEN = 32;

const derive = (password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEYLEN, { ...options, maxmem: 256 * 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, { N, r: R, p: P });
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const parts = encoded.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

export interface HashingSettings {
  /** Derivations running at once (each holds 128 MiB and a libuv thread). */
  readonly concurrency: number;
  /** Derivations waiting for a turn; beyond this the caller is told to come back later. */
  readonly maxQueued: number;
}

export const DEFAULT_HASHING: HashingSettings = Object.freeze({ concurrency: 2, maxQueued: 32 });

/** The hashing queue is full: answer "busy, retry after" instead of queueing without end. */
export class HashingBusy extends Error {
  readonly retryAfterSeconds = 1;
  constructor() {
    super('Too many password checks are in progress; try again in a moment');
    this.name = 'HashingBusy';
  }
}

/** scrypt through a bounded queue, shared by SCIM writes and sign-ins. */
export class PasswordHasher {
  readonly #settings: HashingSettings;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(settings: HashingSettings = DEFAULT_HASHING) {
    this.#settings = settings;
  }

  /** Derivations running and waiting now (metrics, tests). */
  get load(): { readonly running: number; readonly queued: number } {
    return { running: this.#running, queued: this.#waiting.length };
  }

  hash(password: string): Promise<string> {
    return this.#run(() => hashPassword(password));
  }

  verify(password: string, encoded: string): Promise<boolean> {
    return this.#run(() => verifyPassword(password, encoded));
  }

  async #run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#running >= this.#settings.concurrency) {
      if (this.#waiting.length >= this.#settings.maxQueued) throw new HashingBusy();
      // The slot is handed over by the finishing derivation, so #running stays counted.
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#running++;
    }
    try {
      return await work();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }
}

/**
 * Sign-in passwords (issue 13 item 10; NIST SP 800-63B 3.1.1.2): at least 12 characters, no
 * composition rules, and anything up to 1,024 characters (far beyond the 64 NIST asks to allow).
 * Characters are Unicode code points after NFC, as 800-63B counts them.
 */
export const SIGN_IN_PASSWORD_MIN = 12;
export const SIGN_IN_PASSWORD_MAX = 1024;

/** Why `password` cannot be a sign-in password, or undefined when it can. */
export function signInPasswordProblem(password: string): string | undefined {
  const length = [...password.normalize('NFC')].length;
  if (length < SIGN_IN_PASSWORD_MIN) return `a password for a user who signs in (userType admin) needs at least ${SIGN_IN_PASSWORD_MIN} characters`;
  if (length > SIGN_IN_PASSWORD_MAX) return `a password for a user who signs in (userType admin) has at most ${SIGN_IN_PASSWORD_MAX} characters`;
  return undefined;
}
