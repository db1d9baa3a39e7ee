/**
 * Runs one claimed asynchronous request (worker.ts claims it): a single write through
 * dispatch.ts runWriteOperation, a Bulk through runBulk with a journal, each operation with the
 * context the route would have built for the request's team and actor (the team read again, its
 * types from the app's cache) and `requestId` its txn, so its audit row and feed event carry the
 * txn too.
 *
 * Exactly once: each operation's record (the fenced `steps_done` advance, its step row, its
 * RFC 9967 asyncresp event) is written in the operation's own transaction (onCommit /
 * BulkJournal.committed); a failed operation's record in a transaction of its own after the
 * rollback. A fence that finds the request no longer held by this claim throws LostLease, which
 * rolls the operation back: the worker that took the request over runs it, once. The request is
 * finished by a fenced UPDATE too; a claim lost after its last step leaves the finishing to the
 * next claim, which finds every step recorded and runs nothing.
 *
 * A request runs only while the access token that queued it is live: checked before it runs and
 * again at a step's record every few seconds; a revoked one answers each operation not yet run
 * 401. A temporary refusal (429 or 503: a budget, the password hasher's queue, a statement
 * deadline) is not an answer but a "later": the worker gives the request back and runs it again
 * after the Retry-After (or its backoff); only after MAX_FAILURES failures of the same step, over
 * minutes, is the refusal (or 500, for a failure no SCIM rule names) recorded as the answer.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Actor } from '../audit/events.ts';
import type { Clock } from '../clock.ts';
import { recordAsyncResponse } from '../events/feed.ts';
import type { PasswordHasher } from '../oauth/passwords.ts';
import { tokenRevokedByHash } from '../oauth/tokens.ts';
import { BulkAborted, failedWith, idOfLocation, isFailure, planBulk, runBulk } from '../scim/bulk/index.ts';
import type { BulkJournal, BulkOperationResult, BulkPlan, BulkResponse } from '../scim/bulk/index.ts';
import type { ScimContext } from '../scim/context.ts';
import { runWriteOperation } from '../scim/dispatch.ts';
import type { WriteResult } from '../scim/dispatch.ts';
import { ScimError, scimErrorOf } from '../scim/errors.ts';
import type { ScanGate } from '../scim/scan-gate.ts';
import type { TeamTypesCache } from '../scim/team-schemas.ts';
import type { Storage } from '../storage/connect.ts';
import { advanceStep, finishRequest, insertStep, requestTextOf, stepsOf } from '../storage/repos/async-requests.ts';
import type { HeadRow } from '../storage/repos/async-requests.ts';
import { teamById } from '../storage/repos/teams.ts';
import { transact } from '../storage/statements.ts';
import type { Executor, Tx } from '../storage/types.ts';
import type { StoredRequest, WriteOutcome } from './queue.ts';

/**
 * Failures of one step (not its own: the database, a temporary refusal) before the last one is
 * recorded as its answer. With the worker's backoff (worker.ts) they span minutes.
 */
export const MAX_FAILURES = 10;

/** How often a running request checks that the token that queued it is still live. */
const TOKEN_CHECK_MS = 5_000;

/** The answer of each operation a revoked token queued. */
export const revokedError = (): ScimError => new ScimError(401, 'The access token that queued this request was revoked before it ran');

/** A refusal that waiting may lift: 429, or 503 (the password hasher's queue, a statement deadline). */
const isTemporary = (status: number | string): boolean => Number(status) === 429 || Number(status) === 503;

/** This claim no longer holds the request (its lease was taken over, or the worker stops): the operation rolls back. */
export class LostLease extends BulkAborted {
  constructor() {
    super('the asynchronous request is no longer held by this worker');
    this.name = 'LostLease';
  }
}

export interface RunDeps {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly baseUrl: string;
  readonly cursorSecret: string;
  readonly passwords: PasswordHasher;
  readonly types: TeamTypesCache;
  readonly scans?: ScanGate;
  /** How long a lease lasts; each step's fence extends it. */
  readonly leaseMs: number;
  /** Where a request answered 500 after repeated failures is logged. */
  readonly log?: FastifyBaseLogger;
}

/** A step was refused for now (429, 503): the worker gives the request back until `retryAfterMs` has passed. */
export class TryLater extends BulkAborted {
  readonly retryAfterMs: number;
  constructor(retryAfterMs: number) {
    super('the asynchronous request was refused for now; it runs again later');
    this.name = 'TryLater';
    this.retryAfterMs = retryAfterMs;
  }
}

