/**
 * Opens the database named by a URL (`sqlite:<path>`, `sqlite::memory:`, `postgres://...`) as a
 * Kysely instance plus its dialect hooks; the instance carries its compiled-once statements and
 * the hooks (statements.ts `StorageCarrier`), so repositories find them from any executor. An
 * SQLite file also gets its maintenance, started here and stopped by close(): WAL checkpoints in
 * a worker thread (checkpointer.ts) and a periodic PRAGMA optimize for the query planner.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Kysely, sql, SqliteDialect } from 'kysely';
import type { ConnectionProvider } from 'kysely';
import { startCheckpointer } from './checkpointer.ts';
import type { CheckpointReport } from './checkpointer.ts';
import { postgresHooks, sqliteHooks } from './dialect.ts';
import type { DialectHooks } from './dialect.ts';
import { NodeSqliteDatabase, sqliteStatementEngine } from './sqlite-adapter.ts';
import { pgDialect, PgDriver } from './pg-driver.ts';
import { pgStatementEngine } from './pg-statements.ts';
import { pgListener, Revocations, sqlitePoller, withRevocationNotices } from './revocations.ts';
import type { ListenOptions, RevocationFeed } from './revocations.ts';
import type { WriteLane } from './lane.ts';
import { createStatements, StorageCarrier } from './statements.ts';
import type { Database, Db } from './types.ts';

export interface Storage {
  readonly db: Db;
  readonly hooks: DialectHooks;
  /** The SQLite file path, or undefined for PostgreSQL and in-memory SQLite. */
  readonly sqlitePath: string | undefined;
  /** Notices of writes that take a token's access away, from this process and (PostgreSQL) every other (revocations.ts). */
  readonly revocations: RevocationFeed;
  /**
   * Holds a connection as a write lane (lane.ts) for a run of one-statement transactions, or
   * answers undefined when none is free for it. Absent: this storage has none (SQLite).
   */
  readonly writeLane?: () => Promise<WriteLane | undefined>;
  /** Connections of the pool, for /metrics. */
  poolStats(): { total: number; idle: number; waiting: number };
  /** Resolves once the database answers a trivial statement; rejects when it cannot (readiness). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** Largest number of PostgreSQL connections in this process's pool. */
  readonly poolSize?: number;
  /** SQLite files: time between background WAL checkpoints (checkpointer.ts; tests shorten it). */
  readonly checkpointIntervalMs?: number;
  /** SQLite files: WAL size past which the serving connection makes it start over (tests lower it). */
  readonly checkpointLargeWalBytes?: number;
  /** SQLite files: called with every background checkpoint's outcome (tests). */
  readonly onCheckpoint?: (report: CheckpointReport) => void;
  /** SQLite files: called each time the serving connection made a large WAL start over (tests). */
  readonly onWalRestart?: () => void;
  /** PostgreSQL: the LISTEN connection's reconnect and heartbeat timing (tests shorten it). */
  readonly listen?: ListenOptions;
  /**
   * SQLite files: make the file's directory when it is missing (`--create`). Otherwise a missing
   * directory is refused, so a mistyped path is an error instead of a new, empty database.
   */
  readonly createDirectory?: boolean;
  /**
   * PostgreSQL: a deadline on every statement of this process's connections (`statement_timeout`,
   * milliseconds), the ceiling under which a scan sets its team's shorter one; the server passes
   * the largest `statement.ms` a team may have. Migrations and index builds lift it for
   * themselves (they take as long as the data is large). Unset: no ceiling (the CLI's commands).
   */
  readonly statementTimeoutMs?: number;
}

/** How often a long-lived SQLite connection re-runs PRAGMA optimize (SQLite's advice: hourly). */
const OPTIMIZE_INTERVAL_MS = 60 * 60 * 1000;

/** One trivial statement through Kysely: on SQLite it waits for an open transaction, as any read does. */
async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
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

/**
 * An SQLite failure (open, read or write: ERR_SQLITE_ERROR, or a file-system error creating its
 * directory) retold with the file and the setting that named it, so that "unable to open
 * database file" says which file and where to change it. Other errors pass.
 */
export class StorageFileError extends Error {}

