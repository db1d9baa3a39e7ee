/**
 * Catalog values as path parameters at their longest (issue 31): a value is up to 256 characters
 * (UTF-16 units), so percent-encoded up to 2,304 (3 bytes a unit, 3 characters a byte). The
 * router takes parameters that long (src/app.ts MAX_PATH_PARAM): a 256-character ASCII value and
 * a 256-character non-ASCII one (3 UTF-8 bytes each) are found at `/v2/scim/Roles/{id}`,
 * `/v2/scim/{TypeEndpoint}/{id}` and among holders at `/v2/access/roles/{value}/users` /
 * `/v2/access/entitlements/{type}/{value}/users`; a longer parameter is still a clean 404.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_PATH_PARAM } from '../../src/app.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { seedCatalog } from '../support/catalog.ts';
import { engines } from '../support/engines.ts';

const ASCII = `r${'x'.repeat(254)}z`;
const WIDE = '役'.repeat(256);
const ENTITLEMENT = `é${'e'.repeat(254)}ü`;

for (const engine of engines) {
  describe(`256-character catalog values in paths (${engine.name})`, () => {
    let t: TestApp;
    let holder: string;
    before(async () => {
      t = await createTestApp({ engine });
      await seedCatalog(t.storage, t.team.id, {
        roles: [{ value: ASCII, displayName: 'Long ASCII' }, { value: WIDE, displayName: 'Long wide' }],
        types: [{ name: 'License', endpoint: '/Licenses', entitlements: [{ value: ENTITLEMENT, displayName: 'Long entitlement' }] }],
      });
      const res = await t.request('POST', '/v2/scim/Users', { userName: 'bjensen', roles: [{ value: ASCII }, { value: WIDE }], entitlements: [{ value: ENTITLEMENT, type: 'License' }] });
      assert.equal(res.statusCode, 201, res.body);
      holder = String(json(res).id);
    });
    after(() => t.close());

    it('the values are as long as the contract allows, and the widest fills the router\'s bound exactly', () => {
      assert.deepEqual([ASCII.length, WIDE.length, ENTITLEMENT.length], [256, 256, 256]);
      assert.equal(encodeURIComponent(WIDE).length, MAX_PATH_PARAM);
    });

    it('GET /v2/scim/Roles/{id} and /v2/scim/Licenses/{id} find them, percent-encoded', async () => {
      for (const value of [ASCII, WIDE]) {
        const res = await t.request('GET', `/v2/scim/Roles/${encodeURIComponent(value)}`);
        assert.equal(res.statusCode, 200, res.body.slice(0, 300));
        assert.equal(json(res).id, value);
      }
      const res = await t.request('GET', `/v2/scim/Licenses/${encodeURIComponent(ENTITLEMENT)}`);
      assert.equal(res.statusCode, 200, res.body.slice(0, 300));
      assert.equal(json(res).id, ENTITLEMENT);
    });

    it('GET /v2/access/roles/{value}/users and /v2/access/entitlements/{type}/{value}/users answer their holder', async () => {
      for (const value of [ASCII, WIDE]) {
        const res = await t.request('GET', `/v2/access/roles/${encodeURIComponent(value)}/users`);
        assert.equal(res.statusCode, 200, res.body.slice(0, 300));
        assert.deepEqual((json(res).users as { id: string }[]).map((u) => u.id), [holder]);
      }
      const res = await t.request('GET', `/v2/access/entitlements/License/${encodeURIComponent(ENTITLEMENT)}/users`);
      assert.equal(res.statusCode, 200, res.body.slice(0, 300));
      assert.deepEqual((json(res).users as { id: string }[]).map((u) => u.id), [holder]);
    });

    it('a parameter longer than the bound, or an unknown long id, is a 404 in the SCIM error shape', async () => {
      for (const url of [`/v2/scim/Roles/${'x'.repeat(MAX_PATH_PARAM + 1)}`, `/v2/scim/Roles/${'y'.repeat(256)}`, `/v2/scim/Users/${'x'.repeat(MAX_PATH_PARAM)}`]) {
        const res = await t.request('GET', url);
        assert.equal(res.statusCode, 404, `${url.slice(0, 40)}: ${res.body.slice(0, 300)}`);
        assert.deepEqual(json(res).schemas, ['urn:ietf:params:scim:api:messages:2.0:Error']);
      }
    });
  });
}
