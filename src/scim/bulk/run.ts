/**
 * Runs a Bulk plan (RFC 7644 3.7): each operation through dispatch.ts exactly as the same request
 * sent alone, so each is its own transaction, audit row and event, and a failure leaves the
 * others committed. `bulkId:<id>` references are replaced by the id the declaring POST created
 * (3.7.2); an operation whose referenced POST failed fails with 409 without running. After
 * `failOnErrors` errors the rest is not run and is absent from the response (3.7.3's example).
 * Between operations the loop yields to the event loop every few milliseconds, so a large Bulk never holds it.
 *
 * The response lists the operations that ran in the order of the request, not of the run: the
 * reordering is the server's own business (3.7: "the client's intent is preserved"), and 3.7.3's
 * examples answer each operation at its request position, so a client may pair request and
 * response by position as well as by bulkId.
 *
 * A journal (an asynchronous Bulk, src/async) records each step: a success inside its
 * transaction, a failure after the rollback; a request taken over resumes after `journal.done`.
 *
 * A synchronous Bulk on a storage with write lanes (PostgreSQL; storage/lane.ts) hands its user
 * creates that are one statement each to one lane, each as soon as it is built, without waiting
 * for the answer of the one before, at most `LANE_WINDOW` unanswered: the database runs and
 * commits one while the next is validated and built here. The database runs them in the order
 * handed over, each after the one before committed, which is the request's order, so the
 * directory, the feed and a uniqueness 409 are those of the same creates sent one by one. Each
 * is recorded, in request order, only once its answer is in. With failOnErrors no more creates
 * are unanswered than errors are still allowed, so none is sent that the Bulk might have to leave
 * unrun. Any other operation waits until every create before it is answered.
 */
import { OverBudget } from '../../budgets.ts';
import { NotOneStatement } from '../../storage/lane.ts';
import type { WriteLane } from '../../storage/lane.ts';
import type { Tx } from '../../storage/types.ts';
import type { ScimContext } from '../context.ts';
import { runWriteOperation } from '../dispatch.ts';
import type { WriteResult } from '../dispatch.ts';
import { ScimError, scimErrorOf } from '../errors.ts';
import { createWritesOnly } from '../users.ts';
import { BULK_REF_PREFIX, mapReferences } from './references.ts';
import type { BulkPlan, PlannedOperation } from './plan.ts';
import { BULK_RESPONSE } from './parse.ts';

export interface BulkOperationResult {
  method: string;
  bulkId?: string;
  version?: string;
  location?: string;
  status: string;
  response?: unknown;
}

export interface BulkResponse {
  schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkResponse'];
  Operations: BulkOperationResult[];
}

/** What an asynchronous Bulk records as it goes (src/async); absent for a synchronous Bulk. */
export interface BulkJournal {
  /** Results of the steps already run, in execution order (a request taken over resumes after them). */
  readonly done: readonly BulkOperationResult[];
  /** Called inside each successful operation's transaction (via runWriteOperation's onCommit); `index` is the step's position in `plan.steps`. */
  committed(trx: Tx, index: number, result: BulkOperationResult): Promise<void>;
  /** Called after a failed operation (its transaction rolled back); `index` is the step's position in `plan.steps`. */
  failed(index: number, result: BulkOperationResult): Promise<void>;
}

/** Thrown by a journal to stop the Bulk (a lost lease); runBulk rethrows it untouched. */
export class BulkAborted extends Error {
  constructor(message = 'the bulk request was stopped') {
    super(message);
    this.name = 'BulkAborted';
  }
}

/** Whether a step's status string is an error (4xx, 5xx). */
export const isFailure = (result: Pick<BulkOperationResult, 'status'>): boolean => Number(result.status) >= 400;

/** The id a successful POST's location ends with. */
export const idOfLocation = (location: string): string => decodeURIComponent(location.slice(location.lastIndexOf('/') + 1));

/** An operation's data with its references (references.ts) replaced by the created ids; shared, not copied, where none is. */
const substituteData = (step: PlannedOperation, ids: ReadonlyMap<string, string>): unknown => mapReferences(step.method, step.data, (ref) => ids.get(ref));

const resolvePath = (path: string, ids: ReadonlyMap<string, string>): string =>
  path
    .split('/')
    .map((s) => {
      const id = s.startsWith(BULK_REF_PREFIX) ? ids.get(s.slice(BULK_REF_PREFIX.length)) : undefined;
      return id !== undefined ? encodeURIComponent(id) : s;
    })
    .join('/');

