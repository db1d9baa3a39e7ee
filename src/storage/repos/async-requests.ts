/**
 * The queue of asynchronous requests (migration 024; src/async owns the rules). A team's
 * requests run one at a time, oldest `position` first; a worker holds a request by its lease
 * (`lease_owner` until `lease_until`), taken by a conditional UPDATE that only the team's head
 * can pass. Each step's record advances `steps_done` conditionally on the lease owner and the
 * count (the fence): a step whose fence finds no row was run by a worker that lost the request,
 * and its transaction rolls back. Times are ISO text, compared as text.
 */
import { sql } from 'kysely';
import { nextOrderedId } from '../../ids.ts';
import { hooksIfAny } from '../statements.ts';
import type { AsyncRequestsTable, Db, Executor, Tx } from '../types.ts';

export type AsyncRequestRow = AsyncRequestsTable;

/** States of a request that still has work: the cap counts them, the worker runs them. */
const PENDING = ['queued', 'running'] as const;

export interface QueueCap {
  /** Requests the team may have waiting or running. */
  readonly requests: number;
  /** Bytes of their bodies together. */
  readonly bytes: number;
}

/**
 * Inserts the request unless the team's pending requests would then be over the cap; false when
 * refused. On PostgreSQL the team's row is locked first (FOR UPDATE), so the accepts of one team
 * count one after another and the cap holds exactly; SQLite runs write transactions one at a time.
 */
export async function insertWithinCap(trx: Tx, row: AsyncRequestRow, cap: QueueCap): Promise<boolean> {
  if (hooksIfAny(trx)?.rowLocks) await trx.selectFrom('teams').select('id').where('id', '=', row.team_id).forUpdate().execute();
  const used = await trx
    .selectFrom('async_requests')
    .select((eb) => [eb.fn.countAll<string | number>().as('n'), eb.fn.sum<string | number | null>('bytes').as('bytes'), eb.fn.max('position').as('last')])
    .where('team_id', '=', row.team_id)
    .where('state', 'in', PENDING)
    .executeTakeFirstOrThrow();
  if (Number(used.n) + 1 > cap.requests || Number(used.bytes ?? 0) + row.bytes > cap.bytes) return false;
  // After every pending request of the team, even when accepted in the same millisecond (or by
  // an instance whose clock is behind): the team's order is the order of acceptance.
  const last = used.last as string | null;
  const position = last !== null && row.position <= last ? nextOrderedId(last) : row.position;
  await trx.insertInto('async_requests').values({ ...row, position }).execute();
  return true;
}

/** What the worker reads of a head before it claims it: never the request text (up to 4 MiB). */
export type HeadRow = Pick<AsyncRequestRow, 'id' | 'team_id' | 'position' | 'kind' | 'txn' | 'lease_until' | 'attempts' | 'failures' | 'steps_done' | 'token_hash'>;

/** The team's request that runs next (or runs now): its oldest pending one, narrow columns only. */
export async function headOfTeam(ex: Executor, teamId: string): Promise<HeadRow | undefined> {
  return ex
    .selectFrom('async_requests')
    .select(['id', 'team_id', 'position', 'kind', 'txn', 'lease_until', 'attempts', 'failures', 'steps_done', 'token_hash'])
    .where('team_id', '=', teamId)
    .where('state', 'in', PENDING)
    .orderBy('position')
    .limit(1)
    .executeTakeFirst();
}

/** What a claimed request replays and who sent it: read once, after the claim. */
export async function requestTextOf(ex: Executor, id: string): Promise<{ request: string; actor: string } | undefined> {
  return ex.selectFrom('async_requests').select(['request', 'actor']).where('id', '=', id).executeTakeFirst();
}

/**
 * Teams whose head request (the oldest pending one) can be claimed now, oldest head first: its
 * lease is free or expired (a retry's backoff is a lease with no owner) and no other pending
 * request of the team is earlier or leased. A team whose head runs elsewhere or waits out a
 * backoff is not listed, so it takes no place in the worker's per-tick share.
 */
export async function teamsWithWork(ex: Executor, now: string, limit: number): Promise<string[]> {
  const rows = await ex
    .selectFrom('async_requests as h')
    .select('h.team_id')
    .where('h.state', 'in', PENDING)
    .where((eb) => eb.or([eb('h.lease_until', 'is', null), eb('h.lease_until', '<', now)]))
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('async_requests as o')
            .select('o.id')
            .whereRef('o.team_id', '=', 'h.team_id')
            .whereRef('o.id', '<>', 'h.id')
            .where('o.state', 'in', PENDING)
            .where((eb) => eb.or([eb('o.position', '<', eb.ref('h.position')), eb('o.lease_until', '>=', now)])),
        ),
      ),
    )
    .orderBy('h.position')
    .limit(limit)
    .execute();
  return rows.map((r) => r.team_id);
}

/**
 * Takes the lease of a pending request whose lease is free or expired, and only while it is its
 * team's head and no other request of the team is held: one conditional UPDATE, which one worker
 * wins. Counts the attempt. False when another worker has it, or it is no longer the head.
 */
