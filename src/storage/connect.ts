/**
 * Opens the database named by a URL (`sqlite:<path>`, `sqlite::memory:`, `postgres://...`) as a
 * Kysely instance plus its dialect hooks, and guards an SQLite file against a second server.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { postgresHooks, sqliteHooks } from './dialect.ts';
import type { DialectHooks } from './dialect.ts';
import { NodeSqliteDatabase } from './sqlite-adapter.ts';
import type { Database, Db } from './types.ts';

export interface Storage {
  readonly db: Db;
  readonly hooks: DialectHooks;
  /** The SQLite file path, or undefined for PostgreSQL and in-memory SQLite. */
  readonly sqlitePath: string | undefined;
  /** Connections of the pool, for /metrics. */
  poolStats(): { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Largest number of PostgreSQL connections in this process's pool. */
  readonly poolSize?: number;
}

export function parseDatabaseUrl(url: string): { engine: 'sqlite'; path: string } | { engine: 'postgres'; url: string } {
  if (url.startsWith('sqlite:')) {
    const rest = url.slice('sqlite:'.length).replace(/^\/\//, '');
    if (rest === '') throw new Error('DATABASE_URL: sqlite: needs a file path, e.g. sqlite:./data/rollcall.db');
    return { engine: 'sqlite', path: rest };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return { engine: 'postgres', url };
  throw new Error(`DATABASE_URL: expected sqlite:<path> or postgres://..., got "${url}"`);
}

export function connect(url: string, options: ConnectOptions = {}): Storage {
  const parsed = parseDatabaseUrl(url);
  if (parsed.engine === 'sqlite') {
    const memory = parsed.path === ':memory:';
    const path = memory ? ':memory:' : resolve(parsed.path);
    if (!memory) mkdirSync(dirname(path), { recursive: true });
    const database = new NodeSqliteDatabase(path);
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
    return {
      db,
      hooks: sqliteHooks,
      sqlitePath: memory ? undefined : path,
      poolStats: () => ({ total: 1, idle: 1, waiting: 0 }),
      close: () => db.destroy(),
    };
  }
  const pool = new pg.Pool({ connectionString: parsed.url, max: options.poolSize ?? 10 });
  // A dropped idle connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    hooks: postgresHooks,
    sqlitePath: undefined,
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    close: () => db.destroy(),
  };
}
