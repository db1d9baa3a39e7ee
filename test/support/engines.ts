/**
 * The database engines every storage-level suite runs on. SQLite always (in memory); PostgreSQL
 * when TEST_DATABASE_URL is set, each test database being a fresh schema dropped afterwards.
 * With REQUIRE_PG=1 a missing or unreachable PostgreSQL fails the run instead of skipping.
 *
 * Without TEST_DATABASE_URL the PostgreSQL cases are reported as skipped, with the reason, not
 * left out in silence: each `for (const engine of engines)` over the list registers, in place of
 * the PostgreSQL suite, a skipped suite saying why (the list's iterator does it, so the suites
 * that loop over it need no change). Suites of their own use NO_POSTGRES as their skip reason.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import pg from 'pg';
import { connect } from '../../src/storage/connect.ts';
import type { Storage } from '../../src/storage/connect.ts';
import { migrate } from '../../src/storage/migrations/index.ts';

export interface TestEngine {
  readonly name: 'sqlite' | 'postgres';
  /** A migrated, empty database of this engine, and how to throw it away. */
  open(): Promise<TestDatabase>;
}

export interface TestDatabase {
  readonly storage: Storage;
  readonly url: string;
  dispose(): Promise<void>;
}

const pgUrl = process.env.TEST_DATABASE_URL;
const requirePg = process.env.REQUIRE_PG === '1';

if (requirePg && !pgUrl) {
  throw new Error('REQUIRE_PG=1 but TEST_DATABASE_URL is not set');
}

const sqliteEngine: TestEngine = {
  name: 'sqlite',
  async open() {
    const url = 'sqlite::memory:';
    const storage = connect(url);
    await migrate(storage);
    return { storage, url, dispose: () => storage.close() };
  },
};

/** A URL whose connections use `schema` as their search_path. */
export function withSearchPath(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

/** Creates an empty PostgreSQL schema; returns its name and a URL bound to it. */
export async function createPgSchema(baseUrl: string): Promise<{ schema: string; url: string; drop(): Promise<void> }> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await admin.end();
  }
  return {
    schema,
    url: withSearchPath(baseUrl, schema),
    async drop() {
      const c = new pg.Client({ connectionString: baseUrl });
      await c.connect();
      try {
        await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await c.end();
      }
    },
  };
}

const postgresEngine = (baseUrl: string): TestEngine => ({
  name: 'postgres',
  async open() {
    const created = await createPgSchema(baseUrl);
    const storage = connect(created.url, { poolSize: 4 });
    await migrate(storage);
    return {
      storage,
      url: created.url,
      async dispose() {
        await storage.close();
        await created.drop();
      },
    };
  },
});

/** Why the PostgreSQL cases are skipped, or false when they run: a suite's `skip` option. */
export const NO_POSTGRES: string | false = pgUrl ? false : 'no PostgreSQL: TEST_DATABASE_URL is not set';

/** `list`, whose iteration also reports the PostgreSQL suite skipped, with the reason. */
function reportingSkippedPostgres(list: TestEngine[], reason: string): readonly TestEngine[] {
  const values = Array.prototype[Symbol.iterator];
  Object.defineProperty(list, Symbol.iterator, {
    value(this: TestEngine[]) {
      it('on postgres', { skip: reason }, () => {});
      return values.call(this);
    },
  });
  return list;
}

/** The engines to run on: SQLite, plus PostgreSQL when configured (reported skipped otherwise). */
export const engines: readonly TestEngine[] = pgUrl ? [sqliteEngine, postgresEngine(pgUrl)] : reportingSkippedPostgres([sqliteEngine], NO_POSTGRES as string);

export const postgresUrl: string | undefined = pgUrl;

/** A database a server process (test/support/processes.ts) is started on: a fresh SQLite file or PostgreSQL schema, disposed of after. */
export interface ProcessDatabase {
  readonly name: string;
  open(): Promise<{ url: string; dispose(): Promise<void> }>;
}

/** A fresh database per engine for server processes, SQLite files named after `prefix` (crash and restart tests). */
export function processDatabases(prefix: string): ProcessDatabase[] {
  return [
    {
      name: 'sqlite',
      async open() {
        const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
        return { url: `sqlite:${join(dir, 'crash.db')}`, dispose: async () => rmSync(dir, { recursive: true, force: true }) };
      },
    },
    ...(pgUrl ? [{ name: 'postgres', async open() { const s = await createPgSchema(pgUrl); return { url: s.url, dispose: () => s.drop() }; } }] : []),
  ];
}
