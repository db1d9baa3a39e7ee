/**
 * "Last used" of provisioning tokens and connections, without a write per request: the bearer check
 * notes a use in memory (a Map lookup), and a timer writes the tokens used since the last flush
 * in one UPDATE, at most once per token per interval (a minute). The time recorded is the
 * flush's, so it is at most one interval late; an instance that stops flushes what it holds.
 * Failures to write are logged and dropped: "last used" is a hint, never worth a failed request.
 *
 * Owns no SQL (oauth/provisioning.ts writes the uses) and no module-level state (one per app).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.ts';
import type { Storage } from '../storage/connect.ts';
import { recordTokensUsed } from '../oauth/provisioning.ts';

export const LAST_USED_INTERVAL_MS = 60_000;
/** Distinct tokens remembered between flushes; more are dropped until the next flush. */
const MAX_PENDING = 10_000;

export class LastUsed {
  readonly #storage: Storage;
  readonly #clock: Clock;
  readonly #log: FastifyBaseLogger;
  readonly #intervalMs: number;
  /** When each token's use was last written (ms), so a busy token costs one write an interval. */
  readonly #written = new Map<string, number>();
  #pending = new Set<string>();
  /** The connections of the pending uses' tokens (their "last used" is written with them). */
  #pendingConnections = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(storage: Storage, clock: Clock, log: FastifyBaseLogger, intervalMs = LAST_USED_INTERVAL_MS) {
    this.#storage = storage;
    this.#clock = clock;
    this.#log = log;
    this.#intervalMs = intervalMs;
  }

  /** Notes a use of the token with this hash (of this connection's, if any); never waits and never writes. */
  used(hash: string, connectionId: string | null = null): void {
    const now = this.#clock.now().getTime();
    const written = this.#written.get(hash);
    if (written !== undefined && now - written < this.#intervalMs) return;
    if (this.#pending.size >= MAX_PENDING) return;
    this.#pending.add(hash);
    if (connectionId !== null) this.#pendingConnections.add(connectionId);
    this.#timer ??= setTimeout(() => void this.flush(), Math.min(1000, this.#intervalMs)).unref();
  }

  /** Writes the pending uses (one statement, and one for their connections); the next use of each token waits an interval. */
  flush(): Promise<void> {
    this.#timer = undefined;
    const hashes = [...this.#pending];
    const connections = [...this.#pendingConnections];
    this.#pending = new Set();
    this.#pendingConnections = new Set();
    if (hashes.length === 0) return this.#flushing;
    const now = this.#clock.now();
    for (const hash of hashes) this.#written.set(hash, now.getTime());
    // The memory of written uses is only a throttle: forget old entries rather than grow.
    if (this.#written.size > 4 * MAX_PENDING) {
      for (const [hash, at] of this.#written) if (now.getTime() - at >= this.#intervalMs) this.#written.delete(hash);
    }
    this.#flushing = this.#flushing
      .then(() => recordTokensUsed(this.#storage, hashes, now.toISOString(), connections))
      .catch((error: unknown) => this.#log.warn({ err: error }, 'could not record when provisioning tokens were last used'));
    return this.#flushing;
  }

  /** Stops the timer and writes what is pending (the app's onClose). */
  async close(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    await this.flush();
  }
}
