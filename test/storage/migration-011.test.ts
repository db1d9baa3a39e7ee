/**
 * Migration 011 (issue 10 item 8): the feed keeps every event and its counter through the
 * rebuild, the index on `at` is gone on both engines, SQLite's two feed tables are WITHOUT ROWID,
 * and the next write continues the team's sequence.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { migrate } from '../../src/storage/migrations/index.ts';
import { appendEvent, eventsAfter, lastSeq } from '../../src/storage/repos/events.ts';
import { migrateTo, unmigratedEngines } from '../support/migrations.ts';

const T = '2026-01-01T00:00:00.000Z';

const TEAM = 'TEAM0000000000000000';
const event = (seq: number) => ({
  team_id: TEAM, seq, at: T, type: 'create', resource_type: 'User', resource_id: `USER${String(seq).padStart(16, '0')}`, version: 1,
  changed: '["userName"]', actor: '{"kind":"token"}', txn: null, external_id: null, data: '{"userName":"a"}', members: null,
});

for (const engine of unmigratedEngines) {
  describe(`migration 011 on ${engine.name}`, () => {
    it('keeps the feed and its counter, drops the index on at, and the next event continues the sequence', async () => {
      const { storage, dispose } = await engine.open();
      try {
        await migrateTo(storage, '009_schema_extensions');
        const db = storage.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
        await db.insertInto('events').values([event(1), event(2), event(3)]).execute();
        await db.insertInto('event_counters').values({ team_id: TEAM, seq: 3 }).execute();
        await migrate(storage);

        assert.deepEqual((await eventsAfter(storage.db, TEAM, 0, 10)).map((e) => [e.seq, e.resource_id, e.data]), [1, 2, 3].map((n) => [n, event(n).resource_id, '{"userName":"a"}']));
        assert.equal(await lastSeq(storage.db, TEAM), 3);
        const { seq: _unused, ...next } = event(0);
        await storage.db.transaction().execute((trx) => appendEvent(trx, next));
        assert.deepEqual((await eventsAfter(storage.db, TEAM, 3, 10)).map((e) => e.seq), [4]);
        assert.equal(await lastSeq(storage.db, TEAM), 4);
        if (storage.hooks.name === 'sqlite') {
          const tables = (await sql<{ name: string; sql: string }>`select name, sql from sqlite_master where name in ('events', 'event_counters', 'events_at')`.execute(storage.db)).rows;
          assert.deepEqual(tables.map((t) => t.name).sort(), ['event_counters', 'events']);
          for (const t of tables) assert.match(t.sql, /without rowid\s*$/i, t.name);
        } else {
          const indexes = (await sql<{ indexname: string }>`select indexname from pg_indexes where schemaname = current_schema() and tablename = 'events'`.execute(storage.db)).rows;
          // No index on `at` is left; `events_resource` is migration 026's (the delta query's walk).
          assert.deepEqual(indexes.map((i) => i.indexname).sort(), ['events_pk', 'events_resource', 'events_unnumbered']);
        }
      } finally {
        await dispose();
      }
    });
  });
}
