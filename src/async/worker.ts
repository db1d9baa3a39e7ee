/**
 * The asynchronous requests' worker: one per app (instance), started when the app is ready and
 * stopped when it closes. A tick lists the teams with claimable work, takes them round robin
 * from after the team it served last, and for each (at most `concurrency` teams at once here,
 * one request of a team at a time) claims the team's head request by a conditional UPDATE that
 * one instance wins, on both engines, and runs it (run.ts). A claim's lease is renewed by each
 * step's fence and by a timer while a step runs; a lease whose instance died expires and another
 * worker takes the request over, resuming after its recorded steps. A failure that is not the
 * request's own (the database) or a refusal for now (429, 503) gives the request back, retried
 * after a backoff (at least the refusal's Retry-After); failures are counted per step, claims not.
 *
 * Leases are times written by one instance's clock and compared with another's: the instances'
 * clocks must agree to well within the lease (30 s by default), as for the delivery worker's
 * leases (docs/ARCHITECTURE.md). A clock far ahead takes live leases over; the step fences still
 * keep each operation to one run.
 *
 * The worker also prunes done requests older than the feed's retention. Timers are unref'd.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { claimRequest, headOfTeam, pruneDoneRequests, releaseRequest, renewRequestLease, teamsWithWork } from '../storage/repos/async-requests.ts';
import { inBatches } from '../batches.ts';
import type { AsyncQueue } from './queue.ts';
import { BulkAborted } from '../scim/bulk/index.ts';
import { runClaimed, TryLater } from './run.ts';
import type { Claim, RunDeps } from './run.ts';

export interface AsyncSettings {
  /** How often an idle worker looks for work. */
  readonly tickMs: number;
  readonly leaseMs: number;
  /** How often a running request's lease is renewed while a step runs. */
  readonly renewMs: number;
  /** Teams whose requests this instance runs at once. */
  readonly concurrency: number;
  /** How often done requests past the retention are pruned. */
  readonly pruneMs: number;
}

export const DEFAULT_ASYNC: AsyncSettings = { tickMs: 200, leaseMs: 30_000, renewMs: 10_000, concurrency: 2, pruneMs: 60_000 };

/** The lease and its renewal for ASYNC_LEASE_SECONDS (config.ts): renewed every third of it. */
export const leaseOf = (seconds: number | undefined): Partial<AsyncSettings> => (seconds === undefined ? {} : { leaseMs: seconds * 1000, renewMs: Math.max(500, Math.floor((seconds * 1000) / 3)) });

export interface WorkerDeps extends Omit<RunDeps, 'leaseMs'> {
  readonly log: FastifyBaseLogger;
  readonly settings: AsyncSettings;
  readonly queue: AsyncQueue;
  /** Done requests are kept this long (the feed's retention). */
  readonly retentionDays: number;
}

/** Teams looked at per tick. */
const TEAMS_PER_TICK = 100;
const PRUNE_BATCH = 500;

/** The wait before a request given back after its `failures`-th failure of a step (0 the first) is claimed again. */
const retryDelayMs = (failures: number): number => Math.min(60_000, 500 * 2 ** Math.min(10, Math.max(0, failures)));

export class AsyncWorker {
  readonly #deps: WorkerDeps;
  readonly #run: RunDeps;
  readonly #owner = `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  /** Requests running here, by team. */
  readonly #running = new Map<string, Promise<void>>();
  #claims = 0;
  #lastTeam: string | undefined;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  #pruner: NodeJS.Timeout | undefined;
  #ticking: Promise<void> | undefined;
  #pruning: Promise<unknown> | undefined;
  #again = false;

  constructor(deps: WorkerDeps) {
    this.#deps = deps;
    this.#run = { ...deps, leaseMs: deps.settings.leaseMs };
  }