/** The token that queued the request was revoked: the operations not yet run are answered 401. */
export class TokenRevoked extends BulkAborted {
  constructor() {
    super('the access token that queued this asynchronous request was revoked');
    this.name = 'TokenRevoked';
  }
}

const retryAfterMsOf = (error: ScimError | undefined): number => {
  const seconds = Number(error?.headers['retry-after']);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1000;
};

/** A request this worker holds, for the time of one claim. */
export interface Claim {
  readonly row: HeadRow;
  /** Unique per claim: the fence's owner. */
  readonly owner: string;
  /** Set when a renewal or a fence found the request taken over. */
  lost: boolean;
  /** Whether the worker is stopping: a Bulk stops before its next operation commits. */
  readonly stopping: () => boolean;
  /**
   * Failures so far of the step the claim started at (`row.steps_done`), as the row counted them;
   * a later step of the same claim has none yet (the fence starts the row's count again).
   */
  failures: number;
  /** When the token was last found live (epoch ms). */
  tokenCheckedAt?: number;
}

/** Whether the token that queued the request is not revoked (a request no token queued: always). */
async function tokenLive(ex: Executor, claim: Claim): Promise<boolean> {
  if (claim.row.token_hash === null) return true;
  const live = !(await tokenRevokedByHash(ex, claim.row.token_hash));
  if (live) claim.tokenCheckedAt = Date.now();
  return live;
}

/** Where an operation's event points: the resource it wrote, or its endpoint when it created nothing. */
interface EventTarget {
  readonly txn: string;
  readonly resourceType: 'User' | 'Group';
  readonly resourceId: string | null;
}

const resourceTypeOf = (path: string): 'User' | 'Group' => (/^\/?Groups(\/|$)/.test(path) ? 'Group' : 'User');
const idOfCreated = (location: string | undefined): string | null => (location === undefined ? null : idOfLocation(location));

/**
 * One operation's record, in `trx`: the fenced advance of `steps_done` from `from` (and the
 * lease), its step row and its asyncresp event. Throws LostLease when the fence holds no row.
 */
async function recordStep(deps: RunDeps, trx: Tx, claim: Claim, from: number, outcome: WriteOutcome, target: EventTarget, actor: Actor): Promise<void> {
  if (claim.lost || claim.stopping()) throw new LostLease();
  if (claim.tokenCheckedAt !== undefined && Date.now() - claim.tokenCheckedAt >= TOKEN_CHECK_MS && !(await tokenLive(trx, claim))) throw new TokenRevoked();
  const until = new Date(deps.clock.now().getTime() + deps.leaseMs).toISOString();
  if (!(await advanceStep(trx, { id: claim.row.id, owner: claim.owner, from, failed: isFailure(outcome), until }))) {
    claim.lost = true;
    throw new LostLease();
  }
  await insertStep(trx, claim.row.id, from, JSON.stringify(outcome));
  const { resource: _resource, ...event } = outcome;
  await recordAsyncResponse({ clock: deps.clock }, trx, { teamId: claim.row.team_id, txn: target.txn, actor, resourceType: target.resourceType, resourceId: target.resourceId, outcome: event });
}

async function finish(deps: RunDeps, claim: Claim, steps: number, outcome: unknown, status: number): Promise<void> {
  const finished = await finishRequest(deps.storage.db, { id: claim.row.id, owner: claim.owner, steps, outcome: JSON.stringify(outcome), status, now: deps.clock.now().toISOString() });
  if (!finished) {
    claim.lost = true;
    throw new LostLease();
  }
}

const succeeded = (method: string, result: WriteResult): WriteOutcome => ({
  method,
  ...(result.version !== undefined ? { version: result.version } : {}),
  ...(result.location !== undefined ? { location: result.location } : {}),
  status: String(result.status),
  ...(result.resource !== undefined ? { resource: result.resource } : {}),
});

/** The same entry a failed Bulk operation gets (bulk/run.ts), without a bulkId. */
const failed = (deps: RunDeps, request: StoredRequest, error: ScimError): WriteOutcome => failedWith(deps.baseUrl, { method: request.method }, request.path, error);

/** The path's id segment (`/Users/{id}`, `/Users/{id}/activate`), if any. */
const idOfPath = (path: string): string | null => {
  const segment = path.split('/')[2];
  return segment === undefined || segment === '' ? null : decodeURIComponent(segment);
};

