/**
 * For the migration tests: databases left empty (not migrated), on SQLite and, when configured,
 * PostgreSQL, and a way to migrate one up to a named migration, so a test can put rows in the
 * shape an older Rollcall left them before running the rest.
 */
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { connect } from '../../src/storage/connect.ts';
import type { Storage } from '../../src/storage/connect.ts';
import { migrateRetrying, migrationsFor } from '../../src/storage/migrations/index.ts';
import { createPgSchema, postgresUrl } from './engines.ts';

export interface UnmigratedEngine {
  readonly name: 'sqlite' | 'postgres';
  open(): Promise<{ storage: Storage; dispose(): Promise<void> }>;
}

/** SQLite in memory, plus a fresh PostgreSQL schema (dropped by dispose) when TEST_DATABASE_URL is set. */
export const unmigratedEngines: readonly UnmigratedEngine[] = [
  { name: 'sqlite', async open() { const storage = connect('sqlite::memory:'); return { storage, dispose: () => storage.close() }; } },
  ...(postgresUrl
    ? [{
        name: 'postgres' as const,
        async open() {
          const created = await createPgSchema(postgresUrl!);
          const storage = connect(created.url, { poolSize: 2 });
          return { storage, async dispose() { await storage.close(); await created.drop(); } };
        },
      }]
    : []),
];

/** Applies the migrations up to and including `name`, and asserts they applied. */
export async function migrateTo(storage: Storage, name: string): Promise<void> {
  const schema = storage.hooks.name === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(storage.db)).rows[0]?.s : undefined;
  const migrator = new Migrator({ db: storage.db, provider: { getMigrations: async () => migrationsFor(storage) }, ...(schema ? { migrationTableSchema: schema } : {}) });
  assert.equal((await migrateRetrying(() => migrator.migrateTo(name))).error, undefined);
}
