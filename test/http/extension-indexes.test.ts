/**
 * Issue 11 item 4 (docs/SCHEMA-EXTENSIONS.md "Fast filters"): an extension attribute declared
 * `uniqueness: server` gets an expression index when its schema is registered, on every engine,
 * and the `eq` filter an identity provider sends is answered through it (the plan of the very
 * query the request ran names the index); the index is shared by the teams that want it and
 * dropped when the last of them removes the attribute or the extension. Schema changes write an
 * audit row (who, which schema, which attributes are indexed).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import type { Storage } from '../../src/storage/connect.ts';
import { indexNames } from '../../src/storage/dialect.ts';
import { hooksOf, hot, StorageCarrier } from '../../src/storage/statements.ts';
import type { Statements } from '../../src/storage/statements.ts';
import { listAuditEvents } from '../../src/storage/repos/audit.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { loadUsers } from '../support/rows.ts';

type Json = Record<string, unknown>;

const URN = 'urn:acme:params:scim:schemas:extension:Badges:2.0:User';
const CORE = 'urn:ietf:params:scim:schemas:core:2.0:User';
const SCHEMA = {
  id: URN,
  name: 'Badges',
  attributes: [
    { name: 'badge', type: 'string', uniqueness: 'server' },
    { name: 'code', type: 'string', uniqueness: 'server', caseExact: true },
    { name: 'costCenter', type: 'string' },
  ],
};

/** Keeps the last SELECT the app ran on the users table, compiled as it was sent. */
class LastUsersSelect implements KyselyPlugin {
  last: CompiledQuery | undefined;
  #storage: Storage | undefined;

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (args.node.kind === 'SelectQueryNode' && JSON.stringify(args.node).includes('"users"') && JSON.stringify(args.node).includes(URN)) {
      this.last = this.#storage!.db.getExecutor().compileQuery(args.node, args.queryId);
    }
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }

  wrap(storage: Storage): Storage {
    this.#storage = storage;
    const db = storage.db.withPlugin(this);
    // List pages compiled once per shape (statements.ts `shaped`) are compiled here again with
    // their values, so the plugin sees each one as sent.
    const inner = hot(storage.db);
    const statements: Statements = {
      all: (ex, def, params) => inner.all(ex, def, params),
      first: (ex, def, params) => inner.first(ex, def, params),
      run: (ex, def, params) => inner.run(ex, def, params),
      write: (ex, def, params) => inner.write(ex, def, params),
      shaped: (ex, query) => (query.build(db, true).compile(), inner.shaped(ex, query)),
    };
    return { ...storage, db: db.withPlugin(new StorageCarrier(statements, hooksOf(storage.db))) };
  }
}

