/**
 * Adapts `node:sqlite` to the small database interface Kysely's SqliteDialect drives
 * (prepare -> { reader, all, run, iterate }). Statements are cached by SQL text, since Kysely
 * prepares on every call and preparing dominates a short query's cost. It also runs the
 * compiled-once statements (statements.ts) straight on prepared statements, skipping Kysely's
 * executor, whenever that cannot interleave with another request's transaction (see
 * sqliteStatementEngine). Rows are read as arrays and named here (see PreparedStatement).
 */
import { DatabaseSync } from 'node:sqlite';
import type { StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import { kyselyEngine } from './statements.ts';
import type { StatementEngine, Template } from './statements.ts';
import { SQLITE_DEADLINE_MESSAGE } from './dialect.ts';
import { reverseCodePoints } from './text-range.ts';

type Param = null | number | bigint | string | NodeJS.ArrayBufferView;

const toParams = (parameters: ReadonlyArray<unknown>): Param[] =>
  parameters.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : (p as Param)));

type Row = Record<string, unknown>;

/**
 * A node:sqlite statement whose rows are plain objects. node:sqlite's own row objects have a null
 * prototype and land in V8's slow dictionary mode, so every field read and copy is slow; rows are
 * read as arrays and named here in JavaScript, so every row of one statement shares one hidden
 * class.
 * Repeated column names keep the last value, as node:sqlite's objects do.
 */
class PreparedStatement {
  readonly #stmt: StatementSync;
  readonly #names: readonly string[];
  readonly reader: boolean;

  constructor(stmt: StatementSync) {
    this.#stmt = stmt;
    this.#names = stmt.columns().map((c) => c.name);
    this.reader = this.#names.length > 0;
    if (this.reader) stmt.setReturnArrays(true);
  }

