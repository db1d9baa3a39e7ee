/**
 * Issue 31 item 2: the catalog's SCIM endpoints (`/Roles`, `/Entitlements`, a type's own
 * endpoint), on both engines: filters on `id`, `displayName` and `type` with every operator the
 * contract names, paging bounds as /Users has them, attributes / excludedAttributes, sortBy,
 * values that need percent-encoding, the `read` scope, and writes refused with 405 `Allow: GET`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { seedCatalog } from '../support/catalog.ts';
import { engines } from '../support/engines.ts';

type Json = Record<string, unknown>;
const resourcesOf = (list: Json): Json[] => list.Resources as Json[];

for (const engine of engines) {
  describe(`catalog endpoints (${engine.name})`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp({ engine });
      await seedCatalog(t.storage, t.team.id, {
        roles: [
          { value: 'admin', displayName: 'Administrator', description: 'Everything' },
          { value: 'Admin2', displayName: 'Second administrator' },
          { value: 'viewer', displayName: 'Viewer' },
          { value: 'a b/c', displayName: 'Needs encoding' },
        ],
        types: [
          { name: 'License', endpoint: '/Licenses', entitlements: [{ value: 'e5', displayName: 'Office E5' }, { value: 'e3', displayName: 'Office E3' }, { value: 'visio', displayName: 'Visio Plan 2' }] },
          { name: 'Permission set', endpoint: '/PermissionSets', entitlements: [{ value: 'ps-read', displayName: 'Read only', description: 'Reads' }] },
        ],
      });
    });
    after(() => t.close());

    const ids = async (url: string): Promise<unknown[]> => {
      const res = await t.request('GET', url);
      assert.equal(res.statusCode, 200, `${url}: ${res.payload.slice(0, 300)}`);
      return resourcesOf(json(res)).map((r) => r.id);
    };
    const filtered = (path: string, filter: string) => ids(`${path}?filter=${encodeURIComponent(filter)}`);

    it('filter on id (exact, case-sensitive), displayName (case-insensitive) and type, with eq ne co sw ew pr and or not', async () => {
      assert.deepEqual(await filtered('/v2/scim/Roles', 'id eq "admin"'), ['admin']);
      assert.deepEqual(await filtered('/v2/scim/Roles', 'id eq "ADMIN"'), [], 'values compare exactly');
      assert.deepEqual(await filtered('/v2/scim/Roles', 'id ne "admin"'), ['Admin2', 'a b/c', 'viewer']);
      assert.deepEqual(await filtered('/v2/scim/Roles', 'displayName co "ADMIN"'), ['Admin2', 'admin']);
      assert.deepEqual(await filtered('/v2/scim/Roles', 'displayName sw "admin"'), ['admin']);
      assert.deepEqual(await filtered('/v2/scim/Roles', 'displayName ew "er"'), ['viewer']);
      assert.deepEqual(await filtered('/v2/scim/Roles', 'description pr'), ['admin']);
      assert.deepEqual(await filtered('/v2/scim/Roles', 'not (description pr) and displayName co "admin"'), ['Admin2']);
      assert.deepEqual(await filtered('/v2/scim/Entitlements', 'type eq "license" and (displayName co "office" or id eq "ps-read")'), ['e3', 'e5']);
      assert.deepEqual(await filtered('/v2/scim/Entitlements', 'type eq "Permission set" or id sw "vis"'), ['ps-read', 'visio']);
      assert.deepEqual(await filtered('/v2/scim/Entitlements', 'type ne "License"'), ['ps-read']);
      assert.deepEqual(await filtered('/scim/Licenses', 'displayName sw "office" and not (id eq "e3")'), ['e5']);
      assert.deepEqual(await filtered('/v2/scim/Licenses', 'type eq "Permission set"'), []);
      const counted = json(await t.request('GET', `/v2/scim/Entitlements?count=1&filter=${encodeURIComponent('type eq "License"')}`));
      assert.equal(counted.totalResults, 3, 'totalResults counts every match, not the page');
    });

    it('a filter the schema cannot answer is 400 invalidFilter (unknown attribute, type on roles, bad syntax)', async () => {
      for (const [path, filter] of [['/v2/scim/Roles', 'nickName eq "x"'], ['/v2/scim/Roles', 'type eq "License"'], ['/v2/scim/Entitlements', 'displayName eq'], ['/v2/scim/Licenses', 'displayName eq true']]) {
        const res = await t.request('GET', `${path}?filter=${encodeURIComponent(filter!)}`);
        assert.equal(res.statusCode, 400, `${filter}: ${res.payload}`);
        assert.equal(json(res).scimType, 'invalidFilter');
      }
    });

    it('paging bounds as /Users: default and maximum count, count 0, negative count, startIndex below 1, past the end; a cursor is refused', async () => {
      const page = async (query: string) => json(await t.request('GET', `/v2/scim/Roles?${query}`));
      const all = await page('');
      assert.deepEqual([all.totalResults, all.startIndex, all.itemsPerPage], [4, 1, 4]);
      assert.deepEqual(resourcesOf(all).map((r) => r.id), ['Admin2', 'a b/c', 'admin', 'viewer'], 'ordered by value (code points)');
      const none = await page('count=0');
      assert.deepEqual([none.totalResults, none.itemsPerPage, resourcesOf(none)], [4, 0, []]);
      assert.equal((await page('count=-3')).itemsPerPage, 0);
      const fromZero = await page('startIndex=0&count=2');
      assert.deepEqual([fromZero.startIndex, resourcesOf(fromZero).map((r) => r.id)], [1, ['Admin2', 'a b/c']]);
      assert.deepEqual(resourcesOf(await page('startIndex=-7&count=1')).map((r) => r.id), ['Admin2']);
      assert.deepEqual(resourcesOf(await page('startIndex=3&count=5')).map((r) => r.id), ['admin', 'viewer']);
      const past = await page('startIndex=9');
      assert.deepEqual([past.totalResults, past.startIndex, past.itemsPerPage, resourcesOf(past)], [4, 9, 0, []]);
      for (const query of ['count=many', 'startIndex=1.5', 'cursor=']) {
        const res = await t.request('GET', `/v2/scim/Roles?${query}`);
        assert.equal(res.statusCode, 400, query);
        assert.equal(json(res).scimType, 'invalidValue');
      }
      assert.match(String(json(await t.request('GET', '/v2/scim/Roles?cursor=')).detail), /startIndex/);
    });

    it('count is capped at 1,000 (the advertised maxPageSize) and defaults to 100', async () => {
      const big = await createTestApp({ engine });
      try {
        await seedCatalog(big.storage, big.team.id, { roles: Array.from({ length: 1005 }, (_, i) => ({ value: `r${String(i).padStart(4, '0')}` })) });
        const capped = json(await big.request('GET', '/v2/scim/Roles?count=5000'));
        assert.deepEqual([capped.totalResults, capped.itemsPerPage], [1005, 1000]);
        const rest = json(await big.request('GET', '/v2/scim/Roles?count=5000&startIndex=1001'));
        assert.deepEqual(resourcesOf(rest).map((r) => r.id), ['r1000', 'r1001', 'r1002', 'r1003', 'r1004']);
        assert.equal(json(await big.request('GET', '/v2/scim/Roles')).itemsPerPage, 100);
      } finally {
        await big.close();
      }
    });

    it('attributes / excludedAttributes shape each resource; id and schemas always stay; sortBy orders', async () => {
      const only = json(await t.request('GET', '/v2/scim/Roles/admin?attributes=displayName'));
      assert.deepEqual(only, { schemas: ['urn:okta:scim:schemas:core:1.0:Role'], id: 'admin', displayName: 'Administrator' });
      const without = json(await t.request('GET', '/v2/scim/Entitlements?excludedAttributes=meta,displayName&filter=id%20eq%20%22ps-read%22'));
      assert.deepEqual(resourcesOf(without), [{ schemas: ['urn:okta:scim:schemas:core:1.0:Entitlement'], id: 'ps-read', type: 'Permission set', description: 'Reads' }]);
      const bad = await t.request('GET', '/v2/scim/Roles?attributes=userName');
      assert.equal(bad.statusCode, 400);
      assert.equal(json(bad).scimType, 'invalidValue');
      assert.deepEqual(await ids('/v2/scim/Roles?sortBy=displayName'), ['admin', 'a b/c', 'Admin2', 'viewer']);
      assert.deepEqual(await ids('/v2/scim/Roles?sortBy=displayName&sortOrder=descending'), ['viewer', 'Admin2', 'a b/c', 'admin']);
      assert.deepEqual(await ids('/v2/scim/Roles?sortBy=description&sortOrder=descending&count=2'), ['admin', 'Admin2'], 'absent values last in both directions');
    });

    it('a value that needs percent-encoding: its location is encoded and the encoded URL finds it; an unknown id is 404', async () => {
      const [role] = resourcesOf(json(await t.request('GET', `/v2/scim/Roles?filter=${encodeURIComponent('id eq "a b/c"')}`)));
      assert.equal((role?.meta as Json).location, 'https://rollcall.test/v2/scim/Roles/a%20b%2Fc');
      assert.equal(json(await t.request('GET', '/v2/scim/Roles/a%20b%2Fc')).displayName, 'Needs encoding');
      const missing = await t.request('GET', '/v2/scim/Roles/nobody');
      assert.equal(missing.statusCode, 404);
      assert.equal(json(missing).detail, 'Role nobody not found');
    });

    it('reads need the read scope; writes answer 405 Allow: GET with the ways to manage the catalog (a write token), 403 without the write scope', async () => {
      const reader = await t.tokenFor(t.team.id, ['read']);
      const as = (token: string, method: string, url: string, body?: unknown) =>
        t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/scim+json' } : {}) }, ...(body !== undefined ? { payload: JSON.stringify(body) } : {}) });
      assert.equal((await as(reader, 'GET', '/v2/scim/Licenses/e5')).statusCode, 200);
      assert.equal((await as(reader, 'GET', '/scim/Entitlements')).statusCode, 200);
      const writer = await t.tokenFor(t.team.id, ['write']);
      assert.equal((await as(writer, 'GET', '/v2/scim/Roles')).statusCode, 403);

      const writes: [string, string, unknown?][] = [
        ['POST', '/v2/scim/Roles', { schemas: ['urn:okta:scim:schemas:core:1.0:Role'], id: 'new', displayName: 'New' }],
        ['PUT', '/v2/scim/Roles/admin', { displayName: 'Renamed' }],
        ['PATCH', '/scim/Licenses/e5', { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'displayName', value: 'x' }] }],
        ['DELETE', '/v2/scim/Entitlements/e5'],
        ['DELETE', '/v2/scim/Roles'],
        ['POST', '/v2/scim/PermissionSets'],
      ];
      for (const [method, url, body] of writes) {
        const res = await t.request(method, url, body);
        assert.equal(res.statusCode, 405, `${method} ${url}: ${res.payload}`);
        assert.equal(res.headers.allow, 'GET');
        assert.match(String(json(res).detail), /read-only.*rollcall role.*PUT \/v2\/admin\/Catalog.*console/);
        assert.equal((await as(reader, method, url, body)).statusCode, 403, 'a read token may not even try');
      }
      // Nothing changed, and an unknown endpoint still answers 404.
      assert.equal(json(await t.request('GET', '/v2/scim/Roles/admin')).displayName, 'Administrator');
      assert.deepEqual(await ids('/v2/scim/Licenses'), ['e3', 'e5', 'visio']);
      const unknown = await t.request('POST', '/v2/scim/Widgets', {});
      assert.equal(unknown.statusCode, 404);
      assert.equal(json(unknown).detail, 'No SCIM endpoint POST /v2/scim/Widgets');
      assert.equal((await t.request('GET', '/v2/scim/licenses')).statusCode, 404, 'endpoints compare exactly, as /Users does');
    });

    it('the routes of /Users, /Groups and discovery still win over the catalog routes', async () => {
      assert.equal((await t.request('GET', '/v2/scim/Users')).statusCode, 200);
      assert.equal((await t.request('GET', '/v2/scim/Groups?count=1')).statusCode, 200);
      assert.equal((await t.request('GET', '/v2/scim/Users/nope')).statusCode, 404);
      assert.equal(json(await t.request('GET', '/v2/scim/Users/nope')).detail, 'User nope not found');
      assert.equal((await t.request('GET', '/v2/scim/ResourceTypes/License')).statusCode, 200);
      const patchUsers = await t.request('PATCH', '/v2/scim/Users', {});
      assert.equal(patchUsers.statusCode, 404);
      assert.equal(json(patchUsers).detail, 'No SCIM endpoint PATCH /v2/scim/Users');
    });
  });
}
