/**
 * Runs one write as one transaction, and decides what a driver failure means: a unique
 * violation that slipped past the service's own check (a concurrent create) becomes 409
 * `uniqueness`; a failure the caller names as the request's fault (`refused`) becomes its
 * answer; a lost optimistic-concurrency race or a serialization failure is retried a few
 * times; anything else propagates as a server error. Nothing is half-written: the transaction
 * rolls back on every throw. A context's `onCommit` runs last in the transaction, with the
 * body's result (an asynchronous request records its step there, src/async): a throw from it
 * rolls the write back and propagates as it is. A context's `writeLane` runs the transaction on
 * that lane (storage/lane.ts), which refuses it, unsent, if it is more than one statement.
 */
import type { Tx } from '../storage/types.ts';
import type { ScimContext } from './context.ts';
import { OverBudget } from '../budgets.ts';
import { conflict, ScimError } from './errors.ts';

/** Thrown inside a write when a concurrent update won the version race; the write is retried. */
export class RetryWrite extends Error {
  constructor() {
    super('concurrent update; retrying');
    this.name = 'RetryWrite';
  }
}

const ATTEMPTS = 8;

export async function runWrite<T>(
  ctx: ScimContext,
  body: (trx: Tx) => Promise<T>,
  onUnique?: () => Promise<ScimError>,
  /** The request's own fault a driver failure may be, if any (a member who is no user of the team). */
  refused?: (error: unknown) => ScimError | undefined,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      const onCommit = ctx.onCommit;
      const db = ctx.writeLane?.db ?? ctx.storage.db;
      if (!onCommit) return await db.transaction().execute(body);
      return await db.transaction().execute(async (trx) => {
        const result = await body(trx);
        await onCommit(trx, result);
        return result;
      });
    } catch (error) {
      if (error instanceof ScimError || error instanceof OverBudget) throw error;
      const retryable = error instanceof RetryWrite || ctx.storage.hooks.isRetryable(error);
      if (retryable && attempt < ATTEMPTS) {
        await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 5 * attempt)));
        continue;
      }
      const fault = refused?.(error);
      if (fault) throw fault;
      if (ctx.storage.hooks.isUniqueViolation(error)) {
        throw onUnique ? await onUnique() : conflict('the resource conflicts with an existing one');
      }
      if (error instanceof RetryWrite) throw new ScimError(409, 'the resource is being changed by other requests; try again');
      throw error;
    }
  }
}