  start(): void {
    this.#deps.queue.attach(true, () => this.wake());
    this.#schedule(0);
    this.#pruner = setInterval(() => {
      this.#pruning ??= this.#prune()
        .catch((error: unknown) => this.#deps.log.warn({ err: error }, 'asynchronous requests: pruning failed; will try again'))
        .finally(() => (this.#pruning = undefined));
    }, this.#deps.settings.pruneMs);
    this.#pruner.unref();
  }

  /** Stops claiming; requests running here stop before their next step and give their lease back. */
  async stop(): Promise<void> {
    this.#deps.queue.attach(false);
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearInterval(this.#pruner);
    await this.#ticking;
    while (this.#running.size > 0) await Promise.allSettled([...this.#running.values()]);
    await this.#pruning;
  }

  /** Looks for work at once (a request was accepted, or one finished). */
  wake(): void {
    if (this.#stopped) return;
    if (this.#ticking) {
      this.#again = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#schedule(0);
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#ticking = this.#tick()
        .catch((error: unknown) => this.#deps.log.warn({ err: error }, 'asynchronous requests: looking for work failed; will try again'))
        .finally(() => {
          this.#ticking = undefined;
          const again = this.#again;
          this.#again = false;
          this.#schedule(again ? 0 : this.#deps.settings.tickMs);
        });
    }, ms);
    this.#timer.unref();
  }

  #until(now: Date): string {
    return new Date(now.getTime() + this.#deps.settings.leaseMs).toISOString();
  }

  /** Claims the heads of teams with work, round robin from after the last team served. */
  async #tick(): Promise<void> {
    const { storage, clock, settings } = this.#deps;
    if (this.#running.size >= settings.concurrency) return;
    const teams = (await teamsWithWork(storage.db, clock.now().toISOString(), TEAMS_PER_TICK)).sort();
    const start = this.#lastTeam === undefined ? 0 : teams.findIndex((t) => t > this.#lastTeam!);
    const order = start <= 0 ? teams : [...teams.slice(start), ...teams.slice(0, start)];
    for (const teamId of order) {
      if (this.#stopped || this.#running.size >= settings.concurrency) return;
      if (this.#running.has(teamId)) continue;
      const head = await headOfTeam(storage.db, teamId);
      const now = clock.now();
      if (!head || (head.lease_until !== null && head.lease_until >= now.toISOString())) continue;
      const owner = `${this.#owner}:${++this.#claims}`;
      if (!(await claimRequest(storage.db, head, owner, now.toISOString(), this.#until(now)))) continue;
      this.#lastTeam = teamId;
      const claim: Claim = { row: { ...head, attempts: head.attempts + 1 }, owner, lost: false, stopping: () => this.#stopped, failures: head.failures };
      const run = this.#runClaim(claim).finally(() => {
        this.#running.delete(teamId);
        this.#deps.queue.finished(claim.row.txn);
        this.wake();
      });
      this.#running.set(teamId, run);
    }
  }

  async #runClaim(claim: Claim): Promise<void> {
    const { storage, clock, settings, log } = this.#deps;
    const renewal = setInterval(() => {
      void renewRequestLease(storage.db, claim.row.id, claim.owner, this.#until(clock.now()))
        .then((held) => {
          if (!held) claim.lost = true;
        })
        .catch(() => {});
    }, settings.renewMs);
    renewal.unref();
    try {
      await runClaimed(this.#run, claim);
    } catch (error) {
      if (error instanceof BulkAborted && (claim.lost || this.#stopped)) {
        // Stopping: give the request back at once, so another instance resumes it.
        if (!claim.lost) await releaseRequest(storage.db, claim.row.id, claim.owner, null).catch(() => {});
        return;
      }
      if (error instanceof TryLater) log.info({ request: claim.row.id, team: claim.row.team_id }, 'asynchronous request refused for now; it will be run again later');
      else log.warn({ err: error, request: claim.row.id, team: claim.row.team_id }, 'asynchronous request failed; it will be run again from its last recorded step');
      const wait = Math.max(retryDelayMs(claim.failures), error instanceof TryLater ? error.retryAfterMs : 0);
      const retryAt = new Date(clock.now().getTime() + wait).toISOString();
      await releaseRequest(storage.db, claim.row.id, claim.owner, retryAt, true).catch(() => {});
    } finally {
      clearInterval(renewal);
    }
  }

  async #prune(): Promise<number> {
    const { storage, clock, retentionDays } = this.#deps;
    const before = new Date(clock.now().getTime() - retentionDays * 86_400_000).toISOString();
    return inBatches(() => pruneDoneRequests(storage.db, before, PRUNE_BATCH), PRUNE_BATCH, 100);
  }
}
