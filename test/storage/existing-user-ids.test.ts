/**
 * `existingUserIds` (repos/users.ts) answers which of several ids are users of the team, another
 * team's users excluded, and reads them by an index keyed by id, not by a scan of the team's rows (a
 * multi-member PATCH at a large team would otherwise read the whole team).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CompiledQuery } from 'kysely';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { newId } from '../../src/ids.ts';
import type { Storage } from '../../src/storage/connect.ts';
import { insertTeam } from '../../src/storage/repos/teams.ts';
import type { TeamRow } from '../../src/storage/repos/teams.ts';
import { existingUserIds } from '../../src/storage/repos/users.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';
import { loadUsers } from '../support/rows.ts';

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
  describe(`existingUserIds on ${engine.name}`, () => {
    let database: TestDatabase;
    let storage: Storage;
    const team: TeamRow = { id: newId(), name: 'ids', name_key: 'ids', deactivated_users: 'hidden', created_at: '2026-01-01T00:00:00.000Z' };
    const other: TeamRow = { id: newId(), name: 'other', name_key: 'other', deactivated_users: 'hidden', created_at: '2026-01-01T00:00:00.000Z' };
    let mine: string[] = [];
    let theirs: string[] = [];

    before(async () => {
      database = await engine.open();
      storage = database.storage;
      await insertTeam(storage.db, team);
      await insertTeam(storage.db, other);
      mine = (await loadUsers(storage, team, { naming: { prefix: 'mine', domain: 'ids.example' }, count: 1_000 })).ids;
      theirs = (await loadUsers(storage, other, { naming: { prefix: 'theirs', domain: 'ids.example' }, count: 10 })).ids;
      await storage.db.executeQuery(CompiledQuery.raw('analyze'));
    });
    after(() => database.dispose());

    it("answers the team's own users among the ids, not another team's, not unknown ids", async () => {
      const asked = [mine[0]!, mine[500]!, theirs[0]!, 'no-such-user', mine[999]!];
      assert.deepEqual([...(await existingUserIds(storage.db, team.id, asked))].sort(), [mine[0]!, mine[500]!, mine[999]!].sort());
      assert.deepEqual([...(await existingUserIds(storage.db, other.id, asked))], [theirs[0]!]);
      assert.deepEqual([...(await existingUserIds(storage.db, team.id, [mine[1]!]))], [mine[1]!], 'one id');
      const many = [...mine.slice(0, 700), ...theirs];
      assert.equal((await existingUserIds(storage.db, team.id, many)).size, 700, 'several chunks');
    });

    it("reads the ids from an index keyed by id, not the team's rows", async () => {
      const spy = new Statements(storage);
      await existingUserIds(storage.db.withPlugin(spy), team.id, [mine[2]!, mine[3]!, mine[4]!]);
      const q = spy.seen.at(-1)!;
      if (storage.hooks.name === 'sqlite') {
        const rows = (await storage.db.executeQuery(CompiledQuery.raw(`explain query plan ${q.sql}`, [...q.parameters]))).rows as { detail: string }[];
        const plan = rows.map((r) => r.detail).join('\n');
        assert.match(plan, /SEARCH users USING (COVERING )?INDEX \S+ \(id=\?\)/, plan);
        assert.doesNotMatch(plan, /users_team_created/, plan);
      } else {
        const rows = (await storage.db.executeQuery(CompiledQuery.raw(`explain ${q.sql}`, [...q.parameters]))).rows as { 'QUERY PLAN': string }[];
        const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
        assert.match(plan, /Index Cond: \(\(id\)::text = ANY/, plan);
        assert.doesNotMatch(plan, /team_id/, plan);
      }
    });
  });
}
