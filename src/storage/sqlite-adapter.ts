/**
 * Adapts `node:sqlite` to the small database interface Kysely's SqliteDialect drives
 * (prepare -> { reader, all, run, iterate }). Statements are cached by SQL text, since Kysely
 * prepares on every call and preparing dominates a short query's cost.
 */
import { DatabaseSync } from 'node:sqlite';
import type { StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

type Param = null | number | bigint | string | NodeJS.ArrayBufferView;

const toParams = (parameters: ReadonlyArray<unknown>): Param[] =>
  parameters.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : (p as Param)));

export class NodeSqliteDatabase implements SqliteDatabase {
  readonly raw: DatabaseSync;
  readonly #cache = new Map<string, SqliteStatement>();

  constructor(path: string) {
    this.raw = new DatabaseSync(path);
    this.raw.exec('PRAGMA journal_mode = WAL');
    this.raw.exec('PRAGMA synchronous = NORMAL');
    this.raw.exec('PRAGMA busy_timeout = 5000');
    this.raw.exec('PRAGMA foreign_keys = ON');
    // SQLite's lower() folds ASCII only; filters on case-insensitive attributes must fold the
    // way the in-memory evaluator (and PostgreSQL's lower()) do.
    this.raw.function('rc_lower', { deterministic: true }, (value) =>
      typeof value === 'string' ? value.toLowerCase() : value,
    );
  }

  close(): void {
    this.#cache.clear();
    if (this.raw.isOpen) this.raw.close();
  }

  prepare(sql: string): SqliteStatement {
    const cached = this.#cache.get(sql);
    if (cached) return cached;
    const stmt: StatementSync = this.raw.prepare(sql);
    const statement: SqliteStatement = {
      reader: stmt.columns().length > 0,
      all: (p) => stmt.all(...toParams(p)),
      run: (p) => {
        const r = stmt.run(...toParams(p));
        return { changes: r.changes, lastInsertRowid: r.lastInsertRowid };
      },
      iterate: (p) => stmt.iterate(...toParams(p)),
    };
    if (this.#cache.size > 500) this.#cache.clear();
    this.#cache.set(sql, statement);
    return statement;
  }
}
