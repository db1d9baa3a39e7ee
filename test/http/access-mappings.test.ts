/**
 * Groups mapped to roles and entitlements through the admin API (issue 31 items 4 and 5), on
 * every engine: `POST /v2/admin/Catalog/mappings` maps a group of the team to an entry of its
 * catalog (201, then 200 and nothing written when it is mapped already), `GET` lists them with the
 * group's name and the entry's, `DELETE` unmaps (204, 404 after). An unknown group is 404, a value
 * outside the catalog 400 naming the catalog, another team's group refused; the team's budget
 * access.mappings caps them. Each change is one audit row and ONE feed event (a patch of the Role
 * or Entitlement naming the group), whatever the group's size; deleting a group unmaps it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { updateTeamLimits } from '../../src/admin.ts';
import { addMembers } from '../../src/storage/repos/groups.ts';
import { insertUser } from '../../src/storage/repos/users.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { seedCatalog } from '../support/catalog.ts';
import { engines } from '../support/engines.ts';
import { adminDeps } from '../support/oauth.ts';
import { userRow } from '../support/rows.ts';

type Json = Record<string, unknown>;

const MAPPINGS = '/v2/admin/Catalog/mappings';
const BIG = 300;

for (const engine of engines) {
  describe(`group mappings through the admin API on ${engine.name}`, () => {
    let t: TestApp;
    let admins: string;
    let sales: string;

    const map = (body: unknown, token = t.token) =>
      t.app.inject({ method: 'POST', url: MAPPINGS, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    const unmap = (query: string, token = t.token) => t.app.inject({ method: 'DELETE', url: `${MAPPINGS}?${query}`, headers: { authorization: `Bearer ${token}` } });
    const list = async (query = '', token = t.token) => {
      const res = await t.app.inject({ method: 'GET', url: `${MAPPINGS}${query}`, headers: { authorization: `Bearer ${token}` } });
      assert.equal(res.statusCode, 200, res.body);
      return json(res).mappings as Json[];
    };
    const group = async (displayName: string, token = t.token) => {
      const res = await t.app.inject({ method: 'POST', url: '/v2/scim/Groups', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' }, payload: JSON.stringify({ displayName }) });
      assert.equal(res.statusCode, 201, res.body);
      return String(json(res).id);
    };
    /** The feed's last seq, and the events after a seq (GET /v2/events). */
    const feedEnd = async () => Number(json(await t.request('GET', '/v2/events?after=0&limit=1000')).next);
    const eventsAfter = async (seq: number) => json(await t.request('GET', `/v2/events?after=${seq}&limit=1000`)).events as Json[];
    const auditActions = async (action: string) =>
      t.storage.db.selectFrom('audit_events').selectAll().where('team_id', '=', t.team.id).where('action', '=', action).orderBy('at').execute();
    const schemaVersion = async () => Number((await t.storage.db.selectFrom('teams').select('schema_version').where('id', '=', t.team.id).executeTakeFirstOrThrow()).schema_version);

    before(async () => {
      t = await createTestApp({ engine });
      await seedCatalog(t.storage, t.team.id, {
        roles: [{ value: 'admin', displayName: 'Administrator' }, { value: 'viewer', displayName: 'Viewer' }],
        types: [{ name: 'License', endpoint: '/Licenses', entitlements: [{ value: 'e5', displayName: 'Office E5', description: 'The big one' }, { value: 'e3', displayName: 'Office E3' }] }],
      });
      admins = await group('Admins');
      sales = await group('Sales');
    });
    after(() => t.close());

    it('maps a group to a role: 201 with the mapping, one audit row, one patch event on the Role naming the group, at a new version (the schema version bumped)', async () => {
      const version = await schemaVersion();
      const seq = await feedEnd();
      const res = await map({ group: admins, kind: 'role', value: 'admin' });
      assert.equal(res.statusCode, 201, res.body);
      const body = json(res);
      assert.deepEqual({ ...body, created: undefined }, { group: { id: admins, displayName: 'Admins' }, kind: 'role', value: 'admin', display: 'Administrator', created: undefined });
      assert.match(String(body.created), /^\d{4}-\d\d-\d\dT/);

      const events = await eventsAfter(seq);
      assert.equal(events.length, 1);
      assert.deepEqual(
        { change: events[0]!.change, resourceType: events[0]!.resourceType, id: events[0]!.id, changed: events[0]!.changed, members: events[0]!.members, version: events[0]!.version },
        { change: 'patch', resourceType: 'Role', id: 'admin', changed: ['groups'], members: { added: [admins] }, version: `W/"${version + 1}"` },
      );
      assert.equal(await schemaVersion(), version + 1);
      const audited = await auditActions('access_mapped');
      assert.equal(audited.length, 1);
      assert.equal(audited[0]!.resource_type, 'Role');
      assert.equal(audited[0]!.resource_id, 'admin');
      assert.deepEqual(JSON.parse(audited[0]!.detail), { group: admins, kind: 'role', value: 'admin' });
    });

    it('mapping again is idempotent: 200 with the same mapping, no audit row, no event', async () => {
      const seq = await feedEnd();
      const [first] = await list(`?group=${admins}`);
      const res = await map({ group: admins, kind: 'role', value: 'admin' });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(json(res), first);
      assert.deepEqual(await eventsAfter(seq), []);
      assert.equal((await auditActions('access_mapped')).length, 1);
    });

    it('maps an entitlement named by its type (name or endpoint, any case) or by its value alone; a wrong type is 400', async () => {
      const seq = await feedEnd();
      const res = await map({ group: sales, kind: 'entitlement', type: 'License', value: 'e5' });
      assert.equal(res.statusCode, 201, res.body);
      assert.deepEqual({ ...json(res), created: undefined }, { group: { id: sales, displayName: 'Sales' }, kind: 'entitlement', type: 'License', value: 'e5', display: 'Office E5', created: undefined });
      assert.equal((await map({ group: sales, kind: 'entitlement', type: 'licenses', value: 'e5' })).statusCode, 200);
      assert.equal((await map({ group: sales, kind: 'entitlement', value: 'e5' })).statusCode, 200);
      const events = await eventsAfter(seq);
      assert.deepEqual(events.map((e) => [e.change, e.resourceType, e.id, e.members]), [['patch', 'Entitlement', 'e5', { added: [sales] }]]);

      const wrongType = await map({ group: sales, kind: 'entitlement', type: 'Permission', value: 'e5' });
      assert.equal(wrongType.statusCode, 400);
      assert.equal(json(wrongType).scimType, 'invalidValue');
      assert.match(String(json(wrongType).detail), /"Permission" is not an entitlement type in the team's catalog \(License\)/);
    });

    it('lists the mappings with the group and the entry, or one group\'s; an unknown group is 404', async () => {
      const all = await list();
      assert.deepEqual(
        all.map((m) => [m.group, m.kind, m.type, m.value, m.display]),
        [
          [{ id: admins, displayName: 'Admins' }, 'role', undefined, 'admin', 'Administrator'],
          [{ id: sales, displayName: 'Sales' }, 'entitlement', 'License', 'e5', 'Office E5'],
        ],
      );
      assert.deepEqual((await list(`?group=${sales}`)).map((m) => m.value), ['e5']);
      const unknown = await t.app.inject({ method: 'GET', url: `${MAPPINGS}?group=NOSUCHGROUP`, headers: { authorization: `Bearer ${t.token}` } });
      assert.equal(unknown.statusCode, 404);
    });

    it('refuses an unknown group (404), a value outside the catalog (400 naming the catalog), a role with a type and a malformed body (400)', async () => {
      const seq = await feedEnd();
      const noGroup = await map({ group: 'NOSUCHGROUP', kind: 'role', value: 'admin' });
      assert.equal(noGroup.statusCode, 404, noGroup.body);
      const noRole = await map({ group: admins, kind: 'role', value: 'superuser' });
      assert.equal(noRole.statusCode, 400);
      assert.equal(json(noRole).scimType, 'invalidValue');
      assert.match(String(json(noRole).detail), /"superuser" is not a role in the team's catalog \(admin, viewer\)/);
      const noEntitlement = await map({ group: admins, kind: 'entitlement', type: 'License', value: 'e7' });
      assert.equal(noEntitlement.statusCode, 400);
      assert.match(String(json(noEntitlement).detail), /"e7" is not an entitlement of type License in the team's catalog \(e3, e5\)/);
      // Values compare exactly.
      assert.equal((await map({ group: admins, kind: 'role', value: 'Admin' })).statusCode, 400);
      const typedRole = await map({ group: admins, kind: 'role', type: 'License', value: 'admin' });
      assert.equal(typedRole.statusCode, 400);
      assert.match(String(json(typedRole).detail), /a role has no type/);
      for (const body of [{ group: admins, value: 'admin' }, { group: admins, kind: 'group', value: 'admin' }, { group: admins, kind: 'role', value: '' }, [1]]) {
        const res = await map(body);
        assert.equal(res.statusCode, 400, JSON.stringify(body));
        assert.match(String(json(res).scimType), /^invalid(Value|Syntax)$/);
      }
      assert.deepEqual(await eventsAfter(seq), []);
    });

    it('isolation: another team\'s group cannot be mapped, and each team lists only its own mappings', async () => {
      const other = await t.addTeam('globex');
      await seedCatalog(t.storage, other.team.id, { roles: [{ value: 'admin' }] });
      const theirs = await group('Admins', other.token);
      const res = await map({ group: theirs, kind: 'role', value: 'admin' });
      assert.equal(res.statusCode, 404, res.body);
      assert.deepEqual(await list('', other.token), []);
      assert.equal((await unmap(`group=${admins}&kind=role&value=admin`, other.token)).statusCode, 404);
      // Their own group maps to their own catalog; ours does not see it.
      assert.equal((await map({ group: theirs, kind: 'role', value: 'admin' }, other.token)).statusCode, 201);
      assert.deepEqual((await list()).map((m) => (m.group as Json).id), [admins, sales]);
    });

    it('unmaps: 204 with one audit row and one event removing the group; again 404', async () => {
      const seq = await feedEnd();
      const res = await unmap(`group=${sales}&kind=entitlement&type=License&value=e5`);
      assert.equal(res.statusCode, 204, res.body);
      const events = await eventsAfter(seq);
      assert.deepEqual(events.map((e) => [e.change, e.resourceType, e.id, e.changed, e.members]), [['patch', 'Entitlement', 'e5', ['groups'], { removed: [sales] }]]);
      const audited = await auditActions('access_unmapped');
      assert.equal(audited.length, 1);
      assert.deepEqual(JSON.parse(audited[0]!.detail), { group: sales, kind: 'entitlement', type: 'License', value: 'e5' });
      assert.equal((await unmap(`group=${sales}&kind=entitlement&type=License&value=e5`)).statusCode, 404);
      assert.equal((await unmap(`group=${admins}&kind=role`)).statusCode, 400);
      assert.deepEqual((await list()).map((m) => m.value), ['admin']);
    });

    it('the budget access.mappings caps the team\'s mappings (400 naming it); an existing mapping still answers 200', async () => {
      const held = (await list()).length;
      await updateTeamLimits(adminDeps(t), 'acme', [{ name: 'access.mappings', value: held }]);
      try {
        const refused = await map({ group: sales, kind: 'role', value: 'viewer' });
        assert.equal(refused.statusCode, 400, refused.body);
        assert.equal(json(refused).scimType, 'invalidValue');
        assert.match(String(json(refused).detail), /budget "access\.mappings" is 1/);
        assert.equal((await map({ group: admins, kind: 'role', value: 'admin' })).statusCode, 200);
      } finally {
        await updateTeamLimits(adminDeps(t), 'acme', [{ name: 'access.mappings', value: null }]);
      }
      assert.equal((await map({ group: sales, kind: 'role', value: 'viewer' })).statusCode, 201);
    });

    it(`item 5: mapping and unmapping a group of ${BIG} members is one event each, not one per member`, async () => {
      const big = await group('Everyone');
      const users = Array.from({ length: BIG }, (_, i) => userRow(t.team.id, `member${i}@big.example`));
      await t.storage.db.transaction().execute(async (trx) => {
        for (const u of users) await insertUser(trx, u);
        await addMembers(trx, t.team.id, big, users.map((u) => u.id), '2026-01-01T00:00:00.000Z');
      });
      const seq = await feedEnd();
      assert.equal((await map({ group: big, kind: 'role', value: 'viewer' })).statusCode, 201);
      assert.equal((await unmap(`group=${big}&kind=role&value=viewer`)).statusCode, 204);
      const events = await eventsAfter(seq);
      assert.deepEqual(events.map((e) => [e.resourceType, e.id, e.members]), [['Role', 'viewer', { added: [big] }], ['Role', 'viewer', { removed: [big] }]]);
    });

    it('deleting a group removes its mappings in the same transaction, each with its unmapping event and audit row', async () => {
      const doomed = await group('Contractors');
      assert.equal((await map({ group: doomed, kind: 'role', value: 'viewer' })).statusCode, 201);
      assert.equal((await map({ group: doomed, kind: 'entitlement', type: 'License', value: 'e3' })).statusCode, 201);
      const unmappedBefore = (await auditActions('access_unmapped')).length;
      const seq = await feedEnd();
      assert.equal((await t.request('DELETE', `/v2/scim/Groups/${doomed}`)).statusCode, 204);
      const events = await eventsAfter(seq);
      assert.deepEqual(
        events.map((e) => [e.change, e.resourceType, e.id, e.members ?? null]).sort((a, b) => String(a[1]).localeCompare(String(b[1]))),
        [['patch', 'Entitlement', 'e3', { removed: [doomed] }], ['delete', 'Group', doomed, null], ['patch', 'Role', 'viewer', { removed: [doomed] }]],
      );
      const audited = (await auditActions('access_unmapped')).slice(unmappedBefore);
      assert.deepEqual(audited.map((a) => JSON.parse(a.detail).groupDeleted), [true, true]);
      assert.deepEqual((await list()).filter((m) => (m.group as Json).id === doomed), []);
      const left = await t.storage.db.selectFrom('access_mappings').select('value').where('group_id', '=', doomed).execute();
      assert.deepEqual(left, []);
    });
  });
}
