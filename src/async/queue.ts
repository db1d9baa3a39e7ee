/**
 * Accepting asynchronous requests (RFC 9967 section 2.5.1.1, `Prefer: respond-async`): what a
 * queued request keeps (the method, the path under the SCIM base, the query, If-Match and the
 * body, replayed by worker.ts through the same dispatch a route uses, cleared once it is done;
 * the hash of the token that sent it, checked before it runs), the per-team cap
 * (`async.queued` requests, `async.bytes` bytes of bodies, waiting or running) checked in the
 * insert's transaction, and the wait for an outcome (RFC 7240 `wait`). A Bulk is planned before
 * it is queued, so a malformed one is answered synchronously with its error. Nothing here knows
 * HTTP; storage is reached through repos/async-requests.ts.
 */
import { randomBytes } from 'node:crypto';
import type { Actor } from '../audit/events.ts';
import { budgetsOf } from '../budgets.ts';
import type { Clock } from '../clock.ts';
import { timeOrderedId } from '../ids.ts';
import type { WriteMethod } from '../scim/dispatch.ts';
import { BULK_PATH, planBulk } from '../scim/bulk/index.ts';
import type { BulkOperationResult, BulkResponse } from '../scim/bulk/index.ts';
import type { Storage } from '../storage/connect.ts';
import { insertWithinCap, requestStatusOfTeam } from '../storage/repos/async-requests.ts';
import type { AsyncRequestRow, RequestStatusRow } from '../storage/repos/async-requests.ts';
import { transact } from '../storage/statements.ts';
import type { TeamRow } from '../storage/repos/teams.ts';

/** What the worker replays: one write, or a Bulk (path `/Bulk`, the BulkRequest as body). */
export interface StoredRequest {
  readonly method: WriteMethod;
  /** Under the SCIM base: /Users, /Users/{id}, /Users/{id}/activate, /Groups, /Groups/{id}, /Bulk. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
  readonly ifMatch?: string;
  readonly body?: unknown;
}

/** A single write's outcome: its BulkResponse operation fields, and the representation the route would answer. */
export interface WriteOutcome extends BulkOperationResult {
  /** The resource as the synchronous answer's body (absent for 204 and errors). */
  resource?: Record<string, unknown>;
}

/** What a done request answered: a single write's outcome, or a Bulk's BulkResponse. */
export type Outcome = { readonly kind: 'write'; readonly write: WriteOutcome } | { readonly kind: 'bulk'; readonly bulk: BulkResponse };

export interface QueueDeps {
  readonly storage: Storage;
  readonly clock: Clock;
}

/** The team's requests done, running or waiting, as the status URL and `wait` read them (never the request text). */
export type RequestRow = RequestStatusRow;

export { BULK_PATH };

/** The most seconds a request waits for its outcome (`wait=N`) before it is answered 202. */
export const MAX_WAIT_SECONDS = 10;

/** Requests of one team waiting for their outcome (`wait=N`) at once on this instance; more are answered 202 at once. */
export const MAX_WAITERS_PER_TEAM = 4;

/**
 * How often a waiter reads its request's state: a request this instance's worker finishes wakes
 * its waiters at once; this slow poll finds the ones another instance finishes.
 */
const WAIT_POLL_MS = 500;

/** The id of an accepted request and its outcome events' `txn` (RFC 9967 section 3 Set-Txn): 128 random bits, hex. */
const newTxn = (): string => randomBytes(16).toString('hex');

/**
 * The accepting side of the queue: one per app. `running` says whether this instance's worker
 * runs (a request is only queued when some worker will run it; another instance's worker may
 * take it too).
 */
export class AsyncQueue {
  readonly #deps: QueueDeps;
  #running = false;
  #wake: () => void = () => {};
  /** Waiters by txn: woken when this instance's worker finishes the request. */
  readonly #waiters = new Map<string, Set<() => void>>();
  /** Waiters by team, for MAX_WAITERS_PER_TEAM. */
  readonly #waiting = new Map<string, number>();

  constructor(deps: QueueDeps) {
    this.#deps = deps;
  }

  get running(): boolean {
    return this.#running;
  }

  /** Called by the worker as it starts and stops; `wake` has it look for work at once. */
  attach(running: boolean, wake: () => void = () => {}): void {
    this.#running = running;
    this.#wake = wake;
  }