for (const engine of engines) {
  describe(`extension attribute indexes on ${engine.name}`, () => {
    let t: TestApp;
    const spy = new LastUsersSelect();

    const extensionIndexes = async (): Promise<string[]> => (await indexNames(t.storage.db, t.storage.hooks.name, 'users')).filter((n) => n.startsWith('rc_x_')).sort();

    /**
     * Whether the last filtered users query looks the value up in extension index `name` (its
     * expression is an index condition, not only the team): on SQLite the query is planned with
     * `INDEXED BY`; on PostgreSQL with only bitmap scans allowed (a table of a few rows would
     * otherwise be read by creation order, as a million rows never would).
     */
    const usesIndex = async (name: string): Promise<boolean> => {
      const q = spy.last;
      assert.ok(q, 'no filtered users query was run');
      if (t.storage.hooks.name === 'sqlite') {
        // Planned with `INDEXED BY` (a table of a few thousand rows is read by creation order
        // otherwise, as a million never is). The index is partial on the team: SQLite matches
        // its `team_id = '<id>'` with the query's bound team id only once bound, after INDEXED
        // BY is resolved, so the team id (the first parameter) is written in as a literal here.
        const teamTerm = '"r"."team_id" = ?';
        assert.ok(q.sql.indexOf(teamTerm) >= 0 && q.sql.indexOf('?') === q.sql.indexOf(teamTerm) + teamTerm.length - 1, q.sql);
        const forced = q.sql.replace('from "users" as "r"', `from "users" as "r" indexed by "${name}"`).replace(teamTerm, `"r"."team_id" = '${String(q.parameters[0])}'`);
        try {
          const rows = (await t.storage.db.executeQuery(CompiledQuery.raw(`explain query plan ${forced}`, q.parameters.slice(1)))).rows as { detail: string }[];
          return rows.some((r) => r.detail.includes(name) && r.detail.includes('<expr>=?'));
        } catch (error) {
          if (/no query solution/.test(String(error))) return false;
          throw error;
        }
      }
      const plan = await t.storage.db.transaction().execute(async (trx) => {
        await sql`set local enable_seqscan = off`.execute(trx);
        await sql`set local enable_indexscan = off`.execute(trx);
        return (await trx.executeQuery(CompiledQuery.raw(`explain ${q.sql}`, [...q.parameters]))).rows as { 'QUERY PLAN': string }[];
      });
      const text = plan.map((r) => r['QUERY PLAN']).join('\n');
      return text.includes(name) && /Index Cond: .*#>>/.test(text);
    };
    const anyIndexServes = async (): Promise<boolean> => {
      for (const name of await extensionIndexes()) if (await usesIndex(name)) return true;
      return false;
    };

    const found = async (filter: string, token?: string): Promise<string[]> => {
      const res = await t.app.inject({ method: 'GET', url: `/v2/scim/Users?filter=${encodeURIComponent(filter)}&attributes=userName`, headers: { authorization: `Bearer ${token ?? t.token}` } });
      assert.equal(res.statusCode, 200, res.body);
      return ((json(res).Resources as Json[] | undefined) ?? []).map((r) => String(r.userName)).sort();
    };

    before(async () => {
      t = await createTestApp({ engine, wrapStorage: (s) => spy.wrap(s) });
    });
    after(() => t.close());

    it('registering a schema indexes its uniqueness: server attributes after answering, and says so', async () => {
      assert.deepEqual(await extensionIndexes(), []);
      const res = await t.request('POST', '/v2/admin/Schemas', { resourceType: 'User', schema: SCHEMA });
      assert.equal(res.statusCode, 201, res.body);
      assert.deepEqual(json(res).indexed, ['badge', 'code']);
      // Issue 27 item 9: the registration committed and answered before any index was built.
      assert.deepEqual(json(res).pending, ['badge', 'code']);
      await t.app.extensionIndexes.idle();
      assert.equal((await extensionIndexes()).length, 2);
      const listed = await t.request('GET', '/v2/admin/Schemas');
      assert.deepEqual((json(listed).Resources as Json[])[0]!.pending, []);
      for (const [userName, badge, code] of [['ada', 'B-1', 'Ab'], ['bob', 'B-2', 'aB'], ['cy', 'x-1', 'AB']]) {
        const created = await t.request('POST', '/v2/scim/Users', { schemas: [CORE, URN], userName, [URN]: { badge, code, costCenter: 'R&D' } });
        assert.equal(created.statusCode, 201, created.body);
      }
      // Enough users without the extension that looking up the team alone costs more than the value.
      await loadUsers(t.storage, t.team, { naming: { prefix: 'other', domain: 'x.example' }, count: 2_000 });
      await sql`analyze users`.execute(t.storage.db);
    });

    it('RFC 7643 2.1: eq on a case-insensitive attribute is answered through its index', async () => {
      assert.deepEqual(await found(`${URN}:badge eq "b-1"`), ['ada']);
      assert.ok(await anyIndexServes());
    });

    it('eq on a caseExact attribute is answered through its own index, case-sensitively', async () => {
      assert.deepEqual(await found(`${URN}:code eq "aB"`), ['bob']);
      assert.ok(await anyIndexServes());
    });

    it('an attribute without uniqueness: server has no index, and its filter still answers', async () => {
      assert.deepEqual(await found(`${URN}:costCenter eq "r&d"`), ['ada', 'bob', 'cy']);
      assert.equal(await anyIndexServes(), false);
    });

    it('teams share an index; it goes when the last team drops the attribute, then the extension', async () => {
      const other = await t.addTeam('other');
      const post = (token: string, schema: unknown) =>
        t.app.inject({ method: 'POST', url: '/v2/admin/Schemas', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' }, payload: JSON.stringify({ resourceType: 'User', schema }) });
      const remove = (token: string) => t.app.inject({ method: 'DELETE', url: `/v2/admin/Schemas/${encodeURIComponent(URN)}`, headers: { authorization: `Bearer ${token}` } });
      // SQLite: an index per team, partial on its rows; PostgreSQL: one shared by both teams.
      const perTeam = t.storage.hooks.expressionIndexScope('any team') !== undefined;
      assert.equal((await post(other.token, SCHEMA)).statusCode, 201);
      await t.app.extensionIndexes.idle();
      const both = await extensionIndexes();
      assert.equal(both.length, perTeam ? 4 : 2, perTeam ? 'each team has its own indexes' : 'the same expressions are indexed once for both teams');
      assert.equal((await remove(t.token)).statusCode, 204);
      await t.app.extensionIndexes.idle();
      const others = await extensionIndexes();
      if (perTeam) assert.equal(others.length, 2, "the first team's indexes are dropped");
      else assert.deepEqual(others, both, 'the other team still wants them');
      // The other team's data is found through the index; the first team's filter is refused (no such attribute).
      const created = await t.app.inject({ method: 'POST', url: '/v2/scim/Users', headers: { authorization: `Bearer ${other.token}`, 'content-type': 'application/scim+json' }, payload: JSON.stringify({ schemas: [CORE, URN], userName: 'dee', [URN]: { badge: 'B-1' } }) });
      assert.equal(created.statusCode, 201, created.body);
      assert.deepEqual(await found(`${URN}:badge eq "B-1"`, other.token), ['dee']);
      const withoutCode = { ...SCHEMA, attributes: SCHEMA.attributes.filter((a) => a.name !== 'code') };
      const replaced = await post(other.token, withoutCode);
      assert.equal(replaced.statusCode, 201, replaced.body);
      assert.deepEqual(json(replaced).indexed, ['badge']);
      await t.app.extensionIndexes.idle();
      assert.equal((await extensionIndexes()).length, 1, "the code attribute's index is dropped");
      assert.equal((await remove(other.token)).statusCode, 204);
      await t.app.extensionIndexes.idle();
      assert.deepEqual(await extensionIndexes(), []);
    });

    it('schema changes are audited with the actor and what was indexed', async () => {
      const rows = await listAuditEvents(t.storage.db, t.team.id, undefined, 100);
      const added = rows.find((r) => r.action === 'schema_added');
      const removed = rows.find((r) => r.action === 'schema_removed');
      assert.ok(added && removed, JSON.stringify(rows.map((r) => r.action)));
      assert.equal(added.resource_type, 'Schema');
      assert.deepEqual(JSON.parse(added.detail), { schema: URN, resourceType: 'User', replaced: false, attributes: ['badge', 'code', 'costCenter'], indexed: ['badge', 'code'] });
      assert.deepEqual(JSON.parse(removed.detail), { schema: URN, resourceType: 'User' });
      assert.equal(JSON.parse(added.actor).via, 'scim');
    });
  });
}
