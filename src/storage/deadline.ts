/**
 * Statements held to a deadline (every statement of a scan has one, on both engines):
 * a list or search whose filter scans the team's rows runs its statements through `withDeadline`,
 * and a statement still running at the deadline is stopped by the database, not abandoned while
 * it goes on: PostgreSQL's `statement_timeout`, set for a transaction the statements run in;
 * on SQLite, where node:sqlite offers no progress handler or interrupt, a test of the deadline
 * on every row the filter evaluates (dialect.ts `withinDeadline`), which throws and so ends the
 * statement. Either way the caller gets `StatementDeadline`. This module knows nothing of teams
 * or budgets: the SCIM side passes the milliseconds and turns the error into its refusal.
 */
import type { DialectHooks } from './dialect.ts';
import type { Predicate } from './predicate.ts';
import { hooksOf, transact } from './statements.ts';
import type { Db, Executor } from './types.ts';

/** A statement ran past its deadline and was stopped. */
export class StatementDeadline extends Error {
  readonly ms: number;

  constructor(ms: number) {
    super(`a statement ran longer than ${ms} ms and was stopped`);
    this.name = 'StatementDeadline';
    this.ms = ms;
  }
}

/** Where statements run under a deadline, and the filter that carries it on engines that test it per row. */
export interface UnderDeadline {
  readonly ex: Executor;
  /**
   * `where` as the statements must send it: with the row-by-row test of the deadline when the
   * engine needs one (then also when there is no filter: the test alone).
   */
  guard(where: Predicate | undefined): Predicate | undefined;
}

/**
 * Runs `work` with its statements held to `ms` milliseconds each (PostgreSQL: each statement;
 * SQLite: all the statements `work` sends together, from now: they run one after another on the
 * one connection, and the event loop is theirs while each runs).
 */
export async function withDeadline<T>(db: Db, hooks: DialectHooks, ms: number, work: (under: UnderDeadline) => Promise<T>): Promise<T> {
  try {
    if (hooks.deadlineIn === 'session') {
      // Through transact: a prepared statement a migration invalidated is run again unnamed.
      return await transact(db, async (trx) => {
        await hooks.limitStatements(trx, ms);
        return work({ ex: trx, guard: (where) => where });
      });
    }
    // The wall clock, as the row test reads it (sqlite-adapter.ts rc_alive), not the app's clock.
    const deadline: Predicate = { kind: 'deadline', deadline: Date.now() + ms };
    return await work({ ex: db, guard: (where) => (where ? { kind: 'and', left: deadline, right: where } : deadline) });
  } catch (error) {
    if (hooks.isDeadline(error)) throw new StatementDeadline(ms);
    throw error;
  }
}

/**
 * Runs `work` on one connection whose statements have no deadline: an index build takes as long
 * as the table is large, which no request's deadline (the pool's ceiling, connect.ts
 * `statementTimeoutMs`) foresees. The connection gets its own deadline back before it returns to
 * the pool. On SQLite, which has no session deadline, `work` runs as it is.
 */
export async function withoutStatementDeadline<T>(db: Db, work: (ex: Executor) => Promise<T>): Promise<T> {
  const hooks = hooksOf(db);
  const lift = hooks.sessionStatementTimeout(0);
  if (!lift) return work(db);
  return db.connection().execute(async (connection) => {
    await lift.execute(connection);
    try {
      return await work(connection);
    } finally {
      await hooks.sessionStatementTimeout(undefined)?.execute(connection);
    }
  });
}