async function runSingle(deps: RunDeps, claim: Claim, ctx: ScimContext, request: StoredRequest, live: boolean): Promise<void> {
  const { row } = claim;
  const resourceType = resourceTypeOf(request.path);
  const revoked = (): Promise<void> => {
    claim.tokenCheckedAt = undefined;
    const outcome = failed(deps, request, revokedError());
    return transact(deps.storage.db, (trx) => recordStep(deps, trx, claim, 0, outcome, { txn: row.txn, resourceType, resourceId: idOfPath(request.path) }, ctx.actor));
  };
  const answerFailure = async (error: unknown): Promise<void> => {
    if (error instanceof BulkAborted) throw error;
    const last = claim.failures + 1 >= MAX_FAILURES;
    const known = scimErrorOf(error) ?? (ctx.storage.hooks.isDeadline(error) ? new ScimError(503, 'The database stopped a statement of this request before it finished', undefined, { 'retry-after': '1' }) : undefined);
    // A refusal for now, or a failure that is not the request's own: run again later; after
    // MAX_FAILURES it is the answer (500 for a failure no SCIM rule names).
    if (known && isTemporary(known.status) && !last) throw new TryLater(retryAfterMsOf(known));
    if (!known && !last) throw error;
    const answer = known ?? new ScimError(500, 'Internal server error');
    if (!known) deps.log?.error({ err: error, request: row.id }, 'asynchronous write failed again; answered 500');
    const outcome = failed(deps, request, answer);
    await transact(deps.storage.db, (trx) => recordStep(deps, trx, claim, 0, outcome, { txn: row.txn, resourceType, resourceId: idOfPath(request.path) }, ctx.actor));
  };
  if (row.steps_done === 0 && !live) await revoked();
  else if (row.steps_done === 0) {
    const op = {
      method: request.method,
      path: request.path,
      ...(request.body !== undefined ? { data: request.body } : {}),
      ...(request.ifMatch !== undefined ? { version: request.ifMatch } : {}),
      ...(request.query !== undefined ? { query: request.query } : {}),
    };
    try {
      await runWriteOperation(ctx, op, (trx, result) =>
        recordStep(deps, trx, claim, 0, succeeded(request.method, result), { txn: row.txn, resourceType, resourceId: result.id ?? idOfPath(request.path) }, ctx.actor),
      );
    } catch (error) {
      if (error instanceof TokenRevoked) await revoked();
      else await answerFailure(error);
    }
  }
  const [step] = await stepsOf(deps.storage.db, row.id);
  const outcome = JSON.parse(step!) as WriteOutcome;
  await finish(deps, claim, 1, outcome, Number(outcome.status));
}

async function runBulkRequest(deps: RunDeps, claim: Claim, ctx: ScimContext, plan: BulkPlan): Promise<void> {
  const { row } = claim;
  // RFC 9967 2.5.1.2: operation i of the request (whatever the execution order) is `<txn>:<i>`.
  const target = (index: number, result: BulkOperationResult): EventTarget => {
    const step = plan.steps[index]!;
    return { txn: `${row.txn}:${step.index}`, resourceType: resourceTypeOf(step.path), resourceId: idOfCreated(result.location) };
  };
  // The step journal.failed is recording: when its record fails, the fallback keeps its answer.
  let recording: { index: number; result: BulkOperationResult } | undefined;
  const journal: BulkJournal = {
    done: [],
    committed: (trx, index, result) => recordStep(deps, trx, claim, index, result, target(index, result), ctx.actor),
    failed: async (index, result) => {
      // A refusal for now (429, 503) is not the operation's answer until MAX_FAILURES.
      if (index !== row.steps_done) claim.failures = 0;
      if (isTemporary(result.status) && claim.failures + 1 < MAX_FAILURES) throw new TryLater(1000);
      recording = { index, result };
      await transact(deps.storage.db, (trx) => recordStep(deps, trx, claim, index, result, target(index, result), ctx.actor));
      recording = undefined;
    },
  };
  let response: BulkResponse;
  for (;;) {
    try {
      response = await runBulk(ctx, plan, { ...journal, done: (await stepsOf(deps.storage.db, row.id)).map((s) => JSON.parse(s) as BulkOperationResult) });
      break;
    } catch (error) {
      if (error instanceof TokenRevoked) return answerRevoked(deps, claim, ctx, plan, target);
      // A failure that is not the operation's own is retried; after MAX_FAILURES it is the
      // operation's answer (500, or the refusal it was recording), and the Bulk goes on.
      if (error instanceof BulkAborted) throw error;
      const index = (await stepsOf(deps.storage.db, row.id)).length;
      // A step recorded in this claim started the count again (its fence did, in the row too).
      if (index !== row.steps_done) claim.failures = 0;
      if (claim.failures + 1 < MAX_FAILURES) throw error;
      deps.log?.error({ err: error, request: row.id }, 'asynchronous bulk operation failed again; answered 500');
      const step = plan.steps[index];
      if (!step) throw error;
      const outcome: BulkOperationResult =
        recording?.index === index
          ? recording.result
          : { method: step.method, ...(step.bulkId !== undefined ? { bulkId: step.bulkId } : {}), status: '500', response: new ScimError(500, 'Internal server error').toBody() };
      recording = undefined;
      await transact(deps.storage.db, (trx) => recordStep(deps, trx, claim, index, outcome, target(index, outcome), ctx.actor));
    }
  }
  await finish(deps, claim, response.Operations.length, response, 200);
}

