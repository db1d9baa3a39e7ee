/**
 * Issue 27 item 10 (docs/SECURITY.md "Large group writes in steps"): a POST or PUT of a group
 * with thousands of members writes its memberships in chunks with the event loop turning
 * between them (SQLite answers synchronously, so a run of inserts never yields by itself), still
 * in one transaction: the group ends with every member, and a refused write leaves nothing of
 * itself behind.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import type { Storage } from '../../src/storage/connect.ts';
import { hooksOf, hot, StorageCarrier } from '../../src/storage/statements.ts';
import { loadUsers } from '../support/rows.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const MEMBERS = 5_000;

/**
 * Notes, at each INSERT into group_members, how many turns of the event loop (setImmediate
 * callbacks of a ticker) have run so far.
 */
class MemberInserts implements KyselyPlugin {
  turnsAtInsert: number[] = [];
  turns = 0;
  /** When set, the INSERT into group_members with this number (1-based) throws. */
  failOn: number | undefined;
  #ticking = false;

  startTicker(): void {
    this.#ticking = true;
    this.turns = 0;
    this.turnsAtInsert = [];
    const tick = (): void => {
      if (!this.#ticking) return;
      this.turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
  }

  stopTicker(): void {
    this.#ticking = false;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (args.node.kind === 'InsertQueryNode' && JSON.stringify(args.node.into).includes('"group_members"')) {
      this.turnsAtInsert.push(this.turns);
      if (this.turnsAtInsert.length === this.failOn) throw new Error(`injected failure of membership insert ${this.failOn}`);
    }
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }

  wrap(storage: Storage): Storage {
    const inner = hot(storage.db);
    return { ...storage, db: storage.db.withPlugin(this).withPlugin(new StorageCarrier(inner, hooksOf(storage.db))) };
  }
}

for (const engine of engines) {
  describe(`large group writes in steps on ${engine.name}`, () => {
    let t: TestApp;
    let ids: string[];
    const spy = new MemberInserts();

    const memberCount = async (groupId: string): Promise<number> =>
      Number((await t.storage.db.selectFrom('group_members').select((eb) => eb.fn.countAll().as('n')).where('group_id', '=', groupId).executeTakeFirstOrThrow()).n);

    before(async () => {
      t = await createTestApp({ engine, wrapStorage: (s) => spy.wrap(s) });
      ids = (await loadUsers(t.storage, t.team, { naming: { prefix: 'm', domain: 'big.example' }, count: MEMBERS })).ids;
    });
    after(() => t.close());

    it('a POST of 5,000 members lets the event loop turn between membership chunks, and the group has them all', async () => {
      spy.startTicker();
      const res = await t.request('POST', '/v2/scim/Groups?excludedAttributes=members', { schemas: [GROUP], displayName: 'Everyone', members: ids.map((value) => ({ value })) });
      spy.stopTicker();
      assert.equal(res.statusCode, 201, res.body);
      const inserts = spy.turnsAtInsert;
      assert.ok(inserts.length > 1, `memberships written in chunks (${inserts.length} insert statements)`);
      // Between every two chunks the event loop ran the ticker at least once.
      for (let i = 1; i < inserts.length; i++) assert.ok(inserts[i]! > inserts[i - 1]!, `the event loop turned before chunk ${i + 1}: ${inserts.join(',')}`);
      assert.equal(await memberCount(String(json(res).id)), MEMBERS);
    });

    it('a POST whose last member is no user of the team is refused and writes no group', async () => {
      const before = await t.storage.db.selectFrom('groups').select('id').where('team_id', '=', t.team.id).execute();
      const res = await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'Broken', members: [...ids, 'no-such-user'].map((value) => ({ value })) });
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res).scimType, 'invalidValue');
      assert.match(String(json(res).detail), /no-such-user/);
      const afterwards = await t.storage.db.selectFrom('groups').select('id').where('team_id', '=', t.team.id).execute();
      assert.equal(afterwards.length, before.length);
    });

    it('a PUT failing at its fifth membership chunk rolls back the chunks before it: the group keeps its members', async () => {
      const created = await t.request('POST', '/v2/scim/Groups?excludedAttributes=members', { schemas: [GROUP], displayName: 'Half', members: ids.slice(0, 10).map((value) => ({ value })) });
      assert.equal(created.statusCode, 201, created.body);
      const id = String(json(created).id);
      spy.startTicker();
      spy.failOn = 5;
      try {
        const res = await t.request('PUT', `/v2/scim/Groups/${id}?excludedAttributes=members`, { schemas: [GROUP], displayName: 'Half', members: ids.map((value) => ({ value })) });
        assert.equal(res.statusCode, 500, res.body);
      } finally {
        spy.failOn = undefined;
        spy.stopTicker();
      }
      assert.equal(spy.turnsAtInsert.length, 5, 'four chunks were written before the failure');
      assert.equal(await memberCount(id), 10);
    });
  });
}
