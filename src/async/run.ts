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
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Actor } from '../audit/events.ts';
import type { Clock } from '../clock.ts';
import { recordAsyncResponse } from '../events/feed.ts';
import type { PasswordHasher } from '../oauth/passwords.ts';
import { BulkAborted, failedWith, idOfLocation, isFailure, planBulk, runBulk } from '../scim/bulk/index.ts';
import type { BulkJournal, BulkOperationResult, BulkResponse } from '../scim/bulk/index.ts';
import type { ScimContext } from '../scim/context.ts';
import { runWriteOperation } from '../scim/dispatch.ts';
import type { WriteResult } from '../scim/dispatch.ts';
import { ScimError, scimErrorOf } from '../scim/errors.ts';
import type { ScanGate } from '../scim/scan-gate.ts';
import type { TeamTypesCache } from '../scim/team-schemas.ts';
import type { Storage } from '../storage/connect.ts';
import { advanceStep, finishRequest, insertStep, stepsOf } from '../storage/repos/async-requests.ts';
import type { AsyncRequestRow } from '../storage/repos/async-requests.ts';
import { teamById } from '../storage/repos/teams.ts';
import { transact } from '../storage/statements.ts';
import type { Tx } from '../storage/types.ts';
import type { StoredRequest, WriteOutcome } from './queue.ts';

/** Claims of a single write that failed with an error not its own before it is answered 500. */
export const MAX_ATTEMPTS = 10;

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

/** A request this worker holds, for the time of one claim. */
export interface Claim {
  readonly row: AsyncRequestRow;
  /** Unique per claim: the fence's owner. */
  readonly owner: string;
  /** Set when a renewal or a fence found the request taken over. */
  lost: boolean;
  /** Whether the worker is stopping: a Bulk stops before its next operation commits. */
  readonly stopping: () => boolean;
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

async function runSingle(deps: RunDeps, claim: Claim, ctx: ScimContext, request: StoredRequest): Promise<void> {
  const { row } = claim;
  const resourceType = resourceTypeOf(request.path);
  if (row.steps_done === 0) {
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
      if (error instanceof BulkAborted) throw error;
      // A failure that is not the request's own is retried; after MAX_ATTEMPTS claims it is its answer.
      const known = scimErrorOf(error) ?? (row.attempts >= MAX_ATTEMPTS ? new ScimError(500, 'Internal server error') : undefined);
      if (!known) throw error;
      if (!(error instanceof ScimError) && known.status === 500) deps.log?.error({ err: error, request: row.id }, 'asynchronous write failed again; answered 500');
      const outcome = failed(deps, request, known);
      await transact(deps.storage.db, (trx) => recordStep(deps, trx, claim, 0, outcome, { txn: row.txn, resourceType, resourceId: idOfPath(request.path) }, ctx.actor));
    }
  }
  const [step] = await stepsOf(deps.storage.db, row.id);
  const outcome = JSON.parse(step!) as WriteOutcome;
  await finish(deps, claim, 1, outcome, Number(outcome.status));
}

async function runBulkRequest(deps: RunDeps, claim: Claim, ctx: ScimContext, request: StoredRequest): Promise<void> {
  const { row } = claim;
  const plan = planBulk(request.body);
  // RFC 9967 2.5.1.2: operation i of the request (whatever the execution order) is `<txn>:<i>`.
  const target = (index: number, result: BulkOperationResult): EventTarget => {
    const step = plan.steps[index]!;
    return { txn: `${row.txn}:${step.index}`, resourceType: resourceTypeOf(step.path), resourceId: idOfCreated(result.location) };
  };
  const journal: BulkJournal = {
    done: [],
    committed: (trx, index, result) => recordStep(deps, trx, claim, index, result, target(index, result), ctx.actor),
    failed: (index, result) => transact(deps.storage.db, (trx) => recordStep(deps, trx, claim, index, result, target(index, result), ctx.actor)),
  };
  let response: BulkResponse;
  for (;;) {
    try {
      response = await runBulk(ctx, plan, { ...journal, done: (await stepsOf(deps.storage.db, row.id)).map((s) => JSON.parse(s) as BulkOperationResult) });
      break;
    } catch (error) {
      // A failure that is not the operation's own is retried; after MAX_ATTEMPTS claims it is
      // the operation's answer (500), and the Bulk goes on with the next one.
      if (error instanceof BulkAborted || row.attempts < MAX_ATTEMPTS) throw error;
      deps.log?.error({ err: error, request: row.id }, 'asynchronous bulk operation failed again; answered 500');
      const index = (await stepsOf(deps.storage.db, row.id)).length;
      const step = plan.steps[index];
      if (!step) throw error;
      const outcome: BulkOperationResult = { method: step.method, ...(step.bulkId !== undefined ? { bulkId: step.bulkId } : {}), status: '500', response: new ScimError(500, 'Internal server error').toBody() };
      await journal.failed(index, outcome);
    }
  }
  await finish(deps, claim, response.Operations.length, response, 200);
}

/**
 * Runs the claimed request to its end. Throws LostLease when the claim was lost (nothing more to
 * do here), and any failure that is not the request's own (the database): the worker gives the
 * request back, to be run again from its last recorded step.
 */
export async function runClaimed(deps: RunDeps, claim: Claim): Promise<void> {
  const { row } = claim;
  const request = JSON.parse(row.request) as StoredRequest;
  const team = await teamById(deps.storage.db, row.team_id);
  if (!team) {
    // The team was deleted meanwhile: nothing to run, nobody to tell.
    const error = new ScimError(404, 'The team of this request no longer exists');
    const outcome = row.kind === 'bulk' ? { schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkResponse'], Operations: [] } : failed(deps, request, error);
    await finish(deps, claim, row.steps_done, outcome, 404);
    return;
  }
  const ctx: ScimContext = {
    storage: deps.storage,
    clock: deps.clock,
    baseUrl: deps.baseUrl,
    team,
    actor: JSON.parse(row.actor) as Actor,
    requestId: row.txn,
    cursorSecret: deps.cursorSecret,
    passwords: deps.passwords,
    types: await deps.types.typesOf(deps.storage.db, team),
    ...(deps.scans ? { scans: deps.scans } : {}),
  };
  if (row.kind === 'bulk') await runBulkRequest(deps, claim, ctx, request);
  else await runSingle(deps, claim, ctx, request);
}