/**
 * Answers 401 to each operation of a Bulk not yet run, because the token that queued it was
 * revoked (unless failOnErrors had already stopped it), and finishes it.
 */
async function answerRevoked(deps: RunDeps, claim: Claim, ctx: ScimContext, plan: BulkPlan, target: (index: number, result: BulkOperationResult) => EventTarget): Promise<void> {
  const done = (await stepsOf(deps.storage.db, claim.row.id)).map((s) => JSON.parse(s) as BulkOperationResult);
  const stopped = plan.failOnErrors !== undefined && done.filter(isFailure).length >= plan.failOnErrors;
  const body = revokedError().toBody();
  const results = [...done];
  for (let i = done.length; !stopped && i < plan.steps.length; i++) {
    const step = plan.steps[i]!;
    const result: BulkOperationResult = { method: step.method, ...(step.bulkId !== undefined ? { bulkId: step.bulkId } : {}), status: '401', response: body };
    claim.tokenCheckedAt = undefined;
    await transact(deps.storage.db, (trx) => recordStep(deps, trx, claim, i, result, target(i, result), ctx.actor));
    results.push(result);
  }
  // In the request's order, as runBulk answers.
  const operations = results.map((r, i) => ({ r, index: plan.steps[i]!.index })).sort((a, b) => a.index - b.index).map((x) => x.r);
  await finish(deps, claim, results.length, { schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkResponse'], Operations: operations }, 200);
}

/**
 * Runs the claimed request to its end. Throws LostLease when the claim was lost (nothing more to
 * do here), TryLater for a refusal for now, and any failure that is not the request's own (the
 * database): the worker gives the request back, to be run again from its last recorded step.
 */
export async function runClaimed(deps: RunDeps, claim: Claim): Promise<void> {
  const { row } = claim;
  const text = await requestTextOf(deps.storage.db, row.id);
  const team = await teamById(deps.storage.db, row.team_id);
  // Teams are never deleted (a request holds its team's id for its whole life).
  if (!text || !team) throw new Error(`asynchronous request ${row.id}: its row or its team is missing`);
  const request = JSON.parse(text.request) as StoredRequest;
  const ctx: ScimContext = {
    storage: deps.storage,
    clock: deps.clock,
    baseUrl: deps.baseUrl,
    team,
    actor: JSON.parse(text.actor) as Actor,
    requestId: row.txn,
    cursorSecret: deps.cursorSecret,
    passwords: deps.passwords,
    types: await deps.types.typesOf(deps.storage.db, team),
    ...(deps.scans ? { scans: deps.scans } : {}),
  };
  const live = await tokenLive(deps.storage.db, claim);
  if (row.kind === 'bulk') {
    const plan = planBulk(request.body);
    if (!live) {
      const target = (index: number, result: BulkOperationResult): EventTarget => {
        const step = plan.steps[index]!;
        return { txn: `${row.txn}:${step.index}`, resourceType: resourceTypeOf(step.path), resourceId: idOfCreated(result.location) };
      };
      return answerRevoked(deps, claim, ctx, plan, target);
    }
    await runBulkRequest(deps, claim, ctx, plan);
  } else await runSingle(deps, claim, ctx, request, live);
}
