/**
 * The userName order is an index order on every engine (migration 014 on PostgreSQL): a page
 * sorted by userName with a word search reads its userName range from the index, in order, with
 * the range's bounds as index conditions (repos/list/by-key-prefix.ts), instead of sorting every match;
 * and on PostgreSQL `userName sw` (LIKE 'v%') is still a range of a B-tree after 012's
 * text_pattern_ops index made way for the "C"-collated one. Checked on the plans of the very
 * statements the list routine ran, over 3,000 analyzed users.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { loadUsers } from '../support/rows.ts';
import { userWords } from '../../src/console/directory.ts';
import { newId } from '../../src/ids.ts';
import { lowerFilter, lowerSort } from '../../src/scim/filter/lower.ts';
import { parseListQuery } from '../../src/scim/query.ts';
import { userResourceType } from '../../src/scim/schema/registry.ts';
import type { Storage } from '../../src/storage/connect.ts';
import { indexNames } from '../../src/storage/dialect.ts';
import { listRows } from '../../src/storage/repos/paging.ts';
import { insertTeam } from '../../src/storage/repos/teams.ts';
import type { TeamRow } from '../../src/storage/repos/teams.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';

/** Keeps every statement run through it, compiled as it was sent. */
class Statements implements KyselyPlugin {
  readonly seen: CompiledQuery[] = [];
  readonly #storage: Storage;
  constructor(storage: Storage) {
    this.#storage = storage;
  }
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.seen.push(this.#storage.db.getExecutor().compileQuery(args.node, args.queryId));
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

for (const engine of engines) {
  describe(`userName order from an index on ${engine.name}`, () => {
    let database: TestDatabase;
    let storage: Storage;
    const team: TeamRow = { id: newId(), name: 'acme', name_key: 'acme', deactivated_users: 'hidden', created_at: '2026-01-01T00:00:00.000Z' };

    before(async () => {
      database = await engine.open();
      storage = database.storage;
      await insertTeam(storage.db, team);
      await loadUsers(storage, team, { naming: { prefix: 'user', domain: 'order.example' }, count: 3_000 });
      await sql`analyze`.execute(storage.db);
    });
    after(() => database.dispose());

    /** The plan of a statement, as text (SQLite's EXPLAIN QUERY PLAN details; PostgreSQL's EXPLAIN). */
    async function plan(q: CompiledQuery, settings: readonly string[] = []): Promise<string> {
      if (storage.hooks.name === 'sqlite') {
        const rows = (await storage.db.executeQuery(CompiledQuery.raw(`explain query plan ${q.sql}`, [...q.parameters]))).rows as { detail: string }[];
        return rows.map((r) => r.detail).join('\n');
      }
      return storage.db.transaction().execute(async (trx) => {
        for (const setting of settings) await sql`${sql.raw(`set local ${setting}`)}`.execute(trx);
        const rows = (await trx.executeQuery(CompiledQuery.raw(`explain ${q.sql}`, [...q.parameters]))).rows as { 'QUERY PLAN': string }[];
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      });
    }

    it('a word search sorted by userName reads its userName range from the index, bounds as index conditions', async () => {
      const spy = new Statements(storage);
      const query = parseListQuery(userResourceType, { filter: userWords('user0001'), sortBy: 'userName' });
      const window = { where: lowerFilter(query.filter!, { members: 'active' }), sort: lowerSort(query.sortBy!), descending: false, onlyActive: true, limit: 5 };
      const page = await listRows<{ id: string; created_at: string; user_name: string }>(storage.db.withPlugin(spy), 'users', team.id, { ...window, seek: { direction: 'after' } });
      assert.deepEqual(page.rows.map((r) => r.user_name), ['user0001000@order.example', 'user0001001@order.example', 'user0001002@order.example', 'user0001003@order.example', 'user0001004@order.example']);
      const merge = spy.seen.find((q) => /\bunion\b/.test(q.sql));
      assert.ok(merge, spy.seen.map((q) => q.sql).join('\n'));
      const text = await plan(merge);
      if (storage.hooks.name === 'sqlite') assert.match(text, /USING INDEX users_team_user_name_key \(team_id=\? AND user_name_key>\? AND user_name_key<\?\)/, text);
      else {
        assert.match(text, /Index Scan using users_team_user_name_ordered/, text);
        assert.match(text, /Index Cond: .*user_name_key\)::text >= /, text);
      }
    });

    if (engine.name === 'sqlite') it('userName co tests the names in the userName index, reading the row of a match only, whichever other index of the team there is', async () => {
      // An index led by the team that the planner might walk instead, reading every row (an extension's, say).
      await sql`create index rc_test_team_first on users (team_id, created_at desc)`.execute(storage.db);
      try {
        for (const [value, expected] of [['02999@', ['user0002999@order.example']], ['nobody', []]] as const) {
          const spy = new Statements(storage);
          const query = parseListQuery(userResourceType, { filter: `userName co "${value}"` });
          const page = await listRows<{ id: string; created_at: string; user_name: string }>(storage.db.withPlugin(spy), 'users', team.id, { where: lowerFilter(query.filter!, { members: 'active' }), descending: false, onlyActive: true, limit: 5 });
          assert.deepEqual(page.rows.map((r) => r.user_name), expected);
          assert.equal(page.total, expected.length);
          const tests = spy.seen.filter((q) => /instr\(/.test(q.sql));
          assert.ok(tests.length > 0, spy.seen.map((q) => q.sql).join('\n'));
          for (const q of tests) assert.match(await plan(q), /SEARCH r USING INDEX users_team_user_name_key \(team_id=\? AND user_name_key>\?\)/, q.sql);
        }
      } finally {
        await sql`drop index rc_test_team_first`.execute(storage.db);
      }
    });

    if (engine.name === 'postgres') it('userName sw is a range of the "C"-collated B-tree, which replaced the text_pattern_ops one', async () => {
      const names = await indexNames(storage.db, 'postgres', 'users');
      assert.ok(names.includes('users_team_user_name_ordered'), names.join(', '));
      assert.ok(!names.includes('users_team_user_name_pattern'), names.join(', '));
      const spy = new Statements(storage);
      const query = parseListQuery(userResourceType, { filter: 'userName sw "user00012"' });
      await listRows(storage.db.withPlugin(spy), 'users', team.id, { where: lowerFilter(query.filter!, { members: 'active' }), descending: false, onlyActive: true, limit: 5, seek: { direction: 'after' } });
      const few = spy.seen[0]!;
      // Only B-tree index scans allowed (trigram GIN indexes are bitmap scans; a few thousand rows would be read whole).
      const text = await plan(few, ['enable_seqscan = off', 'enable_bitmapscan = off']);
      assert.match(text, /Index Scan using users_team_user_name_ordered/, text);
      assert.match(text, /Index Cond: .*\(user_name_key >= 'user00012'::text\) AND \(user_name_key < 'user00013'::text\)/, text);
    });
  });
}
