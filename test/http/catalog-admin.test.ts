/**
 * Issue 31 item 1 (DESIGN.md section 12): a team's catalog through the admin API, on every
 * engine. GET shows it (roles by value, types by name, `description` omitted when none); a
 * whole-catalog PUT adds, changes and removes, and the same document again changes nothing (no
 * audit row, no event, no schema version bump, counts 0); removing an entry users hold or groups
 * map is refused with the counts unless force=true, which takes it from them in the same
 * transaction; the team's budget `catalog.entries` refuses growth past it; bad documents are 400
 * invalidValue naming the JSON location; one team's token neither reads nor changes another's.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { updateTeamLimits } from '../../src/admin.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { adminDeps } from '../support/oauth.ts';

type Json = Record<string, unknown>;

const DOC = {
  schemas: 'okta',
  roles: [
    { value: 'viewer', displayName: 'Viewer' },
    { value: 'admin', displayName: 'Administrator', description: 'Everything' },
  ],
  entitlementTypes: [{ name: 'License', endpoint: '/Licenses', description: 'Seats', entitlements: [{ value: 'e5', displayName: 'Office E5' }] }],
};

/** DOC as GET shows it: sorted, defaults filled in. */
const SHOWN = {
  schemas: 'okta',
  roles: [
    { value: 'admin', displayName: 'Administrator', description: 'Everything' },
    { value: 'viewer', displayName: 'Viewer' },
  ],
  entitlementTypes: [{ name: 'License', endpoint: '/Licenses', description: 'Seats', required: false, multiValued: true, entitlements: [{ value: 'e5', displayName: 'Office E5' }] }],
};