  /**
   * Queues `request` for `team`, answering its txn, or undefined when it cannot be queued (the
   * queue does not run here, or the team's cap is full): the caller then answers synchronously.
   * A Bulk is planned first: its syntax and limits errors (400, 413) are thrown as they are.
   */
  async accept(team: TeamRow, actor: Actor, request: StoredRequest, tokenHash?: string): Promise<string | undefined> {
    if (!this.#running) return undefined;
    const bulk = request.path === BULK_PATH;
    const operations = bulk ? planBulk(request.body).size : 1;
    const text = JSON.stringify(request);
    const budgets = budgetsOf(team);
    const now = this.#deps.clock.now();
    const txn = newTxn();
    const row: AsyncRequestRow = {
      id: txn,
      team_id: team.id,
      position: timeOrderedId(now.getTime()),
      kind: bulk ? 'bulk' : 'write',
      state: 'queued',
      txn,
      actor: JSON.stringify(actor),
      request: text,
      bytes: Buffer.byteLength(text),
      operations,
      steps_done: 0,
      errors: 0,
      lease_owner: null,
      lease_until: null,
      attempts: 0,
      outcome: null,
      status: null,
      created_at: now.toISOString(),
      started_at: null,
      finished_at: null,
      method: request.method,
      path: request.path,
      token_hash: tokenHash ?? null,
      failures: 0,
    };
    const cap = { requests: budgets['async.queued'], bytes: budgets['async.bytes'] };
    const accepted = await transact(this.#deps.storage.db, (trx) => insertWithinCap(trx, row, cap));
    if (!accepted) return undefined;
    this.#wake();
    return txn;
  }

  /** The team's request `txn`, or undefined (unknown, pruned, or another team's). */
  async request(teamId: string, txn: string): Promise<RequestRow | undefined> {
    if (!/^[0-9a-f]{32}$/.test(txn)) return undefined;
    return requestStatusOfTeam(this.#deps.storage.db, teamId, txn);
  }

  /** Called by this instance's worker when request `txn` is done (or was given back): its waiters look at once. */
  finished(txn: string): void {
    for (const wake of this.#waiters.get(txn) ?? []) wake();
  }

  /**
   * Waits up to `seconds` (at most MAX_WAIT_SECONDS) for the request to be done; its outcome, or
   * undefined when it is still waiting or running by then (RFC 7240 section 4.3), when `signal`
   * aborts (the client went away), or at once when the team already has MAX_WAITERS_PER_TEAM
   * waiters here.
   */
  async waitFor(teamId: string, txn: string, seconds: number, signal?: AbortSignal): Promise<Outcome | undefined> {
    const waiting = this.#waiting.get(teamId) ?? 0;
    if (waiting >= MAX_WAITERS_PER_TEAM) return undefined;
    this.#waiting.set(teamId, waiting + 1);
    const wakers = this.#waiters.get(txn) ?? new Set<() => void>();
    this.#waiters.set(txn, wakers);
    let wake: () => void = () => {};
    const woken = (): void => wake();
    wakers.add(woken);
    signal?.addEventListener('abort', woken);
    try {
      const until = Date.now() + Math.min(seconds, MAX_WAIT_SECONDS) * 1000;
      for (;;) {
        const row = await this.request(teamId, txn);
        if (row?.state === 'done') return outcomeOf(row);
        if (Date.now() >= until || signal?.aborted) return undefined;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(WAIT_POLL_MS, Math.max(1, until - Date.now())));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    } finally {
      signal?.removeEventListener('abort', woken);
      wakers.delete(woken);
      if (wakers.size === 0) this.#waiters.delete(txn);
      const left = (this.#waiting.get(teamId) ?? 1) - 1;
      if (left <= 0) this.#waiting.delete(teamId);
      else this.#waiting.set(teamId, left);
    }
  }

  /** Waiters here now (tests). */
  get waiters(): number {
    let n = 0;
    for (const count of this.#waiting.values()) n += count;
    return n;
  }
}

/** A done request's outcome as stored. */
export function outcomeOf(row: Pick<RequestRow, 'kind' | 'outcome'>): Outcome | undefined {
  if (row.outcome === null) return undefined;
  const parsed = JSON.parse(row.outcome) as unknown;
  return row.kind === 'bulk' ? { kind: 'bulk', bulk: parsed as BulkResponse } : { kind: 'write', write: parsed as WriteOutcome };
}