const succeeded = (step: PlannedOperation, result: WriteResult): BulkOperationResult => ({
  method: step.method,
  ...(step.bulkId !== undefined ? { bulkId: step.bulkId } : {}),
  ...(result.version !== undefined ? { version: result.version } : {}),
  ...(result.location !== undefined ? { location: result.location } : {}),
  status: String(result.status),
});

/** A failed step: a failed POST has no location (3.7.3); the others name the resource they addressed. `path` is the operation's path with its references resolved. */
export function failedWith(baseUrl: string, step: { readonly method: string; readonly bulkId?: string | undefined }, path: string, error: ScimError): BulkOperationResult {
  return {
    method: step.method,
    ...(step.bulkId !== undefined ? { bulkId: step.bulkId } : {}),
    ...(step.method !== 'POST' ? { location: `${baseUrl}/v2/scim${path}` } : {}),
    status: String(error.status),
    response: error.toBody(),
  };
}

/** What the caller learns besides the response (the HTTP route logs with its request id). */
export interface BulkObserver {
  /** An operation failed with an error no SCIM rule names (answered 500 without a journal): the caller logs it. */
  unexpected?(error: unknown, step: PlannedOperation): void;
}

/** The SCIM error of a failure a SCIM rule or a budget answered. */
const scimRuleError = (error: unknown): ScimError | undefined => (error instanceof ScimError || error instanceof OverBudget ? scimErrorOf(error) : undefined);

/** The SCIM error an operation's failure answers, or undefined when it is unknown (a server fault). */
function knownError(ctx: ScimContext, error: unknown): ScimError | undefined {
  const known = scimRuleError(error);
  if (known) return known;
  // A statement the database stopped (an operator's cancel): worth a retry, as the route answers it.
  if (ctx.storage.hooks.isDeadline(error)) return new ScimError(503, 'The database stopped a statement of this operation before it finished; retry later', undefined, { 'retry-after': '1' });
  return undefined;
}

/** When runBulk yields to the event loop: once it has run operations back to back for `yieldAfterMs` of `now` (milliseconds, monotonic). */
export interface BulkPacing {
  now(): number;
  readonly yieldAfterMs: number;
}

/** The pacing every caller uses; a test passes its own clock to prove the yield without depending on the machine's speed. */
export const BULK_PACING: BulkPacing = { now: () => performance.now(), yieldAfterMs: 10 };

/**
 * How many of a Bulk's creates may be on its write lane unanswered: enough for PostgreSQL to run
 * and commit one while Rollcall builds the next ones.
 */
const LANE_WINDOW = 8;

/**
 * Whether a step goes to the Bulk's write lane (storage/lane.ts): a user create that references no
 * bulkId and is one statement (users.ts `createWritesOnly`). Each is still its own transaction,
 * run by the database after the ones handed over before it, so directory, feed and uniqueness
 * answers are those of the same creates sent one after the other.
 */
const forLane = (ctx: ScimContext, step: PlannedOperation): boolean =>
  step.method === 'POST' && step.path === '/Users' && step.failure === undefined && step.references.length === 0 && createWritesOnly(ctx, step.data);