for (const engine of engines) {
  describe(`admin API: the team's catalog (${engine.name})`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp({ engine });
    });
    after(() => t.close());

    const put = (body: unknown, query = '', token = t.token) =>
      t.app.inject({ method: 'PUT', url: `/v2/admin/Catalog${query}`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: typeof body === 'string' ? body : JSON.stringify(body) });
    const get = async (token = t.token) => {
      const r = await t.app.inject({ method: 'GET', url: '/v2/admin/Catalog', headers: { authorization: `Bearer ${token}` } });
      assert.equal(r.statusCode, 200, r.body);
      return r.json() as Json;
    };
    const count = async (table: 'audit_events' | 'events') => Number((await t.storage.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('team_id', '=', t.team.id).executeTakeFirstOrThrow()).n);
    const version = async () => Number((await t.storage.db.selectFrom('teams').select('schema_version').where('id', '=', t.team.id).executeTakeFirstOrThrow()).schema_version);
    const badRequest = (r: { statusCode: number; body: string }, detail: RegExp) => {
      assert.equal(r.statusCode, 400, r.body);
      const body = JSON.parse(r.body) as Json;
      assert.equal(body.scimType, 'invalidValue');
      assert.match(String(body.detail), detail);
    };

    it('GET shows an empty catalog; PUT adds it whole and answers the catalog with counts; GET shows the same', async () => {
      assert.deepEqual(await get(), { schemas: 'okta', roles: [], entitlementTypes: [] });
      const r = await put(DOC);
      assert.equal(r.statusCode, 200, r.body);
      assert.deepEqual(r.json(), { catalog: SHOWN, added: 4, updated: 0, removed: 0 });
      assert.deepEqual(await get(), SHOWN);
      const actions = (await t.storage.db.selectFrom('audit_events').select('action').where('team_id', '=', t.team.id).execute()).map((a) => a.action).sort();
      assert.deepEqual(actions, ['catalog_replaced', 'entitlement_added', 'entitlement_type_added', 'role_added', 'role_added']);
    });

    it('the same document again changes nothing: no audit row, no event, no version bump, counts 0 (also as GET shows it)', async () => {
      const [audits, events, v] = [await count('audit_events'), await count('events'), await version()];
      for (const body of [DOC, SHOWN, { roles: DOC.roles, entitlementTypes: DOC.entitlementTypes }]) {
        const r = await put(body);
        assert.equal(r.statusCode, 200, r.body);
        assert.deepEqual(r.json(), { catalog: SHOWN, added: 0, updated: 0, removed: 0 });
      }
      assert.deepEqual([await count('audit_events'), await count('events'), await version()], [audits, events, v]);
    });

    it('a changed displayName is one update (a put event), a changed setting one schema version', async () => {
      const v = await version();
      const r = await put({ ...DOC, schemas: 'ietf', roles: [{ value: 'viewer', displayName: 'Reader' }, DOC.roles[1]] });
      assert.equal(r.statusCode, 200, r.body);
      assert.deepEqual({ ...(r.json() as Json), catalog: undefined }, { catalog: undefined, added: 0, updated: 1, removed: 0 });
      assert.equal((r.json() as { catalog: Json }).catalog.schemas, 'ietf');
      assert.equal(await version(), v + 1);
      const last = await t.storage.db.selectFrom('events').selectAll().where('team_id', '=', t.team.id).orderBy('at', 'desc').executeTakeFirstOrThrow();
      assert.deepEqual([last.type, last.resource_type, last.resource_id, JSON.parse(last.changed), Number(last.version)], ['put', 'Role', 'viewer', ['displayName'], v + 1]);
      assert.equal((await put(DOC)).statusCode, 200);
    });

    it('removing an entry users hold or groups map is refused with the counts; force=true takes it from them in the same change', async () => {
      const user = json(await t.request('POST', '/v2/scim/Users', { userName: 'bjensen', roles: [{ value: 'admin' }, { value: 'viewer' }] }));
      const group = json(await t.request('POST', '/v2/scim/Groups', { displayName: 'Admins' }));
      const mapped = await t.request('POST', '/v2/admin/Catalog/mappings', { group: String(group.id), kind: 'role', value: 'admin' });
      assert.equal(mapped.statusCode, 201, mapped.body);
      const without = { ...DOC, roles: [DOC.roles[0]] };
      const [audits, events] = [await count('audit_events'), await count('events')];
      const refused = await put(without);
      assert.equal(refused.statusCode, 409, refused.body);
      assert.equal((refused.json() as Json).detail, 'role "admin" is held by 1 user and mapped from 1 group; send force=true to remove it from them');
      assert.deepEqual(await get(), SHOWN, 'nothing changed');
      assert.deepEqual([await count('audit_events'), await count('events')], [audits, events]);

      const forced = await put(without, '?force=true');
      assert.equal(forced.statusCode, 200, forced.body);
      assert.deepEqual({ ...(forced.json() as Json), catalog: undefined }, { catalog: undefined, added: 0, updated: 0, removed: 1 });
      const after = json(await t.request('GET', `/v2/scim/Users/${String(user.id)}`));
      assert.deepEqual(after.roles, [{ value: 'viewer' }], 'the user lost the removed role only');
      assert.equal((await t.storage.db.selectFrom('user_grants').selectAll().where('user_id', '=', String(user.id)).where('value', '=', 'admin').execute()).length, 0);
      assert.equal((await t.storage.db.selectFrom('access_mappings').selectAll().where('team_id', '=', t.team.id).execute()).length, 0);
      const tail = (await t.storage.db.selectFrom('events').selectAll().where('team_id', '=', t.team.id).orderBy('at').execute()).slice(-3);
      assert.deepEqual(tail.map((e) => [e.type, e.resource_type, e.resource_id, JSON.parse(e.changed)]), [
        ['patch', 'User', String(user.id), ['roles']],
        ['patch', 'Role', 'admin', ['groups']],
        ['delete', 'Role', 'admin', []],
      ]);
      assert.equal((await put(DOC)).statusCode, 200);
      // The user gives up its last role, so the later tests' PUTs remove roles nobody holds.
      assert.equal((await t.request('PATCH', `/v2/scim/Users/${String(user.id)}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'remove', path: 'roles' }] })).statusCode, 200);
    });

    it('the budget catalog.entries refuses a catalog grown past it, naming the budget; shrinking is allowed', async () => {
      await updateTeamLimits(adminDeps(t), 'acme', [{ name: 'catalog.entries', value: 3 }]);
      badRequest(await put({ ...DOC, roles: [...DOC.roles, { value: 'auditor', displayName: 'Auditor' }] }), /^Team acme would have 5 roles, entitlement types and entitlements in its catalog; its budget "catalog\.entries" is 3$/);
      const shrunk = await put({ roles: [DOC.roles[0]], entitlementTypes: [] });
      assert.equal(shrunk.statusCode, 200, shrunk.body);
      assert.deepEqual({ ...(shrunk.json() as Json), catalog: undefined }, { catalog: undefined, added: 0, updated: 0, removed: 3 });
      await updateTeamLimits(adminDeps(t), 'acme', [{ name: 'catalog.entries', value: null }]);
      assert.equal((await put(DOC)).statusCode, 200);
    });

    it('a bad document is a 400 invalidValue naming the JSON location, and changes nothing', async () => {
      badRequest(await put([]), /^body: must be a catalog object/);
      badRequest(await put({ roles: [{ value: ' admin', displayName: 'A' }] }), /^roles\[0\]\.value: must not begin or end with whitespace/);
      badRequest(await put({ roles: [{ value: 'a\u0007b', displayName: 'A' }] }), /^roles\[0\]\.value: must not contain control characters/);
      badRequest(await put({ roles: [{ value: 'x'.repeat(257), displayName: 'A' }] }), /^roles\[0\]\.value: must be a string of 1 to 256 characters/);
      badRequest(await put({ roles: [{ value: 'a' }] }), /^roles\[0\]\.displayName: is required/);
      badRequest(await put({ roles: [{ value: 'a', displayName: 'A', description: 'd'.repeat(1001) }] }), /^roles\[0\]\.description: must be a string of at most 1,000 characters/);
      badRequest(await put({ roles: [{ value: 'a', displayName: 'A' }, { value: 'a', displayName: 'B' }] }), /^roles\[1\]\.value: "a" is already roles\[0\]/);
      badRequest(await put({ roles: [{ value: 'a', display: 'A' }] }), /^roles\[0\]\.display: is not a member/);
      badRequest(await put({ schemas: 'scim' }), /^schemas: must be one of okta, ietf/);
      badRequest(await put({ entitlementTypes: [{ name: 'Group', endpoint: '/Teams' }] }), /^entitlementTypes\[0\]\.name: "Group" is a SCIM resource type Rollcall serves/);
      badRequest(await put({ entitlementTypes: [{ name: 'Seat', endpoint: '/users' }] }), /^entitlementTypes\[0\]\.endpoint: "\/users" is a SCIM endpoint Rollcall serves/);
      badRequest(await put({ entitlementTypes: [{ name: 'Seat', endpoint: 'Seats' }] }), /^entitlementTypes\[0\]\.endpoint: must be "\/" then a letter/);
      badRequest(await put({ entitlementTypes: [{ name: 'Seat', endpoint: '/Seats', required: 'yes' }] }), /^entitlementTypes\[0\]\.required: must be true or false/);
      badRequest(
        await put({ entitlementTypes: [{ name: 'Seat', endpoint: '/Seats' }, { name: 'seat', endpoint: '/Chairs' }] }),
        /^entitlementTypes\[1\]\.name: "seat" is already entitlementTypes\[0\] \(names compare case-insensitively\)/,
      );
      badRequest(
        await put({ entitlementTypes: [{ name: 'Seat', endpoint: '/Seats', entitlements: [{ value: 'e', displayName: 'E' }] }, { name: 'Chair', endpoint: '/Chairs', entitlements: [{ value: 'e', displayName: 'E' }] }] }),
        /^entitlementTypes\[1\]\.entitlements\[0\]\.value: "e" is already entitlementTypes\[0\]\.entitlements\[0\]/,
      );
      const notJson = await put('{"roles": [');
      assert.equal(notJson.statusCode, 400);
      assert.equal((notJson.json() as Json).scimType, 'invalidSyntax');
      badRequest(await put(DOC, '?force=yes'), /force/);
      assert.deepEqual(await get(), SHOWN);
    });

    it('a read-only token reads but cannot PUT; another team\'s token reads and changes only its own catalog', async () => {
      const reader = await t.tokenFor(t.team.id, ['read']);
      assert.deepEqual(await get(reader), SHOWN);
      assert.equal((await put(DOC, '', reader)).statusCode, 403);
      const other = await t.addTeam('globex');
      assert.deepEqual(await get(other.token), { schemas: 'okta', roles: [], entitlementTypes: [] });
      const theirs = await put({ roles: [{ value: 'admin', displayName: 'Their admin' }], entitlementTypes: [] }, '', other.token);
      assert.equal(theirs.statusCode, 200, theirs.body);
      assert.deepEqual(await get(), SHOWN, 'team A\'s catalog is untouched');
      assert.deepEqual((await get(other.token)).roles, [{ value: 'admin', displayName: 'Their admin' }]);
      const events = await t.storage.db.selectFrom('events').select('team_id').where('resource_type', '=', 'Role').where('team_id', '=', other.team.id).execute();
      assert.equal(events.length, 1, 'the other team\'s change is on its own feed');
    });

    it('a whole catalog larger than the admin API\'s usual 256 KiB body is taken (up to 4 MiB), and replaced back', async () => {
      const big = { roles: Array.from({ length: 400 }, (_, i) => ({ value: `role-${String(i).padStart(3, '0')}`, displayName: `Role ${i}`, description: 'd'.repeat(1000) })), entitlementTypes: [] };
      assert.ok(JSON.stringify(big).length > 256 * 1024);
      const r = await put(big);
      assert.equal(r.statusCode, 200, r.body.slice(0, 200));
      assert.equal((r.json() as Json).added, 400);
      assert.equal((await put(DOC)).statusCode, 200);
    });

    it('an entitlement moved to another type is one update of its type; a held one moves only with force', async () => {
      const seat = { name: 'Seat', endpoint: '/Seats', entitlements: [] as { value: string; displayName: string }[] };
      assert.equal((await put({ ...DOC, entitlementTypes: [...DOC.entitlementTypes, seat] })).statusCode, 200);
      const moved = { ...DOC, entitlementTypes: [{ ...DOC.entitlementTypes[0]!, entitlements: [] }, { ...seat, entitlements: [{ value: 'e5', displayName: 'Office E5' }] }] };
      const r = await put(moved);
      assert.equal(r.statusCode, 200, r.body);
      assert.deepEqual({ ...(r.json() as Json), catalog: undefined }, { catalog: undefined, added: 0, updated: 1, removed: 0 });
      const last = await t.storage.db.selectFrom('events').selectAll().where('team_id', '=', t.team.id).orderBy('at', 'desc').executeTakeFirstOrThrow();
      assert.deepEqual([last.type, last.resource_type, last.resource_id, JSON.parse(last.changed), JSON.parse(String(last.data)).type], ['put', 'Entitlement', 'e5', ['type'], 'Seat']);
      const holder = await t.request('POST', '/v2/scim/Users', { userName: 'seated', entitlements: [{ value: 'e5', type: 'Seat' }] });
      assert.equal(holder.statusCode, 201, holder.body);
      const back = { ...DOC, entitlementTypes: [...DOC.entitlementTypes, seat] };
      const refused = await put(back);
      assert.equal(refused.statusCode, 409, refused.body);
      assert.equal((refused.json() as Json).detail, 'entitlement "e5" is held by 1 user; send force=true to remove it from them');
      assert.equal((await put(back, '?force=true')).statusCode, 200);
      assert.equal((await t.storage.db.selectFrom('user_grants').selectAll().where('team_id', '=', t.team.id).where('value', '=', 'e5').execute()).length, 0);
      assert.equal((await put(DOC)).statusCode, 200);
    });

    it('two types trading endpoints in one PUT is a clear 409, not a 500, and changes nothing', async () => {
      const two = { roles: [], entitlementTypes: [{ name: 'License', endpoint: '/Licenses' }, { name: 'Seat', endpoint: '/Seats' }] };
      assert.equal((await put(two)).statusCode, 200);
      const swapped = await put({ roles: [], entitlementTypes: [{ name: 'License', endpoint: '/Seats' }, { name: 'Seat', endpoint: '/Licenses' }] });
      assert.equal(swapped.statusCode, 409, swapped.body);
      assert.match(String((swapped.json() as Json).detail), /cannot trade endpoints in one change/);
      assert.deepEqual((await get()).entitlementTypes, two.entitlementTypes.map((t) => ({ ...t, required: false, multiValued: true, entitlements: [] })));
    });
  });
}
