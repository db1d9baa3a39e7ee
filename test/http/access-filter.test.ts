/**
 * The `access` parameter of user lists (issue 31 item 4, CONTRACT-31 "access filter for lists"):
 * `GET /v2/scim/Users?access=role:admin` and `?access=entitlement:License:e5` list the users
 * holding the entry by effective access (direct or through a mapped group; active users only),
 * ANDed with `filter`, under index and cursor paging, on /v2/scim and /scim; bad syntax is 400.
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

for (const engine of engines) {
describe(`The access parameter of user lists on ${engine.name}`, () => {
  let t: TestApp;
  const ids: Record<string, string> = {};
  beforeEach(async () => {
    t = await createTestApp({ engine });
    await seedCatalog(t.storage, t.team.id, {
      roles: [{ value: 'admin' }, { value: 'viewer' }],
      types: [{ name: 'License', endpoint: '/Licenses', entitlements: [{ value: 'e5' }] }],
    });
    for (const name of ['ann', 'bob', 'cat', 'dan', 'eve', 'fay']) {
      const res = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: name, title: name < 'd' ? 'early' : 'late' });
      assert.equal(res.statusCode, 201, res.body);
      ids[name] = String(json(res).id);
    }
    // ann, bob: direct admin; cat, dan: admin through the Admins group; eve: deactivated member.
    await grantDirect(t.request, ids.ann!, 'role', 'admin');
    await grantDirect(t.request, ids.bob!, 'role', 'admin', 'Entra');
    const res = await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'Admins', members: [ids.cat, ids.dan, ids.eve, ids.bob].map((value) => ({ value })) });
    assert.equal(res.statusCode, 201, res.body);
    await mapTo(t, t.team, String(json(res).id), 'role', 'admin');
    await mapTo(t, t.team, String(json(res).id), 'entitlement', 'e5', 'license');
    await grantDirect(t.request, ids.fay!, 'entitlement', 'e5', 'License');
    await grantDirect(t.request, ids.eve!, 'role', 'admin');
    const off = await t.request('PATCH', `/v2/scim/Users/${ids.eve}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'active', value: false }] });
    assert.ok(off.statusCode < 300, off.body);
  });
  afterEach(() => t.close());

  const names = async (query: string, prefix = '/v2/scim'): Promise<{ names: string[]; total: number; next?: string }> => {
    const res = await t.request('GET', `${prefix}/Users?${query}`);
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    return {
      names: (body.Resources as { userName: string }[]).map((u) => u.userName).sort(),
      total: Number(body.totalResults),
      ...(typeof body.nextCursor === 'string' ? { next: body.nextCursor } : {}),
    };
  };

  it('access=role:admin lists direct and group holders, active only; on /scim too', async () => {
    assert.deepEqual(await names('access=role:admin'), { names: ['ann', 'bob', 'cat', 'dan'], total: 4 });
    assert.deepEqual((await names('access=role:admin', '/scim')).names, ['ann', 'bob', 'cat', 'dan']);
    assert.deepEqual(await names('access=role:viewer'), { names: [], total: 0 });
  });

  it('access=entitlement:TYPE:VALUE: by the type\'s name or endpoint; another type lists nobody', async () => {
    assert.deepEqual((await names('access=entitlement:License:e5')).names, ['bob', 'cat', 'dan', 'fay']);
    assert.deepEqual((await names('access=entitlement:licenses:e5')).names, ['bob', 'cat', 'dan', 'fay']);
    assert.deepEqual((await names('access=entitlement:Permission:e5')).names, []);
  });

  it('is ANDed with filter', async () => {
    assert.deepEqual(await names(`access=role:admin&filter=${encodeURIComponent('title eq "early"')}`), { names: ['ann', 'bob', 'cat'], total: 3 });
    assert.deepEqual((await names(`access=role:admin&filter=${encodeURIComponent('not (userName eq "ann")')}`)).names, ['bob', 'cat', 'dan']);
  });

  it('pages by index and by cursor; a cursor is bound to the access parameter', async () => {
    const first = await names('access=role:admin&count=3&startIndex=1');
    const second = await names('access=role:admin&count=3&startIndex=4');
    assert.equal(first.total, 4);
    assert.deepEqual([...first.names, ...second.names].sort(), ['ann', 'bob', 'cat', 'dan']);
    const c1 = await names('access=role:admin&count=3&cursor=');
    assert.equal(c1.names.length, 3);
    assert.ok(c1.next);
    const c2 = await names(`access=role:admin&count=3&cursor=${c1.next}`);
    assert.deepEqual([...c1.names, ...c2.names].sort(), ['ann', 'bob', 'cat', 'dan']);
    const other = await t.request('GET', `/v2/scim/Users?access=role:viewer&count=3&cursor=${c1.next}`);
    assert.equal(other.statusCode, 400, other.body);
    assert.equal(json(other).scimType, 'invalidCursor');
  });

  it('bad syntax is 400 invalidValue', async () => {
    for (const bad of ['admin', 'role:', 'entitlement:License', 'group:admins', 'entitlement::e5']) {
      const res = await t.request('GET', `/v2/scim/Users?access=${encodeURIComponent(bad)}`);
      assert.equal(res.statusCode, 400, `${bad}: ${res.body}`);
      assert.equal(json(res).scimType, 'invalidValue');
      assert.match(String(json(res).detail), /role:VALUE or entitlement:TYPE:VALUE/);
    }
  });
});
}
