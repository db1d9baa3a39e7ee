/**
 * Issue 31, the review's findings on the catalog's changes against users' writes, on every
 * engine, each test on a team of its own:
 * - a forced removal running alongside writes of the users holding the entry answers 200 (never
 *   500) and leaves no holder (review #2); it walks every holder even when grants rows of users
 *   that are gone fill a batch (review #18);
 * - a required entitlement type never blocks a write that leaves `entitlements` as they were
 *   (a deactivation), and cannot be declared without entitlements (review #3);
 * - a user write assigning an entry a concurrent change removed is refused (review #4);
 * - a whole-catalog PUT needs both `roles` and `entitlementTypes` (review #13);
 * - an identical PUT writes nothing, not even the team's row (review #14);
 * - mapping events carry a version of their own (review #12), and a forced removal records one
 *   unmapping per mapping it deletes (review #15).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { CLI_ACTOR } from '../../src/audit/events.ts';
import { PasswordHasher } from '../../src/oauth/passwords.ts';
import type { ScimContext } from '../../src/scim/context.ts';
import { removeGrantFromUsers } from '../../src/scim/grants.ts';
import { loadTeamTypes } from '../../src/scim/team-schemas.ts';
import { teamById } from '../../src/storage/repos/teams.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
type Json = Record<string, unknown>;

for (const engine of engines) {
  describe(`catalog changes against users' writes on ${engine.name}`, () => {
    let t: TestApp;
    let n = 0;

    before(async () => {
      t = await createTestApp({ engine });
    });
    after(() => t.close());

    /** A team of its own, and a request function with its token. */
    const team = async () => {
      const { team, token } = await t.addTeam(`team${++n}`);
      const req = (method: string, url: string, body?: unknown) => t.request(method, url, body, { authorization: `Bearer ${token}` });
      const user = async (userName: string, body: Json = {}): Promise<string> => {
        const res = await req('POST', '/v2/scim/Users', { schemas: [USER], userName, ...body });
        assert.equal(res.statusCode, 201, res.body);
        return String(json(res).id);
      };
      return { team, token, req, user };
    };
    const grantRows = async (teamId: string, value: string) =>
      (await t.storage.db.selectFrom('user_grants').select('user_id').where('team_id', '=', teamId).where('value', '=', value).execute()).map((r) => r.user_id);

    it('a forced removal alongside writes of its holders answers 200 and leaves no holder (review #2)', async () => {
      const { team: tm, req, user } = await team();
      const doc = { roles: [{ value: 'admin', displayName: 'Admin' }, { value: 'viewer', displayName: 'Viewer' }], entitlementTypes: [] };
      assert.equal((await req('PUT', '/v2/admin/Catalog', doc)).statusCode, 200);
      const ids: string[] = [];
      for (let i = 0; i < 40; i++) ids.push(await user(`h${i}`, { roles: [{ value: 'admin' }, { value: 'viewer' }] }));
      const patch = (id: string, path: string, value: string) => req('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path, value }] });
      const [force, ...writes] = await Promise.all([
        req('PUT', '/v2/admin/Catalog?force=true', { roles: [{ value: 'viewer', displayName: 'Viewer' }], entitlementTypes: [] }),
        ...ids.map((id, i) => patch(id, 'displayName', `d${i}`)),
        ...ids.map((id, i) => patch(id, 'nickName', `k${i}`)),
      ]);
      assert.equal(force!.statusCode, 200, force!.body);
      for (const w of writes) assert.equal(w.statusCode, 200, w.body);
      assert.deepEqual(await grantRows(tm.id, 'admin'), []);
      for (const id of ids) {
        const doc = json(await req('GET', `/v2/scim/Users/${id}`));
        assert.deepEqual(doc.roles, [{ value: 'viewer' }]);
        assert.ok(doc.displayName !== undefined && doc.nickName !== undefined, 'both writes kept');
      }
    });

    it('a forced removal walks every holder, past grants rows whose users are gone (review #18)', async () => {
      const { team: tm, req, user } = await team();
      assert.equal((await req('PUT', '/v2/admin/Catalog', { roles: [{ value: 'admin', displayName: 'Admin' }], entitlementTypes: [] })).statusCode, 200);
      const holder = await user('real', { roles: [{ value: 'admin' }] });
      // Rows no users row explains, sorting before the real holder: they fill a batch of 2.
      await t.storage.db.insertInto('user_grants').values(['0-gone-a', '0-gone-b', '0-gone-c'].map((id) => ({ team_id: tm.id, user_id: id, kind: 'role' as const, value: 'admin', type: '', is_primary: 0 }))).execute();
      const row = (await teamById(t.storage.db, tm.id))!;
      const ctx: ScimContext = { storage: t.storage, clock: t.clock, baseUrl: 'https://rollcall.test', team: row, actor: CLI_ACTOR, requestId: null, cursorSecret: 'test', passwords: new PasswordHasher(), types: await loadTeamTypes(t.storage.db, row.id) };
      const changed = await t.storage.db.transaction().execute((trx) => removeGrantFromUsers(ctx, trx, 'role', 'admin', 2));
      assert.equal(changed, 1);
      assert.deepEqual(await grantRows(tm.id, 'admin'), []);
      assert.equal(json(await req('GET', `/v2/scim/Users/${holder}`)).roles, undefined);
    });

    it('a required entitlement type never refuses a write that leaves entitlements as they were; it needs entitlements (review #3)', async () => {
      const { req, user } = await team();
      const license = (required: boolean) => ({ name: 'License', endpoint: '/Licenses', required, entitlements: [{ value: 'e5', displayName: 'E5' }, { value: 'e3', displayName: 'E3' }] });
      const catalog = (required: boolean) => ({ roles: [{ value: 'admin', displayName: 'Admin' }], entitlementTypes: [license(required)] });
      assert.equal((await req('PUT', '/v2/admin/Catalog', catalog(false))).statusCode, 200);
      const old = await user('old', { roles: [{ value: 'admin' }] });
      const holder = await user('holder', { entitlements: [{ value: 'e5' }] });
      assert.equal((await req('PUT', '/v2/admin/Catalog', catalog(true))).statusCode, 200);
      // Okta's deactivation: a PUT with the user as it was, active false; then reactivated.
      let res = await req('PUT', `/v2/scim/Users/${old}`, { schemas: [USER], userName: 'old', active: false, roles: [{ value: 'admin' }] });
      assert.equal(res.statusCode, 200, res.body);
      res = await req('PATCH', `/v2/scim/Users/${old}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: true }] });
      assert.equal(res.statusCode, 200, res.body);
      res = await req('PATCH', `/v2/scim/Users/${old}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'roles', value: [] }] });
      assert.equal(res.statusCode, 200, res.body);
      // A write leaving the user deactivated is never refused for it, even when it drops the entitlement.
      res = await req('PUT', `/v2/scim/Users/${holder}`, { schemas: [USER], userName: 'holder', active: false });
      assert.equal(res.statusCode, 200, res.body);
      // Writes that assign entitlements, and creates, still need one.
      res = await req('PUT', `/v2/scim/Users/${holder}`, { schemas: [USER], userName: 'holder', active: true });
      assert.equal(res.statusCode, 200, 'a reactivation leaving entitlements as they were (none) is not refused');
      res = await req('POST', '/v2/scim/Users', { schemas: [USER], userName: 'new' });
      assert.equal(res.statusCode, 400);
      assert.match(String(json(res).detail), /a License entitlement is required/);
      const e5 = await user('e5', { entitlements: [{ value: 'e5' }] });
      res = await req('PUT', `/v2/scim/Users/${e5}`, { schemas: [USER], userName: 'e5', entitlements: [] });
      assert.equal(res.statusCode, 400, 'an active user losing its License is refused');

      // Declaring a required type without entitlements is refused, in a whole PUT too; nothing changes.
      const before = json(await req('GET', '/v2/admin/Catalog'));
      res = await req('PUT', '/v2/admin/Catalog', { roles: [], entitlementTypes: [license(false), { name: 'Seat', endpoint: '/Seats', required: true, entitlements: [] }] });
      assert.equal(res.statusCode, 400, res.body);
      assert.match(String(json(res).detail), /entitlement type Seat is required but has no entitlements/);
      assert.deepEqual(json(await req('GET', '/v2/admin/Catalog')), before);
    });

    it('a user write assigning an entry the catalog no longer has is refused, whatever types it loaded (review #4)', async () => {
      const { team: tm, req, user } = await team();
      const both = { roles: [{ value: 'viewer', displayName: 'V' }, { value: 'ops', displayName: 'Ops' }], entitlementTypes: [] };
      const viewerOnly = { roles: [{ value: 'viewer', displayName: 'V' }], entitlementTypes: [] };
      assert.equal((await req('PUT', '/v2/admin/Catalog', both)).statusCode, 200);
      assert.equal((await req('GET', '/v2/scim/Roles')).statusCode, 200);
      const held = await user('held', { roles: [{ value: 'viewer' }] });
      // The entry goes while this instance still holds the types that list it (another instance's
      // removal, not announced yet): the write reads the catalog in its own transaction.
      await t.storage.db.deleteFrom('catalog_entries').where('team_id', '=', tm.id).where('value', '=', 'ops').execute();
      let res = await req('POST', '/v2/scim/Users', { schemas: [USER], userName: 'late', roles: [{ value: 'ops' }] });
      assert.equal(res.statusCode, 400, res.body);
      assert.match(String(json(res).detail), /"ops" is not a role in the team's catalog/);
      res = await req('PATCH', `/v2/scim/Users/${held}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'roles', value: [{ value: 'ops' }] }] });
      assert.equal(res.statusCode, 400, res.body);
      // What it held already, and writes assigning nothing new, go through.
      res = await req('PATCH', `/v2/scim/Users/${held}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'displayName', value: 'H' }] });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(await grantRows(tm.id, 'ops'), []);

      // Creations assigning the entry race its forced removal: when the removal is done, nobody holds it.
      for (let round = 0; round < 10; round++) {
        assert.equal((await req('PUT', '/v2/admin/Catalog', both)).statusCode, 200);
        const [removal, ...posts] = await Promise.all([
          req('PUT', '/v2/admin/Catalog?force=true', viewerOnly),
          ...[0, 1, 2].map((i) => req('POST', '/v2/scim/Users', { schemas: [USER], userName: `r${round}-${i}`, roles: [{ value: 'ops' }] })),
        ]);
        assert.equal(removal!.statusCode, 200, removal!.body);
        for (const post of posts) assert.ok([201, 400].includes(post.statusCode), post.body);
        assert.deepEqual(await grantRows(tm.id, 'ops'), [], `round ${round}: users hold ops, which the catalog no longer has`);
      }
    });

    it('a whole-catalog PUT needs both lists: absent or null is refused, [] is none (review #13)', async () => {
      const { req } = await team();
      const doc = { roles: [{ value: 'admin', displayName: 'Admin' }], entitlementTypes: [{ name: 'License', endpoint: '/Licenses', entitlements: [{ value: 'e5', displayName: 'E5' }] }] };
      assert.equal((await req('PUT', '/v2/admin/Catalog', doc)).statusCode, 200);
      const shown = json(await req('GET', '/v2/admin/Catalog'));
      for (const [body, member] of [[{}, 'roles'], [{ schemas: 'ietf' }, 'roles'], [{ roles: null, entitlementTypes: [] }, 'roles'], [{ roles: doc.roles }, 'entitlementTypes'], [{ roles: doc.roles, entitlementTypes: null }, 'entitlementTypes']] as const) {
        const res = await req('PUT', '/v2/admin/Catalog?force=true', body);
        assert.equal(res.statusCode, 400, res.body);
        assert.match(String(json(res).detail), new RegExp(`^${member}: is required`));
      }
      assert.deepEqual(json(await req('GET', '/v2/admin/Catalog')), shown, 'nothing removed');
      const emptied = await req('PUT', '/v2/admin/Catalog', { roles: [], entitlementTypes: [] });
      assert.equal(emptied.statusCode, 200, emptied.body);
      assert.equal(json(emptied).removed, 3);
    });

    it('an identical whole-catalog PUT writes nothing, not even the team\'s row (review #14)', async () => {
      const { team: tm, req } = await team();
      const doc = { roles: [{ value: 'admin', displayName: 'Admin' }], entitlementTypes: [{ name: 'License', endpoint: '/Licenses', entitlements: [{ value: 'e5', displayName: 'E5' }] }] };
      assert.equal((await req('PUT', '/v2/admin/Catalog', doc)).statusCode, 200);
      // The team row's versions: its xmin on PostgreSQL (a new one per UPDATE, even one changing
      // nothing); on SQLite an update counter kept by a trigger on this connection.
      const db = t.storage.db;
      if (engine.name === 'sqlite') {
        await sql`create temp table if not exists team_updates (team_id text primary key, n integer not null)`.execute(db);
        await sql`create temp trigger if not exists count_team_updates after update on teams begin insert into team_updates (team_id, n) values (new.id, 1) on conflict (team_id) do update set n = n + 1; end`.execute(db);
      }
      const rowVersion = async (): Promise<string> =>
        engine.name === 'postgres'
          ? String((await sql<{ v: string }>`select xmin::text as v from teams where id = ${tm.id}`.execute(db)).rows[0]!.v)
          : String((await sql<{ n: number }>`select coalesce((select n from team_updates where team_id = ${tm.id}), 0) as n`.execute(db)).rows[0]!.n);
      const before = await rowVersion();
      const res = await req('PUT', '/v2/admin/Catalog', doc);
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual([json(res).added, json(res).updated, json(res).removed], [0, 0, 0]);
      assert.equal(await rowVersion(), before, 'the team row was not written');
      // A real change still writes it (the test can see a write).
      assert.equal((await req('PUT', '/v2/admin/Catalog', { ...doc, roles: [] })).statusCode, 200);
      assert.notEqual(await rowVersion(), before);
    });

    it('each mapping event has a version of its own; a forced removal records one unmapping per mapping it deletes (review #12, #15)', async () => {
      const { team: tm, token, req, user } = await team();
      assert.equal((await req('PUT', '/v2/admin/Catalog', { roles: [{ value: 'admin', displayName: 'Admin' }, { value: 'viewer', displayName: 'Viewer' }], entitlementTypes: [] })).statusCode, 200);
      const groups: string[] = [];
      for (const name of ['Admins', 'Ops']) {
        const res = await req('POST', '/v2/scim/Groups', { displayName: name });
        assert.equal(res.statusCode, 201, res.body);
        groups.push(String(json(res).id));
      }
      const events = async (after: number) => json(await t.request('GET', `/v2/events?after=${after}&limit=1000`, undefined, { authorization: `Bearer ${token}` }));
      const start = Number((await events(0)).next);
      for (const g of groups) assert.equal((await req('POST', '/v2/admin/Catalog/mappings', { group: g, kind: 'role', value: 'admin' })).statusCode, 201);
      assert.equal((await req('DELETE', `/v2/admin/Catalog/mappings?group=${groups[1]}&kind=role&value=admin`)).statusCode, 204);
      assert.equal((await req('POST', '/v2/admin/Catalog/mappings', { group: groups[1], kind: 'role', value: 'admin' })).statusCode, 201);
      await user('holder', { roles: [{ value: 'admin' }] });
      const forced = await req('PUT', '/v2/admin/Catalog?force=true', { roles: [{ value: 'viewer', displayName: 'Viewer' }], entitlementTypes: [] });
      assert.equal(forced.statusCode, 200, forced.body);

      const all = (await events(start)).events as Json[];
      const roleEvents = all.filter((e) => e.resourceType === 'Role' && e.id === 'admin');
      assert.deepEqual(
        roleEvents.map((e) => [e.change, e.members]),
        [
          ['patch', { added: [groups[0]] }],
          ['patch', { added: [groups[1]] }],
          ['patch', { removed: [groups[1]] }],
          ['patch', { added: [groups[1]] }],
          // The forced removal's unmappings, in the mappings' key order (group id).
          ...[...groups].sort().map((g) => ['patch', { removed: [g] }]),
          ['delete', undefined],
        ],
      );
      const versions = roleEvents.map((e) => Number(/W\/"(\d+)"/.exec(String(e.version))![1]));
      for (let i = 1; i < versions.length; i++) assert.ok(versions[i]! > versions[i - 1]!, `versions rise: ${versions.join(', ')}`);
      // The forced removal's unmappings are audited as unmappings, saying why.
      const audited = await t.storage.db.selectFrom('audit_events').select(['action', 'detail']).where('team_id', '=', tm.id).where('action', '=', 'access_unmapped').orderBy('at').execute();
      assert.deepEqual(audited.map((a) => JSON.parse(a.detail).entryRemoved ?? false), [false, true, true]);
      assert.deepEqual(json(await req('GET', '/v2/admin/Catalog/mappings')).mappings, []);
    });
  });
}