  #named(values: unknown[]): Row {
    const row: Row = {};
    const names = this.#names;
    for (let i = 0; i < names.length; i++) row[names[i]!] = values[i];
    return row;
  }

  get(parameters: ReadonlyArray<unknown>): Row | undefined {
    const values = this.#stmt.get(...toParams(parameters)) as unknown[] | undefined;
    return values === undefined ? undefined : this.#named(values);
  }

  all(parameters: ReadonlyArray<unknown>): Row[] {
    return (this.#stmt.all(...toParams(parameters)) as unknown as unknown[][]).map((values) => this.#named(values));
  }

  *iterate(parameters: ReadonlyArray<unknown>): IterableIterator<Row> {
    for (const values of this.#stmt.iterate(...toParams(parameters))) yield this.#named(values as unknown as unknown[]);
  }

  run(parameters: ReadonlyArray<unknown>): { changes: number | bigint; lastInsertRowid: number | bigint } {
    const r = this.#stmt.run(...toParams(parameters));
    return { changes: r.changes, lastInsertRowid: r.lastInsertRowid };
  }
}

export interface SqliteOptions {
  /**
   * Whether another connection checkpoints the WAL (checkpointer.ts): then this one never does it
   * inside a commit (`wal_autocheckpoint = 0`).
   */
  readonly backgroundCheckpoints: boolean;
}

/** The WAL file is cut back to this size when it restarts after a checkpoint (a burst leaves no giant file). */
const JOURNAL_SIZE_LIMIT = 64 * 1024 * 1024;

const BUSY_TIMEOUT_MS = 5000;

/** SQLite's own threshold (pages), restored when the background checkpointer fails. */
export const DEFAULT_WAL_AUTOCHECKPOINT = 1000;

export class NodeSqliteDatabase implements SqliteDatabase {
  readonly raw: DatabaseSync;
  readonly #cache = new Map<string, SqliteStatement>();

  constructor(path: string, options: SqliteOptions = { backgroundCheckpoints: false }) {
    this.raw = new DatabaseSync(path);
    this.raw.exec('PRAGMA journal_mode = WAL');
    // NORMAL, not FULL: FULL fsyncs the WAL at every commit, which would cost each write an
    // fsync (docs/PERFORMANCE.md "Durability" has the measurement). A killed process loses nothing either
    // way (the WAL is in the OS's cache; test/crash/ kills the server mid-stream); a power loss
    // or kernel crash can lose the last commits since the WAL was last synced (at each
    // checkpoint), never corrupt the file or split a transaction.
    this.raw.exec('PRAGMA synchronous = NORMAL');
    this.raw.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    this.raw.exec('PRAGMA foreign_keys = ON');
    this.raw.exec(`PRAGMA wal_autocheckpoint = ${options.backgroundCheckpoints ? 0 : DEFAULT_WAL_AUTOCHECKPOINT}`);
    this.raw.exec(`PRAGMA journal_size_limit = ${JOURNAL_SIZE_LIMIT}`);
    // Statistics for the query planner, as SQLite advises for long-lived connections: without
    // them it walks the whole team by creation time for `externalId eq` instead of using the
    // external_id index, a cost that grows with the team. Tables that never were analyzed, or changed
    // much since, are analyzed here, a bounded sample each; connect() repeats PRAGMA optimize.
    this.raw.exec('PRAGMA analysis_limit = 400');
    this.raw.exec('PRAGMA optimize = 0x10002');
    // SQLite's lower() folds ASCII only; filters on case-insensitive attributes must fold the
    // way the in-memory evaluator (and PostgreSQL's lower()) do.
    this.raw.function('rc_lower', { deterministic: true }, (value) =>
      typeof value === 'string' ? value.toLowerCase() : value,
    );
    // Text reversed by code point: `ew` on userName is a prefix range of the reversed key under
    // an expression index (migration 012, dialect.ts endsWith).
    this.raw.function('rc_reverse', { deterministic: true }, (value) =>
      typeof value === 'string' ? reverseCodePoints(value) : value,
    );
    // A statement's deadline (dialect.ts withinDeadline): node:sqlite offers no progress handler
    // or interrupt, so a statement held to a deadline calls this for each row it evaluates, and
    // the error thrown once the deadline has passed ends the statement there.
    this.raw.function('rc_alive', { deterministic: false }, (deadline) => {
      if (Date.now() > Number(deadline)) throw new Error(SQLITE_DEADLINE_MESSAGE);
      return 1;
    });
  }

  /**
   * Copies what is left of the WAL into the database so that the next write starts the WAL over
   * (a RESTART checkpoint): little work when the background checkpointer has copied nearly all of
   * it. Only between transactions: inside one it would wait for itself; a later report retries.
   * Answers whether the checkpoint ran to its end (false: in a transaction, busy, or closed).
   */
  restartWal(): boolean {
    if (!this.raw.isOpen || this.raw.isTransaction) return false;
    // Never wait here (the wait would block every request): while the worker checkpoints, give
    // up; the next report tries again.
    this.raw.exec('PRAGMA busy_timeout = 0');
    try {
      // Its row's `busy` is 1 when it could not finish (a reader or the worker in the way).
      const row = this.raw.prepare('PRAGMA wal_checkpoint(RESTART)').get() as { busy: number } | undefined;
      return row?.busy === 0;
    } catch {
      // Busy: see above.
      return false;
    } finally {
      this.raw.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  #dataVersion: StatementSync | undefined;

  /**
   * PRAGMA data_version: changes when another connection (another process, the checkpointer)
   * committed to the file since this connection last looked; undefined once closed.
   */
  dataVersion(): number | undefined {
    if (!this.raw.isOpen) return undefined;
    this.#dataVersion ??= this.raw.prepare('PRAGMA data_version');
    return Number((this.#dataVersion.get() as { data_version: number }).data_version);
  }

  /** Commits checkpoint the WAL themselves again (the background checkpointer failed). */
  checkpointOnCommit(): void {
    if (this.raw.isOpen) this.raw.exec(`PRAGMA wal_autocheckpoint = ${DEFAULT_WAL_AUTOCHECKPOINT}`);
  }

  close(): void {
    this.#cache.clear();
    if (this.raw.isOpen) this.raw.close();
  }

  prepare(sql: string): SqliteStatement {
    const cached = this.#cache.get(sql);
    if (cached) return cached;
    const stmt = new PreparedStatement(this.raw.prepare(sql));
    const statement: SqliteStatement = {
      reader: stmt.reader,
      all: (p) => stmt.all(p),
      run: (p) => stmt.run(p),
      iterate: (p) => stmt.iterate(p),
    };
    if (this.#cache.size > 500) this.#cache.clear();
    this.#cache.set(sql, statement);
    return statement;
  }
}

/**
 * Runs compiled templates on `database` directly: inside a transaction the caller holds (the
 * executor is that transaction, so the connection is the caller's), or on the database when no
 * transaction is open on the connection. Kysely serializes SQLite's one connection with a mutex;
 * while another request's transaction is open, a statement on the database must wait for it
 * (running now would read its uncommitted rows or write into it), so it goes through Kysely's
 * executor, which waits. The node:sqlite statement of each template is prepared once.
 */
export function sqliteStatementEngine(database: NodeSqliteDatabase): StatementEngine {
  // Weak: the templates of list shapes leave their bounded cache (statements.ts), and their statements with them.
  const prepared = new WeakMap<Template, PreparedStatement>();
  const statementOf = (template: Template): PreparedStatement => {
    let stmt = prepared.get(template);
    if (!stmt) {
      stmt = new PreparedStatement(database.raw.prepare(template.compiled.sql));
      prepared.set(template, stmt);
    }
    return stmt;
  };
  const direct = (ex: { readonly isTransaction: boolean }): boolean => ex.isTransaction || !database.raw.isTransaction;
  return {
    async rows(ex, template, values) {
      if (!direct(ex)) return kyselyEngine.rows(ex, template, values);
      return statementOf(template).all(values);
    },
    async row(ex, template, values) {
      if (!direct(ex)) return kyselyEngine.row(ex, template, values);
      return statementOf(template).get(values);
    },
    async changes(ex, template, values) {
      if (!direct(ex)) return kyselyEngine.changes(ex, template, values);
      return Number(statementOf(template).run(values).changes);
    },
    // A statement costs no round trip here: every write runs when it is asked for.
    async write(ex, template, values) {
      if (!direct(ex)) return kyselyEngine.write(ex, template, values);
      statementOf(template).run(values);
    },
  };
}
