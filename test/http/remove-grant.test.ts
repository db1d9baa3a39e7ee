/**
 * Issue 31 item 3 (a catalog entry removed with force): scim/grants.ts `removeGrantFromUsers`
 * takes the entry away from every user holding it, in the caller's transaction, on every engine:
 * each holder's document rewritten without it (as GET shows), its version bumped, its grants rows
 * dropped, one audit row and one SCIM `patch` event (changed `roles`) per user, the team's
 * counters untouched; other entries, other kinds, other teams and non-holders untouched; holders
 * walked in batches (a batch of 2 here), hidden deactivated holders included; a rollback of the
 * caller's transaction leaves everything as it was.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CLI_ACTOR } from '../../src/audit/events.ts';
import { PasswordHasher } from '../../src/oauth/passwords.ts';
import type { ScimContext } from '../../src/scim/context.ts';
import { removeGrantFromUsers } from '../../src/scim/grants.ts';
import { loadTeamTypes } from '../../src/scim/team-schemas.ts';
import { teamCounts } from '../../src/storage/repos/counters.ts';
import { teamById } from '../../src/storage/repos/teams.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { seedCatalog } from '../support/catalog.ts';
import { engines } from '../support/engines.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
type Json = Record<string, unknown>;

for (const engine of engines) {
  describe(`removeGrantFromUsers on ${engine.name}`, () => {
    let t: TestApp;
    const ids: Record<string, string> = {};
    let other: { team: { id: string }; token: string };

    const create = async (name: string, body: Json) => {
      const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: `${name}@x.example`, ...body });
      assert.equal(res.statusCode, 201, res.body);
      ids[name] = String(json(res).id);
    };
    const context = async (): Promise<ScimContext> => {
      const team = (await teamById(t.storage.db, t.team.id))!;
      return { storage: t.storage, clock: t.clock, baseUrl: 'https://rollcall.test', team, actor: CLI_ACTOR, requestId: 'req-force', cursorSecret: 'test', passwords: new PasswordHasher(), types: await loadTeamTypes(t.storage.db, team.id) };
    };
    const rowsOf = async (teamId: string) =>
      (await t.storage.db.selectFrom('user_grants').selectAll().where('team_id', '=', teamId).execute()).map((r) => `${r.user_id} ${r.kind} ${r.value}`).sort();
    const get = async (id: string) => {
      const res = await t.request('GET', `/v2/scim/Users/${id}`);
      return res.statusCode === 200 ? json(res) : undefined;
    };

    before(async () => {
      t = await createTestApp({ engine });
      await seedCatalog(t.storage, t.team.id, { roles: [{ value: 'admin' }, { value: 'viewer' }], types: [{ name: 'Tier', endpoint: '/Tiers', entitlements: [{ value: 'gold' }] }] });
      await create('ada', { roles: [{ value: 'admin', primary: true }, { value: 'viewer' }] });
      await create('bob', { roles: [{ value: 'admin', type: 'x' }, { value: 'admin', type: 'y' }] });
      await create('cy', { roles: [{ value: 'admin' }] });
      await create('dee', { roles: [{ value: 'viewer' }], entitlements: [{ value: 'gold' }] });
      await create('eve', { roles: [{ value: 'admin' }], entitlements: [{ value: 'gold' }] });
      // A hidden deactivated holder (this team hides them): it holds its rows, so it loses the role too.
      assert.equal((await t.request('DELETE', `/v2/scim/Users/${ids.eve}`)).statusCode, 204);
      other = await t.addTeam('other');
      const res = await t.app.inject({ method: 'POST', url: '/v2/scim/Users', headers: { authorization: `Bearer ${other.token}`, 'content-type': 'application/scim+json' }, payload: { userName: 'zed', roles: [{ value: 'admin' }] } });
      assert.equal(res.statusCode, 201, res.body);
    });
    after(() => t?.close());

    it('a rolled back transaction changes nothing', async () => {
      const before = await rowsOf(t.team.id);
      const ctx = await context();
      await assert.rejects(
        t.storage.db.transaction().execute(async (trx) => {
          assert.equal(await removeGrantFromUsers(ctx, trx, 'role', 'admin', 2), 4);
          throw new Error('rolled back');
        }),
        /rolled back/,
      );
      assert.deepEqual(await rowsOf(t.team.id), before);
      assert.deepEqual((await get(ids.ada!))!.roles, [{ value: 'admin', primary: true }, { value: 'viewer' }]);
    });

    it('removes the role from its 4 holders: documents, versions, rows, one audit row and one patch event each; counters untouched', async () => {
      const countsBefore = await teamCounts(t.storage.db, t.team.id);
      const versions = Object.fromEntries(await Promise.all(Object.entries(ids).map(async ([n, id]) => [n, (await t.storage.db.selectFrom('users').select('version').where('id', '=', id).executeTakeFirstOrThrow()).version])));
      const ctx = await context();
      const changed = await t.storage.db.transaction().execute((trx) => removeGrantFromUsers(ctx, trx, 'role', 'admin', 2));
      assert.equal(changed, 4);
      assert.deepEqual((await get(ids.ada!))!.roles, [{ value: 'viewer' }]);
      assert.equal((await get(ids.bob!))!.roles, undefined, 'an attribute left empty is removed');
      assert.equal((await get(ids.cy!))!.roles, undefined);
      assert.deepEqual((await get(ids.dee!))!.roles, [{ value: 'viewer' }], 'a non-holder is untouched');
      for (const [name, id] of Object.entries(ids)) {
        const { version } = await t.storage.db.selectFrom('users').select('version').where('id', '=', id).executeTakeFirstOrThrow();
        assert.equal(version, versions[name] + (name === 'dee' ? 0 : 1), `${name}'s version`);
      }
      assert.deepEqual(await rowsOf(t.team.id), [`${ids.ada} role viewer`, `${ids.dee} entitlement gold`, `${ids.dee} role viewer`, `${ids.eve} entitlement gold`].sort());
      assert.deepEqual(await rowsOf(other.team.id), [(await rowsOf(other.team.id))[0]!], 'another team keeps its holder');
      assert.match((await rowsOf(other.team.id))[0]!, / role admin$/);
      const audits = await t.storage.db.selectFrom('audit_events').selectAll().where('team_id', '=', t.team.id).where('request_id', '=', 'req-force').execute();
      assert.deepEqual(audits.map((a) => a.resource_id).sort(), [ids.ada, ids.bob, ids.cy, ids.eve].sort());
      assert.ok(audits.every((a) => a.action === 'patch'));
      const events = await t.storage.db.selectFrom('events').selectAll().where('team_id', '=', t.team.id).where('txn', '=', 'req-force').execute();
      assert.deepEqual(events.map((e) => e.resource_id).sort(), [ids.ada, ids.bob, ids.cy, ids.eve].sort());
      assert.ok(events.every((e) => e.type === 'patch' && e.resource_type === 'User' && JSON.parse(e.changed).includes('roles')));
      assert.deepEqual(await teamCounts(t.storage.db, t.team.id), countsBefore);
    });

    it('an entry nobody holds any more changes nobody', async () => {
      const ctx = await context();
      assert.equal(await t.storage.db.transaction().execute((trx) => removeGrantFromUsers(ctx, trx, 'role', 'admin')), 0);
    });

    it('an entitlement is removed from entitlements alone', async () => {
      const ctx = await context();
      assert.equal(await t.storage.db.transaction().execute((trx) => removeGrantFromUsers(ctx, trx, 'entitlement', 'gold')), 2);
      const dee = (await get(ids.dee!))!;
      assert.equal(dee.entitlements, undefined);
      assert.deepEqual(dee.roles, [{ value: 'viewer' }]);
      assert.deepEqual(await rowsOf(t.team.id), [`${ids.ada} role viewer`, `${ids.dee} role viewer`].sort());
    });
  });
}
