/**
 * A write lane: one database connection held for a run of transactions that are each one
 * statement (no BEGIN, no COMMIT: the database runs one statement as a transaction of its own),
 * handed to the connection back to back without waiting for the answer of the one before. The
 * database runs them in the order they were handed over, one after the other, each committed
 * before the next starts; each caller still gets its own statement's answer or error. A Bulk's
 * user creates use one on PostgreSQL (scim/bulk/run.ts), so that Rollcall builds the next
 * create while the database runs and commits the one before.
 *
 * It is only for transactions that send nothing before their commit and then one statement: a
 * transaction that would send anything else (a read, a BEGIN, a second statement) is refused with
 * `NotOneStatement` before anything of it is sent, and the caller runs it the ordinary way. This
 * module states the contract; the PostgreSQL driver implements it (pg-driver.ts `PgLane`), and a
 * storage that cannot pipeline (SQLite) offers none.
 */
import type { Db } from './types.ts';

export interface WriteLane {
  /** Runs each transaction, as one statement, on the lane's connection (`db.transaction()` only). */
  readonly db: Db;
  /** Resolves once the lane's connection has been handed its next statement. */
  handedOver(): Promise<void>;
  /** Gives the connection back; every transaction of the lane must have been answered. */
  release(): void;
}

/** A transaction on a write lane needed more than one statement; nothing of it was sent. */
export class NotOneStatement extends Error {
  constructor(what: string) {
    super(`a write lane carries one-statement transactions only: ${what}`);
    this.name = 'NotOneStatement';
  }
}
