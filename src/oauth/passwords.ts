/**
 * Password hashing with scrypt from node:crypto (OWASP parameters: N=2^17, r=8, p=1), encoded
 * as `scrypt$N$r$p$salt$hash`. Verification is constant-time. No native build, no download.
 *
 * Each derivation takes 128 MiB and one libuv thread for about a quarter of a second, so the app
 * owns one PasswordHasher through which every SCIM write that sets a password
 * and every sign-in goes: a few derivations at a time, bounded queues behind them, and beyond
 * them a HashingBusy the caller answers with 503 / 429 and Retry-After in its protocol's shape.
 * A sign-in storm then holds at most `concurrency` x 128 MiB and leaves the other libuv threads
 * to file and DNS work. The slots are shared fairly: teams' authenticated work
 * round robin, anonymous sign-ins in a bounded share of their own, one at a time per address.
 * Hashing never happens inside a database transaction (the callers' rule).
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import type { ScryptOptions } from 'node:crypto';

/**
 * scrypt's cost for new hashes: N = 2^17 (OWASP). A hash records its own N, so one made at another
 * cost verifies at that cost. Only the test suite lowers it (test/support/preload.ts, given to
 * every test process by scripts/test.ts): its tests sign in thousands of times, and what they
 * check is who may sign in, not how long a derivation takes (the hasher's own tests replace the
 * derivation altogether).
 */
export const SCRYPT_COST = { N: 131072 };
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
  const { N } = SCRYPT_COST;
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

/** The derivation behind the hasher: scrypt, unless a test puts a controllable one in its place. */
export interface PasswordKdf {
  hash(password: string): Promise<string>;
  verify(password: string, encoded: string): Promise<boolean>;
}

export const SCRYPT: PasswordKdf = Object.freeze({ hash: hashPassword, verify: verifyPassword });

/**
 * Whom a unit of hashing serves. The hasher shares its slots fairly between these.
 * - `team`: authenticated work of that team (a SCIM write setting a password by the team's token,
 *   a signed-in administrator proving their password again).
 * - `address`: an unauthenticated sign-in (the authorization page, the console, the password
 *   grant) from that source address.
 */
export type HashingLane = { readonly team: string } | { readonly address: string };

export interface HashingSettings {
  /** Derivations running at once (each holds 128 MiB and a libuv thread). */
  readonly concurrency: number;
  /**
   * Authenticated units waiting, all teams together. A team with nothing waiting is admitted even
   * beyond it, so one team's flood never refuses another team's first write.
   */
  readonly maxQueued: number;
  /** Authenticated units one team may have waiting. */
  readonly maxQueuedPerTeam: number;
  /** Of `concurrency`, the slots unauthenticated sign-ins may hold at once; the rest stay for teams. */
  readonly anonymousConcurrency: number;
  /** Unauthenticated sign-ins waiting (each from a different address). */
  readonly anonymousQueued: number;
}

export const DEFAULT_HASHING: HashingSettings = Object.freeze({
  concurrency: 2,
  maxQueued: 32,
  maxQueuedPerTeam: 16,
  anonymousConcurrency: 1,
  anonymousQueued: 16,
});

/** No room for this unit now: answer "busy, retry after" instead of queueing without end. */
export class HashingBusy extends Error {
  readonly retryAfterSeconds = 1;
  constructor(message = 'Too many password checks are in progress; try again in a moment') {
    super(message);
    this.name = 'HashingBusy';
  }
}

/** A sign-in from this address is already being checked: one at a time per address. */
export class AddressBusy extends HashingBusy {
  constructor() {
    super('A sign-in from this address is already being checked; wait for its answer before trying again');
    this.name = 'AddressBusy';
  }
}

export interface HashingLoad {
  /** Units running, both classes together. */
  readonly running: number;
  /** Authenticated units waiting, all teams together. */
  readonly queued: number;
  readonly anonymousRunning: number;
  readonly anonymousQueued: number;
}

/**
 * Password derivations through a small number of slots, scheduled fairly between classes of
 * work. Authenticated units wait in one queue per team, served round robin, so a team flooding
 * password writes takes its turn like any other. Unauthenticated sign-ins wait in a queue of
 * their own and hold at most `anonymousConcurrency` slots, so anonymous callers cannot take the
 * capacity authenticated work needs; an address has at most one sign-in running or waiting, a
 * second is refused at once (AddressBusy). When both classes wait, a freed slot alternates
 * between them. A unit is whatever its caller asks in one turn: a sign-in's several
 * verifications (accounts.ts) run one after another in one slot.
 */
export class PasswordHasher {
  readonly #settings: HashingSettings;
  readonly #kdf: PasswordKdf;
  #running = 0;
  #anonymousRunning = 0;
  /** Waiting units per team. */
  readonly #teams = new Map<string, (() => void)[]>();
  #teamsQueued = 0;
  /** Teams with units running or waiting: how many run, and the turn at which one last started. */
  readonly #served = new Map<string, { running: number; turn: number }>();
  #turn = 0;
  readonly #anonymous: (() => void)[] = [];
  /** Addresses with a sign-in running or waiting. */
  readonly #addresses = new Set<string>();
  #lastWasAnonymous = false;

