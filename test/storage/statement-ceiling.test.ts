/**
 * Every statement of a server on PostgreSQL has a deadline (connect.ts `statementTimeoutMs`, the
 * largest `statement.ms` a team may have), beside the team's shorter one on a scan's statements
 * (deadline.ts). What takes as long as the data is large lifts it for itself: migrations (for the
 * rest of their transaction) and index builds (on their own connection, given its deadline back
 * before it returns to the pool).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { BUDGETS } from '../../src/budgets.ts';
import { loadServeConfig } from '../../src/config.ts';
import { startServer } from '../../src/server.ts';
import { connect } from '../../src/storage/connect.ts';
import type { Storage } from '../../src/storage/connect.ts';
import { withoutStatementDeadline } from '../../src/storage/deadline.ts';
import { migrationsWithoutDeadline } from '../../src/storage/migrations/index.ts';
import { transact } from '../../src/storage/statements.ts';
import { createPgSchema, NO_POSTGRES, postgresUrl } from '../support/engines.ts';

const sleep = (storage: Storage | { db: Storage['db'] }, seconds: number, ex = storage.db) => sql`select pg_sleep(${seconds})`.execute(ex);

async function withStorage(ceilingMs: number | undefined, run: (storage: Storage) => Promise<void>): Promise<void> {
  const created = await createPgSchema(postgresUrl!);
  // One connection: what a lifted deadline leaves behind on it is what the next statement meets.
  const storage = connect(created.url, { poolSize: 1, ...(ceilingMs !== undefined ? { statementTimeoutMs: ceilingMs } : {}) });
  try {
    await run(storage);
  } finally {
    await storage.close();
    await created.drop();
  }
}

const stopped = (storage: Storage) => (error: unknown) => storage.hooks.isDeadline(error);

describe('a deadline on every statement (PostgreSQL)', { skip: NO_POSTGRES }, () => {
  it('a statement past the ceiling is stopped by the server, in a transaction or not', async () => {
    await withStorage(1000, async (storage) => {
      await assert.rejects(sleep(storage, 2), stopped(storage));
      await assert.rejects(transact(storage.db, (trx) => sleep(storage, 2, trx)), stopped(storage));
      await sleep(storage, 0.01);
    });
  });

  it('without a ceiling (the CLI), a statement runs as long as it takes', async () => {
    await withStorage(undefined, async (storage) => {
      assert.equal((await sql<{ statement_timeout: string }>`show statement_timeout`.execute(storage.db)).rows[0]?.statement_timeout, '0');
    });
  });

  it('an index build runs without the deadline, and its connection gets the deadline back', async () => {
    await withStorage(1000, async (storage) => {
      await withoutStatementDeadline(storage.db, (ex) => sleep(storage, 1.5, ex));
      await assert.rejects(sleep(storage, 2), stopped(storage), 'the one connection has its ceiling again');
    });
  });

  it('a migration runs without the deadline for the rest of its transaction', async () => {
    await withStorage(1000, async (storage) => {
      const slow = migrationsWithoutDeadline(storage, { slow: { up: async (db) => void (await sql`select pg_sleep(1.5)`.execute(db)) } });
      await transact(storage.db, (trx) => slow.slow!.up(trx));
      await assert.rejects(sleep(storage, 2), stopped(storage), 'only that transaction was lifted');
    });
  });

  it('the server connects with the largest statement.ms as its ceiling', async () => {
    const created = await createPgSchema(postgresUrl!);
    try {
      let shown: string | undefined;
      const config = loadServeConfig({ databaseUrl: created.url, host: '127.0.0.1', port: '0', publicBaseUrl: 'http://127.0.0.1' }, { SECRET_KEY: 'x'.repeat(40), LOG_LEVEL: 'silent' });
      const server = await startServer(config, async (storage) => {
        shown = (await sql<{ statement_timeout: string }>`show statement_timeout`.execute(storage.db)).rows[0]?.statement_timeout;
      });
      await server.stop();
      assert.equal(shown, `${BUDGETS['statement.ms'].max / 60_000}min`);
    } finally {
      await created.drop();
    }
  });
});