export async function claimRequest(ex: Executor, row: Pick<AsyncRequestRow, 'id' | 'team_id' | 'position'>, owner: string, now: string, until: string): Promise<boolean> {
  const result = await ex
    .updateTable('async_requests')
    .set((eb) => ({ state: 'running', lease_owner: owner, lease_until: until, attempts: eb('attempts', '+', 1), started_at: eb.fn.coalesce('started_at', sql.val(now)) }))
    .where('id', '=', row.id)
    .where('state', 'in', PENDING)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('async_requests as o')
            .select('o.id')
            .where('o.team_id', '=', row.team_id)
            .where('o.id', '<>', row.id)
            .where('o.state', 'in', PENDING)
            .where((eb) => eb.or([eb('o.position', '<', row.position), eb('o.lease_until', '>=', now)])),
        ),
      ),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Extends the lease this owner holds; false when it lost the request. */
export async function renewRequestLease(ex: Executor, id: string, owner: string, until: string): Promise<boolean> {
  const result = await ex.updateTable('async_requests').set({ lease_until: until }).where('id', '=', id).where('lease_owner', '=', owner).where('state', '=', 'running').executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Gives the lease back; nobody claims the request before `retryAt` (now: at once). `failed`
 * counts a failure that was not the request's own (a worker stopping or losing it does not).
 */
export async function releaseRequest(ex: Executor, id: string, owner: string, retryAt: string | null, failed = false): Promise<void> {
  await ex
    .updateTable('async_requests')
    .set((eb) => ({ lease_owner: null, lease_until: retryAt, failures: failed ? eb('failures', '+', 1) : eb.ref('failures') }))
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .where('state', '=', 'running')
    .execute();
}

export interface StepFence {
  readonly id: string;
  readonly owner: string;
  /** The steps done before this one (the step's place in the execution order). */
  readonly from: number;
  readonly failed: boolean;
  /** The lease's new end. */
  readonly until: string;
}

/**
 * The fence of one step, in the step's transaction: `steps_done` from `from` to `from + 1` (and
 * `errors` counted), the lease extended, only while this owner holds the request and no other
 * worker advanced it. False when the request was lost: the caller's transaction must roll back.
 */
export async function advanceStep(ex: Executor, fence: StepFence): Promise<boolean> {
  const result = await ex
    .updateTable('async_requests')
    .set((eb) => ({ steps_done: fence.from + 1, errors: fence.failed ? eb('errors', '+', 1) : eb.ref('errors'), failures: 0, lease_until: fence.until }))
    .where('id', '=', fence.id)
    .where('lease_owner', '=', fence.owner)
    .where('steps_done', '=', fence.from)
    .where('state', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** A step's record (its BulkResponse operation, as JSON text), in the step's transaction. */
export async function insertStep(ex: Executor, requestId: string, idx: number, outcome: string): Promise<void> {
  await ex.insertInto('async_request_steps').values({ request_id: requestId, idx, outcome }).execute();
}

/** The request's recorded steps, in execution order (JSON text). */
export async function stepsOf(ex: Executor, requestId: string): Promise<string[]> {
  const rows = await ex.selectFrom('async_request_steps').select('outcome').where('request_id', '=', requestId).orderBy('idx').execute();
  return rows.map((r) => r.outcome);
}

export interface Finish {
  readonly id: string;
  readonly owner: string;
  /** The steps the finisher saw done: the fence. */
  readonly steps: number;
  readonly outcome: string;
  readonly status: number;
  readonly now: string;
}

/**
 * Marks the request done with its outcome, fenced like a step; false when it was lost. The
 * request text is cleared in the same UPDATE: it may hold passwords, and nothing replays a done
 * request (its method and path stay in their own columns).
 */
export async function finishRequest(ex: Executor, f: Finish): Promise<boolean> {
  const result = await ex
    .updateTable('async_requests')
    .set({ state: 'done', outcome: f.outcome, status: f.status, finished_at: f.now, lease_owner: null, lease_until: null, request: '' })
    .where('id', '=', f.id)
    .where('lease_owner', '=', f.owner)
    .where('steps_done', '=', f.steps)
    .where('state', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** What the status URL and `wait` read of a request: never the request text. */
export type RequestStatusRow = Pick<AsyncRequestRow, 'id' | 'txn' | 'kind' | 'state' | 'method' | 'path' | 'operations' | 'steps_done' | 'created_at' | 'finished_at' | 'outcome'>;

/** The team's request by id (its txn), narrow columns only; another team's is not found. */
export async function requestStatusOfTeam(ex: Executor, teamId: string, id: string): Promise<RequestStatusRow | undefined> {
  return ex
    .selectFrom('async_requests')
    .select(['id', 'txn', 'kind', 'state', 'method', 'path', 'operations', 'steps_done', 'created_at', 'finished_at', 'outcome'])
    .where('id', '=', id)
    .where('team_id', '=', teamId)
    .executeTakeFirst();
}

/** The whole row (tests and tools): the request text is '' once the request is done. */
export async function requestOfTeam(ex: Executor, teamId: string, id: string): Promise<AsyncRequestRow | undefined> {
  return ex.selectFrom('async_requests').selectAll().where('id', '=', id).where('team_id', '=', teamId).executeTakeFirst();
}

/** Deletes up to `batch` requests done before `before`, with their steps; answers how many. */
export async function pruneDoneRequests(db: Db, before: string, batch: number): Promise<number> {
  const ids = (await db.selectFrom('async_requests').select('id').where('state', '=', 'done').where('finished_at', '<', before).limit(batch).execute()).map((r) => r.id);
  if (ids.length === 0) return 0;
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('async_request_steps').where('request_id', 'in', ids).execute();
    await trx.deleteFrom('async_requests').where('id', 'in', ids).execute();
  });
  return ids.length;
}