  constructor(settings: Partial<HashingSettings> = {}, kdf: PasswordKdf = SCRYPT) {
    const merged = { ...DEFAULT_HASHING, ...settings };
    const concurrency = Math.max(1, merged.concurrency);
    this.#settings = { ...merged, concurrency, anonymousConcurrency: Math.min(Math.max(1, merged.anonymousConcurrency), concurrency) };
    this.#kdf = kdf;
  }

  /** Units running and waiting now (metrics, tests). */
  get load(): HashingLoad {
    return { running: this.#running, queued: this.#teamsQueued, anonymousRunning: this.#anonymousRunning, anonymousQueued: this.#anonymous.length };
  }

  hash(lane: HashingLane, password: string): Promise<string> {
    return this.#run(lane, () => this.#kdf.hash(password));
  }

  /** Verifies `password` against each of `encoded` in turn, as one unit: one slot, one place in line. */
  verify(lane: HashingLane, password: string, encoded: readonly string[]): Promise<boolean[]> {
    return this.#run(lane, async () => {
      const results: boolean[] = [];
      for (const one of encoded) results.push(await this.#kdf.verify(password, one));
      return results;
    });
  }

  async #run<T>(lane: HashingLane, work: () => Promise<T>): Promise<T> {
    const anonymous = 'address' in lane;
    if (anonymous) {
      if (this.#addresses.has(lane.address)) throw new AddressBusy();
      if (this.#anonymous.length >= this.#settings.anonymousQueued && !this.#mayStartAnonymous()) throw new HashingBusy();
      this.#addresses.add(lane.address);
    } else {
      const waiting = this.#teams.get(lane.team)?.length ?? 0;
      const full = waiting >= this.#settings.maxQueuedPerTeam || (waiting > 0 && this.#teamsQueued >= this.#settings.maxQueued);
      if (full && this.#running >= this.#settings.concurrency) throw new HashingBusy();
    }
    try {
      await new Promise<void>((resolve) => {
        if (anonymous) this.#anonymous.push(resolve);
        else this.#enqueueTeam(lane.team, resolve);
        this.#dispatch();
      });
      try {
        return await work();
      } finally {
        this.#running--;
        if (anonymous) this.#anonymousRunning--;
        else this.#finishedTeamUnit(lane.team);
        this.#dispatch();
      }
    } finally {
      if (anonymous) this.#addresses.delete(lane.address);
    }
  }

  #enqueueTeam(team: string, start: () => void): void {
    const queue = this.#teams.get(team);
    if (queue) queue.push(start);
    else this.#teams.set(team, [start]);
    this.#teamsQueued++;
  }

  #mayStartAnonymous(): boolean {
    return this.#running < this.#settings.concurrency && this.#anonymousRunning < this.#settings.anonymousConcurrency;
  }

  /** Starts waiting units while slots are free: teams round robin, alternating with sign-ins. */
  #dispatch(): void {
    while (this.#running < this.#settings.concurrency) {
      const anonymousMay = this.#anonymous.length > 0 && this.#anonymousRunning < this.#settings.anonymousConcurrency;
      const teamWaits = this.#teamsQueued > 0;
      if (anonymousMay && (!teamWaits || !this.#lastWasAnonymous)) {
        this.#running++;
        this.#anonymousRunning++;
        this.#lastWasAnonymous = true;
        this.#anonymous.shift()!();
      } else if (teamWaits) {
        this.#running++;
        this.#lastWasAnonymous = false;
        this.#nextTeamUnit()();
      } else {
        return;
      }
    }
  }

  /**
   * The first waiting unit of the team whose turn it is: the waiting team whose last unit
   * started longest ago (a team never served yet first, then in order of arrival).
   */
  #nextTeamUnit(): () => void {
    let chosen: string | undefined;
    let oldest = Infinity;
    for (const team of this.#teams.keys()) {
      const turn = this.#served.get(team)?.turn ?? -1;
      if (turn < oldest) [chosen, oldest] = [team, turn];
    }
    const queue = this.#teams.get(chosen!)!;
    const start = queue.shift()!;
    if (queue.length === 0) this.#teams.delete(chosen!);
    this.#teamsQueued--;
    const served = this.#served.get(chosen!);
    if (served) [served.running, served.turn] = [served.running + 1, ++this.#turn];
    else this.#served.set(chosen!, { running: 1, turn: ++this.#turn });
    return start;
  }

  /** A team's unit ended: the team is forgotten once it has nothing running or waiting. */
  #finishedTeamUnit(team: string): void {
    const served = this.#served.get(team);
    if (!served) return;
    served.running--;
    if (served.running === 0 && !this.#teams.has(team)) this.#served.delete(team);
  }
}

/**
 * Sign-in passwords (NIST SP 800-63B 3.1.1.2): at least 12 characters, no
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
