/**
 * Migrating one PostgreSQL schema while other schemas of the same database come and go (the
 * test suite's schema per test; several Rollcall databases side by side): Kysely's migrator
 * looks its tables up in the catalog of every schema, and a schema dropped during that look-up
 * failed the migration with `schema "…" does not exist` (naming the other schema). Bounded:
 * 4 migrations against 40 schemas created and dropped, loopback only.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { connect } from '../../src/storage/connect.ts';
import { migrate } from '../../src/storage/migrations/index.ts';
import { createPgSchema, postgresUrl } from '../support/engines.ts';

describe('migrations beside schemas being dropped', { skip: postgresUrl ? false : 'TEST_DATABASE_URL is not set' }, () => {
  it('a migration is not failed by another schema dropped while it looks up its own tables', async () => {
    const churn = new pg.Client({ connectionString: postgresUrl! });
    await churn.connect();
    let stop = false;
    const churning = (async () => {
      for (let i = 0; i < 40 && !stop; i++) {
        const name = `t_churn_${randomBytes(5).toString('hex')}`;
        await churn.query(`create schema ${name}`);
        await churn.query(`create table ${name}.a (id serial primary key, v text)`);
        await churn.query(`create table ${name}.b (id serial primary key, v text)`);
        await churn.query(`drop schema ${name} cascade`);
      }
    })();
    const results: string[] = [];
    try {
      for (let round = 0; round < 4; round++) {
        const schema = await createPgSchema(postgresUrl!);
        const storage = connect(schema.url, { poolSize: 2 });
        try {
          await migrate(storage);
          results.push('ok');
        } catch (error) {
          results.push(error instanceof Error ? error.message : String(error));
        } finally {
          await storage.close();
          await schema.drop();
        }
      }
    } finally {
      stop = true;
      await churning;
      await churn.end();
    }
    assert.deepEqual(results, ['ok', 'ok', 'ok', 'ok']);
  });
});
