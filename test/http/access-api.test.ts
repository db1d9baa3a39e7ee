/**
 * The effective-access API (issue 31 item 4, CONTRACT-31 "Effective access"): a user's roles
 * and entitlements with their sources (direct, each mapped group), display from the catalog or
 * the user's element, deactivated users holding nothing, who holds an entry paged by user id
 * with a cursor bound to the entry, cross-team isolation, the read scope.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { grantDirect, mapTo } from '../support/access.ts';
import { seedCatalog } from '../support/catalog.ts';
import { engines } from '../support/engines.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';

interface Source { type: string; value?: string; display?: string }
interface HoldersBody { users: { id: string; userName: string; sources: Source[] }[]; nextCursor?: string }

const CATALOG = {
  roles: [{ value: 'admin', displayName: 'Administrator' }, { value: 'viewer', displayName: 'Viewer' }],
  types: [{ name: 'License', endpoint: '/Licenses', entitlements: [{ value: 'e5', displayName: 'Office E5' }] }],
};

for (const engine of engines) {
describe(`Effective access API on ${engine.name}`, () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({ engine });
    await seedCatalog(t.storage, t.team.id, CATALOG);
  });
  afterEach(() => t.close());

  const user = async (userName: string, extra: Record<string, unknown> = {}, request = t.request): Promise<string> => {
    const res = await request('POST', '/v2/scim/Users', { schemas: [USER], userName, ...extra });
    assert.equal(res.statusCode, 201, res.body);
    return String(json(res).id);
  };
  const group = async (displayName: string, members: string[], request = t.request): Promise<string> => {
    const res = await request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName, members: members.map((value) => ({ value })) });
    assert.equal(res.statusCode, 201, res.body);
    return String(json(res).id);
  };
  const holders = async (path: string, request = t.request): Promise<HoldersBody> => {
    const res = await request('GET', path);
    assert.equal(res.statusCode, 200, res.body);
    return json(res) as unknown as HoldersBody;
  };
  const scimError = (res: { statusCode: number; body: string }, status: number, scimType?: string) => {
    assert.equal(res.statusCode, status, res.body);
    const body = JSON.parse(res.body) as Record<string, unknown>;
    assert.deepEqual(body.schemas, ['urn:ietf:params:scim:api:messages:2.0:Error']);
    assert.equal(body.status, String(status));
    if (scimType !== undefined) assert.equal(body.scimType, scimType);
  };

  it('GET /v2/access/users/{id}: direct and group-mapped roles and entitlements, each with its sources and the catalog display', async () => {
    // The user is written before its team declares a catalog, so it may hold a role the catalog
    // will not have ("legacy": shown with the user's own display).
    const legacy = await t.addTeam('legacy');
    const as = (method: string, url: string, body?: unknown) => t.request(method, url, body, { authorization: `Bearer ${legacy.token}` });
    const id = await user('bjensen', { roles: [{ value: 'admin' }, { value: 'legacy', display: 'Legacy app' }], entitlements: [{ value: 'e5', type: 'License' }] }, as);
    await seedCatalog(t.storage, legacy.team.id, CATALOG);
    const admins = await group('Admins', [id], as);
    const readers = await group('Readers', [id], as);
    await mapTo(t, legacy.team, admins, 'role', 'admin');
    await mapTo(t, legacy.team, readers, 'role', 'viewer');
    await mapTo(t, legacy.team, readers, 'entitlement', 'e5', 'license');

    const res = await as('GET', `/v2/access/users/${id}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(json(res), {
      id,
      userName: 'bjensen',
      active: true,
      roles: [
        { value: 'admin', display: 'Administrator', sources: [{ type: 'direct' }, { type: 'group', value: admins, display: 'Admins' }] },
        { value: 'legacy', display: 'Legacy app', sources: [{ type: 'direct' }] },
        { value: 'viewer', display: 'Viewer', sources: [{ type: 'group', value: readers, display: 'Readers' }] },
      ],
      entitlements: [{ type: 'License', value: 'e5', display: 'Office E5', sources: [{ type: 'direct' }, { type: 'group', value: readers, display: 'Readers' }] }],
    });
    // A user holding nothing: empty lists.
    const plain = await user('nobody', {}, as);
    assert.deepEqual(json(await as('GET', `/v2/access/users/${plain}`)), { id: plain, userName: 'nobody', active: true, roles: [], entitlements: [] });
  });

  it('an unknown user is 404 in the SCIM error shape', async () => {
    scimError(await t.request('GET', '/v2/access/users/NOSUCHUSER0000000000'), 404);
  });

  it('a deactivated user holds nothing: 404 where the team hides deactivated users, not among holders', async () => {
    const id = await user('gone');
    await grantDirect(t.request, id, 'role', 'admin');
    const admins = await group('Admins', [id]);
    await mapTo(t, t.team, admins, 'role', 'admin');
    assert.equal((await holders('/v2/access/roles/admin/users')).users.length, 1);
    assert.equal((await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'active', value: false }] })).statusCode < 300, true);
    scimError(await t.request('GET', `/v2/access/users/${id}`), 404);
    assert.deepEqual((await holders('/v2/access/roles/admin/users')).users, []);
  });

  it('in a team that shows deactivated users, a deactivated user answers with active false and empty lists', async () => {
    const visible = await t.addTeam('visible', { deactivatedUsers: 'visible' });
    await seedCatalog(t.storage, visible.team.id, CATALOG);
    const as = (method: string, url: string, body?: unknown) => t.request(method, url, body, { authorization: `Bearer ${visible.token}` });
    const id = await user('paused', { active: false }, as);
    await grantDirect(as, id, 'role', 'admin');
    const res = await as('GET', `/v2/access/users/${id}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(json(res), { id, userName: 'paused', active: false, roles: [], entitlements: [] });
    assert.deepEqual((await holders('/v2/access/roles/admin/users', as)).users, []);
  });

  it('who holds a role: pages of 100 through a mapped group of 250 members plus direct holders, by user id, each once, with every source', async () => {
    const members: string[] = [];
    for (let i = 0; i < 250; i++) members.push(await user(`member${i}`));
    const direct: string[] = [];
    for (let i = 0; i < 3; i++) direct.push(await user(`direct${i}`));
    const big = await group('Everyone', members);
    const small = await group('Few', members.slice(0, 5));
    await mapTo(t, t.team, big, 'role', 'admin');
    await mapTo(t, t.team, small, 'role', 'admin');
    for (const id of [...direct, members[7]!]) await grantDirect(t.request, id, 'role', 'admin');
    // A direct grant sent with a type (Entra's roles carry one) is the same role.
    await grantDirect(t.request, members[9]!, 'role', 'admin', 'WindowsAzureActiveDirectoryRole');

    const seen: HoldersBody['users'] = [];
    let cursor: string | undefined;
    const sizes: number[] = [];
    do {
      const page = await holders(`/v2/access/roles/admin/users?count=100${cursor !== undefined ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      sizes.push(page.users.length);
      seen.push(...page.users);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    assert.deepEqual(sizes, [100, 100, 53]);
    const ids = seen.map((u) => u.id);
    assert.deepEqual(ids, [...members, ...direct].sort());
    const of = (id: string) => seen.find((u) => u.id === id)!;
    assert.deepEqual(of(members[0]!).sources, [big, small].sort().map((g) => ({ type: 'group', value: g, display: g === big ? 'Everyone' : 'Few' })));
    assert.deepEqual(of(members[7]!).sources, [{ type: 'direct' }, { type: 'group', value: big, display: 'Everyone' }]);
    assert.deepEqual(of(members[9]!).sources, [{ type: 'direct' }, { type: 'group', value: big, display: 'Everyone' }]);
    assert.deepEqual(of(direct[0]!).sources, [{ type: 'direct' }]);
    assert.equal(of(members[100]!).userName, 'member100');
  });

  it('a cursor belongs to its entry: another role\'s cursor, or an altered one, is 400 invalidCursor; a bad count is 400 saying the rule, one above 1000 is capped', async () => {
    for (let i = 0; i < 3; i++) await grantDirect(t.request, await user(`u${i}`), 'role', 'admin');
    const first = await holders('/v2/access/roles/admin/users?count=2');
    assert.equal(first.users.length, 2);
    assert.ok(first.nextCursor);
    scimError(await t.request('GET', `/v2/access/roles/viewer/users?cursor=${first.nextCursor}`), 400, 'invalidCursor');
    scimError(await t.request('GET', `/v2/access/entitlements/License/admin/users?cursor=${first.nextCursor}`), 400, 'invalidCursor');
    scimError(await t.request('GET', '/v2/access/roles/admin/users?cursor=not-a-cursor'), 400, 'invalidCursor');
    // A bad count is refused with the rule; a count above 1000 (however long) is capped, not refused.
    for (const count of ['0', '000', 'ten', '-1', '1.5', '2e3']) {
      const res = await t.request('GET', `/v2/access/roles/admin/users?count=${count}`);
      scimError(res, 400, 'invalidValue');
      assert.equal(json(res).detail, 'count must be an integer of at least 1; above 1000 counts as 1000', count);
    }
    for (const count of ['1001', '5000', '9'.repeat(40)]) assert.equal((await holders(`/v2/access/roles/admin/users?count=${count}`)).users.length, 3, count);
    const rest = await holders(`/v2/access/roles/admin/users?count=2&cursor=${first.nextCursor}`);
    assert.equal(rest.users.length, 1);
    assert.equal(rest.nextCursor, undefined);
  });

  it('who holds an entitlement: by the type\'s name or endpoint, case-insensitively; another type finds nobody; an entry outside the catalog answers its direct holders', async () => {
    const a = await user('alice');
    const b = await user('bob');
    await grantDirect(t.request, a, 'entitlement', 'e5', 'License');
    await grantDirect(t.request, b, 'entitlement', 'e5');
    const ids = [a, b].sort();
    for (const type of ['License', 'licenses', 'LICENSE']) {
      assert.deepEqual((await holders(`/v2/access/entitlements/${type}/e5/users`)).users.map((u) => u.id), ids, type);
    }
    assert.deepEqual((await holders('/v2/access/entitlements/Permission/e5/users')).users, []);
    // Roles outside the catalog, held since before a team declared its catalog: users written
    // first, the catalog after (a catalog team's writes keep held values).
    const early = await t.addTeam('early');
    const asEarly = (method: string, url: string, body?: unknown) => t.request(method, url, body, { authorization: `Bearer ${early.token}` });
    const ghost = await user('alice', { roles: [{ value: 'ghost' }] }, asEarly);
    const lead = await user('bob', { roles: [{ value: 'Team lead/ops é' }] }, asEarly);
    await seedCatalog(t.storage, early.team.id, CATALOG);
    assert.deepEqual((await holders('/v2/access/roles/ghost/users', asEarly)).users, [{ id: ghost, userName: 'alice', sources: [{ type: 'direct' }] }]);
    assert.deepEqual((await holders('/v2/access/roles/nobody-holds-this/users', asEarly)).users, []);
    // Values are compared exactly and may hold spaces, slashes and non-ASCII text (percent-encoded in the path).
    assert.deepEqual((await holders(`/v2/access/roles/${encodeURIComponent('Team lead/ops é')}/users`, asEarly)).users.map((u) => u.id), [lead]);
    assert.deepEqual((await holders(`/v2/access/roles/${encodeURIComponent('team lead/ops é')}/users`, asEarly)).users, []);
  });

  it('cross-team isolation: team B\'s token neither reads team A\'s users nor sees them among holders', async () => {
    const id = await user('bjensen');
    await grantDirect(t.request, id, 'role', 'admin');
    const g = await group('Admins', [id]);
    await mapTo(t, t.team, g, 'role', 'admin');
    const other = await t.addTeam('other');
    await seedCatalog(t.storage, other.team.id, CATALOG);
    const asB = (method: string, url: string) => t.request(method, url, undefined, { authorization: `Bearer ${other.token}` });
    scimError(await asB('GET', `/v2/access/users/${id}`), 404);
    assert.deepEqual((await holders('/v2/access/roles/admin/users', asB)).users, []);
    assert.equal((await holders('/v2/access/roles/admin/users')).users.length, 1);
  });

  it('authentication: no token 401, a token without the read scope 403', async () => {
    const id = await user('bjensen');
    const res = await t.app.inject({ method: 'GET', url: `/v2/access/users/${id}` });
    scimError(res, 401);
    const writeOnly = await t.tokenFor(t.team.id, ['write']);
    scimError(await t.request('GET', `/v2/access/users/${id}`, undefined, { authorization: `Bearer ${writeOnly}` }), 403);
    scimError(await t.request('GET', '/v2/access/roles/admin/users', undefined, { authorization: `Bearer ${writeOnly}` }), 403);
    scimError(await t.request('GET', '/v2/access/nothing-here'), 404);
  });
});
}