export async function runBulk(ctx: ScimContext, plan: BulkPlan, journal?: BulkJournal, observer: BulkObserver = {}, pacing: BulkPacing = BULK_PACING): Promise<BulkResponse> {
  const ids = new Map<string, string>();
  const results: (BulkOperationResult | undefined)[] = new Array(plan.size);
  let errors = 0;
  const record = (i: number, result: BulkOperationResult): void => {
    const step = plan.steps[i] as PlannedOperation;
    results[step.index] = result;
    if (isFailure(result)) errors++;
    else if (step.method === 'POST' && step.bulkId !== undefined && result.location !== undefined) ids.set(step.bulkId, idOfLocation(result.location));
  };
  const done = journal?.done ?? [];
  for (let i = 0; i < done.length && i < plan.steps.length; i++) record(i, done[i] as BulkOperationResult);
  let heldSince = pacing.now();
  const stopped = (): boolean => plan.failOnErrors !== undefined && errors >= plan.failOnErrors;

  /** Runs step `i` (on `lane` when given) and answers its result; throws BulkAborted, NotOneStatement, or what a journal rethrows. */
  const execute = async (i: number, lane?: WriteLane): Promise<BulkOperationResult> => {
    const step = plan.steps[i] as PlannedOperation;
    const path = resolvePath(step.path, ids);
    const missing = step.failure ? undefined : step.references.find((r) => !ids.has(r));
    const refused =
      step.failure ??
      (missing !== undefined ? new ScimError(409, `Operations[${step.index}] references bulkId:${missing}, whose POST failed; it was not run`) : undefined);
    let result: BulkOperationResult;
    if (refused) {
      result = failedWith(ctx.baseUrl, step, path, refused);
    } else {
      try {
        // An asynchronous Bulk's operation carries `<txn>:<i>` on its audit row and feed event (RFC 9967 2.5.1.2).
        const opCtx = journal && ctx.requestId !== null ? { ...ctx, requestId: `${ctx.requestId}:${step.index}` } : lane ? { ...ctx, writeLane: lane } : ctx;
        const written = await runWriteOperation(
          opCtx,
          { method: step.method, path, ...(step.data !== undefined ? { data: step.references.length > 0 ? substituteData(step, ids) : step.data } : {}), ...(step.version !== undefined ? { version: step.version } : {}) },
          journal ? (trx, w) => journal.committed(trx, i, succeeded(step, w)) : undefined,
        );
        return succeeded(step, written);
      } catch (error) {
        if (error instanceof BulkAborted || error instanceof NotOneStatement) throw error;
        // With a journal, anything but a SCIM rule's answer is rethrown: the worker runs the request again later.
        const known = journal ? scimRuleError(error) : knownError(ctx, error);
        if (!known && journal) throw error;
        if (!known) observer.unexpected?.(error, step);
        result = failedWith(ctx.baseUrl, step, path, known ?? new ScimError(500, 'Internal server error'));
      }
    }
    if (journal) await journal.failed(i, result);
    return result;
  };

  // A synchronous Bulk on a storage with write lanes hands its one-statement creates to one,
  // each behind the one before without waiting for its answer; the results are recorded in
  // request order as the answers come. An asynchronous Bulk runs one operation after the other.
  let laneless = journal !== undefined || ctx.storage.writeLane === undefined;
  let lane: WriteLane | undefined;
  const inFlight: { readonly i: number; readonly result: Promise<BulkOperationResult> }[] = [];
  const recordOldest = async (): Promise<void> => {
    const oldest = inFlight.shift() as (typeof inFlight)[number];
    record(oldest.i, await oldest.result);
  };
  // Never more creates unanswered than errors failOnErrors still allows: none is sent that the
  // Bulk might have to leave unrun.
  const room = (): number => Math.min(LANE_WINDOW, plan.failOnErrors === undefined ? LANE_WINDOW : plan.failOnErrors - errors);

  try {
    for (let i = done.length; i < plan.steps.length && !stopped(); i++) {
      // Yields to the event loop once the run has held it for the pacing's interval: other requests
      // are served between operations, without a macrotask per operation.
      if (pacing.now() - heldSince >= pacing.yieldAfterMs) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        heldSince = pacing.now();
      }
      if (!laneless && forLane(ctx, plan.steps[i] as PlannedOperation)) {
        while (inFlight.length > 0 && inFlight.length >= room()) await recordOldest();
        if (stopped()) break;
        lane ??= await ctx.storage.writeLane?.();
        if (lane) {
          const handed = lane.handedOver();
          const result = execute(i, lane);
          // The next create is built once this one's statement is on the connection, or once it
          // failed before sending any (an invalid body): the lane runs them in request order.
          const notOne = await Promise.race([handed.then(() => false), result.then(() => false, (error: unknown) => error instanceof NotOneStatement)]);
          if (!notOne) {
            inFlight.push({ i, result });
            continue;
          }
          // The team's creates are more than one statement (a read on the way): none goes to a lane.
          laneless = true;
        }
      }
      // Any other step runs once every create before it is answered, with the lane given back.
      while (inFlight.length > 0) await recordOldest();
      if (stopped()) break;
      lane?.release();
      lane = undefined;
      record(i, await execute(i));
    }
    while (inFlight.length > 0) await recordOldest();
  } finally {
    if (lane) {
      // Given back only once nothing handed to it is still to be answered.
      await Promise.allSettled(inFlight.map((f) => f.result));
      lane.release();
    }
  }
  return { schemas: [BULK_RESPONSE as BulkResponse['schemas'][0]], Operations: results.filter((r): r is BulkOperationResult => r !== undefined) };
}