export function explainStorageError(error: unknown, sqlitePath: string | undefined, fileSystem = false): unknown {
  if (sqlitePath === undefined || error instanceof StorageFileError || !(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  if (!fileSystem && !(typeof code === 'string' && code.startsWith('ERR_SQLITE'))) return error;
  return new StorageFileError(`SQLite database ${sqlitePath}: ${error.message} (set by DATABASE_URL or --database)`, { cause: error });
}

/** The network errors that mean "nothing answers at the address DATABASE_URL names". */
const UNREACHABLE: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name not resolved',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/** PostgreSQL's SQLSTATE for a database name the server does not know (invalid_catalog_name). */
const NO_SUCH_DATABASE = '3D000';

/**
 * A PostgreSQL failure to reach the database, retold as one line naming the setting and what to
 * do: nothing listening (or no such host) at the URL's address, or a server without the named
 * database (created with createdb). `setting` names where the URL came from. The URL's password
 * is never repeated. Other errors pass unchanged.
 */
export function explainPostgresError(error: unknown, url: string, setting = 'DATABASE_URL or --database'): unknown {
  if (!(error instanceof Error) || error instanceof StorageFileError) return error;
  const code = (error as { code?: unknown }).code;
  let target: URL | undefined;
  try {
    target = new URL(url);
  } catch {
    return error;
  }
  const address = `${target.hostname || 'localhost'}:${target.port || '5432'}`;
  const database = decodeURIComponent(target.pathname.replace(/^\//, '')) || decodeURIComponent(target.username) || 'postgres';
  if (typeof code === 'string' && code in UNREACHABLE) {
    return new StorageFileError(`PostgreSQL at ${address} is unreachable (${UNREACHABLE[code]}): check ${setting}, and that the server is running`, { cause: error });
  }
  if (code === NO_SUCH_DATABASE) {
    return new StorageFileError(`PostgreSQL at ${address} has no database "${database}": create it with \`createdb ${database}\`, or correct ${setting}`, { cause: error });
  }
  return error;
}

/** explainStorageError or explainPostgresError, as the URL's engine asks. */
export function explainDatabaseError(error: unknown, url: string, sqlitePath: string | undefined, setting?: string): unknown {
  return url.startsWith('sqlite:') ? explainStorageError(error, sqlitePath) : explainPostgresError(error, url, setting);
}

export function connect(url: string, options: ConnectOptions = {}): Storage {
  const parsed = parseDatabaseUrl(url);
  if (parsed.engine === 'sqlite') {
    const memory = parsed.path === ':memory:';
    const path = memory ? ':memory:' : resolve(parsed.path);
    let database: NodeSqliteDatabase;
    try {
      if (!memory && !existsSync(dirname(path))) {
        if (options.createDirectory !== true) {
          throw new StorageFileError(`SQLite database ${path}: the directory ${dirname(path)} does not exist; create it, or pass --create to \`rollcall serve\` or \`rollcall migrate\` (the path is set by DATABASE_URL or --database)`);
        }
        mkdirSync(dirname(path), { recursive: true });
      }
      // An in-memory database has no WAL: nothing to checkpoint, nobody else to share it with.
      database = new NodeSqliteDatabase(path, { backgroundCheckpoints: !memory });
    } catch (error) {
      throw explainStorageError(error, path, true);
    }
    // Another process on the same file (the CLI) announces nothing here: its commits are polled.
    const revocations = new Revocations(memory ? undefined : sqlitePoller(() => database.dataVersion()), true);
    const bare = new Kysely<Database>({ dialect: withRevocationNotices(new SqliteDialect({ database }), revocations) });
    const db = bare.withPlugin(new StorageCarrier(createStatements(bare, sqliteStatementEngine(database), sqliteHooks), sqliteHooks));
    const checkpointer = memory
      ? undefined
      : startCheckpointer({
          path,
          ...(options.checkpointIntervalMs !== undefined ? { intervalMs: options.checkpointIntervalMs } : {}),
          ...(options.checkpointLargeWalBytes !== undefined ? { largeWalBytes: options.checkpointLargeWalBytes } : {}),
          ...(options.onCheckpoint ? { onReport: options.onCheckpoint } : {}),
          onLargeWal: () => {
            const restarted = database.restartWal();
            if (restarted) options.onWalRestart?.();
            return restarted;
          },
          onFailure: () => database.checkpointOnCommit(),
        });
    // Through Kysely, so that it waits for any open transaction rather than joining it.
    const optimizer = memory
      ? undefined
      : setInterval(() => void sql`PRAGMA optimize`.execute(db).catch(() => {}), OPTIMIZE_INTERVAL_MS).unref();
    return {
      db,
      hooks: sqliteHooks,
      sqlitePath: memory ? undefined : path,
      revocations,
      poolStats: () => ({ total: 1, idle: 1, waiting: 0 }),
      ping: () => ping(db),
      async close() {
        clearInterval(optimizer);
        await revocations.close();
        await checkpointer?.stop();
        await db.destroy();
      },
    };
  }
  const revocations = new Revocations(pgListener(parsed.url, options.listen));
  // The pool, the lookups' connections, the prepared names and the notices are the driver's (pg-driver.ts).
  const driver = new PgDriver({
    url: parsed.url,
    poolSize: options.poolSize ?? 10,
    feed: revocations,
    ...(options.statementTimeoutMs !== undefined ? { statementTimeoutMs: options.statementTimeoutMs } : {}),
  });
  const dialect = pgDialect(driver);
  const bare = new Kysely<Database>({ dialect });
  const db = bare.withPlugin(new StorageCarrier(createStatements(bare, pgStatementEngine(driver), postgresHooks), postgresHooks));
  return {
    db,
    hooks: postgresHooks,
    sqlitePath: undefined,
    revocations,
    async writeLane() {
      const lane = await driver.lane();
      if (!lane) return undefined;
      // The storage's instance (its plugins, its carrier) with every transaction on the lane.
      const provider: ConnectionProvider = { provideConnection: (consume) => consume(lane.connection()) };
      const laneDb = new Kysely<Database>({ config: { dialect }, dialect, driver, executor: db.getExecutor().withConnectionProvider(provider) });
      return { db: laneDb, handedOver: () => lane.handedOver(), release: () => lane.release() };
    },
    poolStats: () => driver.poolStats(),
    ping: () => ping(db),
    async close() {
      await revocations.close();
      await db.destroy();
    },
  };
}
