/**
 * The database a benchmark runs on: a fresh SQLite file in a temporary directory, or a fresh
 * schema in the PostgreSQL named by `--postgres` (bound through the connection's search_path, the
 * way the test suite isolates its databases). Migrated before use; `dispose` removes it. The
 * benchmark's own connection is closed before the servers start, so it never competes with them.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { connect } from '../src/storage/connect.ts';
import type { Storage } from '../src/storage/connect.ts';
import { migrate } from '../src/storage/migrations/index.ts';

export interface BenchDatabase {
  /** The URL the servers are started with. */
  readonly url: string;
  readonly engine: 'sqlite' | 'postgres';
  /** Opens (and migrates) a connection for setting up data. */
  open(): Promise<Storage>;
  /** Removes the database (unless it was given to reuse). */
  dispose(): Promise<void>;
}

/** A URL whose connections use `schema` as their search_path. */
function withSearchPath(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

async function openMigrated(url: string, poolSize?: number): Promise<Storage> {
  const storage = connect(url, poolSize !== undefined ? { poolSize } : {});
  await migrate(storage);
  return storage;
}

/** A fresh database: an SQLite file under the system's temporary directory, or a PostgreSQL schema. */
export async function createBenchDatabase(options: { postgres?: string; label: string }): Promise<BenchDatabase> {
  if (options.postgres !== undefined) {
    const base = options.postgres;
    const schema = `bench_${options.label}_${randomBytes(4).toString('hex')}`;
    await adminQuery(base, `CREATE SCHEMA ${schema}`);
    const url = withSearchPath(base, schema);
    return {
      url,
      engine: 'postgres',
      open: () => openMigrated(url, 4),
      dispose: () => adminQuery(base, `DROP SCHEMA IF EXISTS ${schema} CASCADE`),
    };
  }
  const dir = mkdtempSync(join(tmpdir(), `rollcall-bench-${options.label}-`));
  const url = `sqlite:${join(dir, 'bench.db')}`;
  return {
    url,
    engine: 'sqlite',
    open: () => openMigrated(url),
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** An existing database, kept after the run (scale runs reuse a loaded one). */
export function existingBenchDatabase(url: string): BenchDatabase {
  return {
    url,
    engine: url.startsWith('sqlite:') ? 'sqlite' : 'postgres',
    open: () => openMigrated(url, 4),
    dispose: async () => {},
  };
}

/**
 * The SECRET_KEY of the servers on a kept scale database (bench:scale --keep, then --database;
 * bench:console on the same file): every later run must unseal the keys the first one stored, so
 * the key is derived from where the database is. A benchmark's throwaway key, never a real one.
 */
export const keptDatabaseSecret = (url: string): string => createHash('sha256').update(`rollcall bench:scale ${url}`).digest('base64url');
