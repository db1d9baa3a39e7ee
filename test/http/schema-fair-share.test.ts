/**
 * Issue 27 item 9 (docs/SECURITY.md "Schema registration is cheap for the others"): a team's
 * schema registration is refused over the team's budgets (extensions, extension.attributes,
 * extension.bytes, indexed.attributes, discovery.bytes) with a 400 naming the budget, counted
 * per team on /metrics; it commits and answers before any index is built (the index is pending,
 * filters answer the same rows without it), and the app's builder builds it afterwards: on
 * PostgreSQL CONCURRENTLY, so another team's write goes on while the build waits, and an invalid
 * index a failed build left is built again; on SQLite one partial index per team. The team's
 * /Schemas and /ResourceTypes are rendered once per schema version.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { updateTeamLimits } from '../../src/admin.ts';
import { CLI_ACTOR } from '../../src/audit/events.ts';
import { DiscoveryCache } from '../../src/scim/discovery-cache.ts';
import { addSchema } from '../../src/scim/team-schemas.ts';
import { BASE_URL, createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { adminDeps } from '../support/oauth.ts';

type Json = Record<string, unknown>;

const CORE = 'urn:ietf:params:scim:schemas:core:2.0:User';
const urn = (name: string) => `urn:acme:params:scim:schemas:extension:${name}:2.0:User`;
const badges = (name: string) => ({ id: urn(name), name, attributes: [{ name: 'badge', type: 'string', uniqueness: 'server' }, { name: 'floor', type: 'string' }] });

for (const engine of engines) {
  describe(`schema registration is cheap for the others on ${engine.name}`, () => {
    let t: TestApp;
    const discovery = new DiscoveryCache();

    const extensionIndexes = async () => (await t.storage.hooks.indexStates(t.storage.db, 'users')).filter((i) => i.name.startsWith('rc_x_'));
    const register = (schema: unknown, token = t.token) =>
      t.app.inject({ method: 'POST', url: '/v2/admin/Schemas', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' }, payload: JSON.stringify({ resourceType: 'User', schema }) });
    const remove = (id: string) => t.app.inject({ method: 'DELETE', url: `/v2/admin/Schemas/${encodeURIComponent(id)}`, headers: { authorization: `Bearer ${t.token}` } });
    const limit = (name: Parameters<typeof updateTeamLimits>[2][number]['name'], value: number | null) => updateTeamLimits(adminDeps(t), 'acme', [{ name, value }]);
    const refusedOver = (res: { statusCode: number; body: string }, budget: string) => {
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(json(res as never).scimType, 'invalidValue');
      assert.match(String(json(res as never).detail), new RegExp(`budget "${budget.replace('.', '\\.')}"`));
    };

    before(async () => {
      t = await createTestApp({ engine, deps: { discovery } });
    });
    after(() => t.close());

    it('a registration over the extensions budget is refused naming it, and counted per team on /metrics', async () => {
      await limit('extensions', 1);
      assert.equal((await register(badges('One'))).statusCode, 201);
      refusedOver(await register(badges('Two')), 'extensions');
      // A new definition of the registered one is no new extension.
      assert.equal((await register({ ...badges('One'), attributes: [...badges('One').attributes, { name: 'desk', type: 'string' }] })).statusCode, 201);
      const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
      assert.match(metrics, new RegExp(`rollcall_budget_refusals_total\\{team="${t.team.id}",budget="extensions"\\} 1`));
      await limit('extensions', null);
    });

    it('attributes (sub-attributes counted), bytes and indexed attributes each have their budget', async () => {
      await limit('extension.attributes', 5);
      // One has 3 attributes; 1 + 2 sub-attributes more makes 6.
      refusedOver(await register({ id: urn('Sub'), attributes: [{ name: 'desk', type: 'complex', subAttributes: [{ name: 'x', type: 'string' }, { name: 'y', type: 'string' }] }] }), 'extension.attributes');
      assert.equal((await register({ id: urn('Sub'), attributes: [{ name: 'desk', type: 'complex', subAttributes: [{ name: 'x', type: 'string' }] }] })).statusCode, 201);
      await limit('extension.attributes', null);

      await limit('extension.bytes', 1024);
      refusedOver(await register({ id: urn('Long'), attributes: [{ name: 'note', type: 'string', description: 'n'.repeat(1000) }] }), 'extension.bytes');
      await limit('extension.bytes', null);

      await limit('indexed.attributes', 2);
      refusedOver(await register({ id: urn('Keys'), attributes: [{ name: 'a', type: 'string', uniqueness: 'server' }, { name: 'b', type: 'string', uniqueness: 'server' }] }), 'indexed.attributes');
      await limit('indexed.attributes', null);
      // A team over a lowered budget may still shrink: One without its indexed attribute.
      await limit('indexed.attributes', 0);
      assert.equal((await register({ id: urn('One'), attributes: [{ name: 'floor', type: 'string' }, { name: 'desk', type: 'string' }] })).statusCode, 201);
      await limit('indexed.attributes', null);
      for (const id of [urn('One'), urn('Sub')]) assert.equal((await remove(id)).statusCode, 204);
    });

    it('/Schemas is rendered once per schema version, and a registration that would take it over discovery.bytes is refused', async () => {
      const get = async (url: string) => {
        const res = await t.request('GET', url);
        assert.equal(res.statusCode, 200, res.body);
        return json(res);
      };
      const first = await get('/v2/scim/Schemas');
      const rendered = discovery.renders;
      assert.deepEqual(await get('/v2/scim/Schemas'), first);
      assert.deepEqual(await get('/scim/Schemas'), first, 'both prefixes share the rendering');
      assert.equal(discovery.renders, rendered, 'the same version is not rendered again');
      await get('/v2/scim/ResourceTypes');
      await get('/v2/scim/ResourceTypes');
      assert.equal(discovery.renders, rendered + 1);

      const wide = (name: string, n: number) => ({ id: urn(name), attributes: Array.from({ length: n }, (_, i) => ({ name: `a${i}`, type: 'string', description: 'd'.repeat(1000) })) });
      assert.equal((await register(wide('Wide', 20))).statusCode, 201);
      const next = await get('/v2/scim/Schemas');
      assert.equal(discovery.renders, rendered + 2, 'a new schema version is rendered');
      assert.ok((next.Resources as Json[]).some((s) => s.id === urn('Wide')));

      await limit('discovery.bytes', 65_536);
      refusedOver(await register(wide('Wider', 50)), 'discovery.bytes');
      await limit('discovery.bytes', null);
      assert.equal((await remove(urn('Wide'))).statusCode, 204);
    });

    it('a registration answers before its index exists; filters answer the same rows meanwhile; the builder builds it', async () => {
      await t.app.extensionIndexes.idle();
      // Registered without telling the builder (as a server sees a change another instance made).
      const view = await addSchema({ storage: t.storage, clock: t.clock, baseUrl: BASE_URL }, t.team, { resourceType: 'User', schema: badges('Pending') }, { actor: CLI_ACTOR });
      assert.deepEqual(view.pending, ['badge']);
      assert.deepEqual(await extensionIndexes(), []);
      for (const [userName, badge] of [['ada', 'B-1'], ['bob', 'B-2']]) {
        const created = await t.request('POST', '/v2/scim/Users', { schemas: [CORE, urn('Pending')], userName, [urn('Pending')]: { badge } });
        assert.equal(created.statusCode, 201, created.body);
      }
      const filter = async () => {
        const res = await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent(`${urn('Pending')}:badge eq "b-1"`)}&attributes=userName`);
        assert.equal(res.statusCode, 200, res.body);
        return (json(res).Resources as Json[]).map((r) => r.userName);
      };
      assert.deepEqual(await filter(), ['ada']);
      t.app.extensionIndexes.kick();
      await t.app.extensionIndexes.idle();
      const built = await extensionIndexes();
      assert.equal(built.length, 1);
      assert.ok(built[0]!.valid);
      assert.deepEqual(await filter(), ['ada']);
      const listed = await t.request('GET', '/v2/admin/Schemas');
      assert.deepEqual((json(listed).Resources as Json[]).find((r) => r.id === urn('Pending'))!.pending, []);
    });

    if (engine.name === 'sqlite') {
      it('SQLite: each team has its own partial index, over its own rows', async () => {
        const other = await t.addTeam('other');
        assert.equal((await register(badges('Pending'), other.token)).statusCode, 201);
        await t.app.extensionIndexes.idle();
        const rows = (await sql<{ sql: string }>`select sql from sqlite_master where type = 'index' and name like 'rc_x_%'`.execute(t.storage.db)).rows;
        assert.equal(rows.length, 2);
        for (const team of [t.team.id, other.team.id]) assert.equal(rows.filter((r) => r.sql.endsWith(`where team_id = '${team}'`)).length, 1, team);
      });
    }

    if (engine.name === 'postgres') {
      it('PostgreSQL: the index is built CONCURRENTLY: another team writes while the build waits for an open transaction', async () => {
        const other = await t.addTeam('other');
        await t.storage.db.connection().execute(async (conn) => {
          // A transaction that wrote to users and stays open: a CONCURRENTLY build waits for it.
          await sql`begin`.execute(conn);
          await sql`update users set version = version where team_id = ${t.team.id}`.execute(conn);
          try {
            const res = await register(badges('Concurrent'));
            assert.equal(res.statusCode, 201, res.body);
            assert.deepEqual(json(res).pending, ['badge']);
            let building: { query: string } | undefined;
            for (let i = 0; i < 400 && !building; i++) {
              building = (await sql<{ query: string }>`select query from pg_stat_activity where datname = current_database() and query ilike 'create index%' and state = 'active'`.execute(t.storage.db)).rows[0];
              if (!building) await sleep(25);
            }
            assert.ok(building, 'the builder is running its CREATE INDEX');
            assert.match(building.query, /^create index concurrently /i);
            // Another team's write is not queued behind the build: while it runs, no other
            // statement waits on a lock (a plain CREATE INDEX would hold it until the commit below).
            let answered = false;
            const write = t.app
              .inject({ method: 'POST', url: '/v2/scim/Users', headers: { authorization: `Bearer ${other.token}`, 'content-type': 'application/scim+json' }, payload: JSON.stringify({ schemas: [CORE], userName: 'eve' }) })
              .finally(() => (answered = true));
            let blocked: { query: string } | undefined;
            while (!answered && !blocked) {
              blocked = (await sql<{ query: string }>`select query from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query not ilike 'create index%'`.execute(t.storage.db)).rows[0];
              if (!blocked) await sleep(5);
            }
            assert.equal(blocked, undefined, `another team's write waits on a lock: ${blocked?.query}`);
            const created = await write;
            assert.equal(created.statusCode, 201, created.body);
          } finally {
            await sql`commit`.execute(conn);
          }
        });
        await t.app.extensionIndexes.idle();
        assert.equal((await extensionIndexes()).filter((i) => i.valid).length, 2);
      });

      it('PostgreSQL: an invalid index (a failed CONCURRENTLY build) is dropped and built again', async () => {
        const [victim] = await extensionIndexes();
        assert.ok(victim);
        await sql`update pg_index set indisvalid = false where indexrelid = ${victim.name}::regclass`.execute(t.storage.db);
        assert.equal((await extensionIndexes()).find((i) => i.name === victim.name)!.valid, false);
        await t.app.extensionIndexes.start();
        await t.app.extensionIndexes.idle();
        assert.equal((await extensionIndexes()).find((i) => i.name === victim.name)!.valid, true);
      });
    }
  });
}
