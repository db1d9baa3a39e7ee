/**
 * Discovery (RFC 7644 section 4, RFC 7643 sections 5-7): ServiceProviderConfig (and the
 * contract's /ServiceProviderConfigs), Schemas, ResourceTypes, each telling the truth.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

describe('discovery', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('ServiceProviderConfig and the contract spelling /ServiceProviderConfigs say what is supported', async () => {
    for (const url of ['/v2/scim/ServiceProviderConfig', '/scim/ServiceProviderConfigs']) {
      const body = json(await t.request('GET', url));
      assert.deepEqual(body.schemas, ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig']);
      assert.deepEqual(body.patch, { supported: true });
      assert.deepEqual(body.bulk, { supported: true, maxOperations: 1000, maxPayloadSize: 4194304 }, 'RFC 7644 3.7.4: the Bulk limits are advertised');
      assert.equal((body.filter as Record<string, unknown>).supported, true);
      assert.equal((body.filter as Record<string, unknown>).maxResults, 1000);
      assert.deepEqual(body.sort, { supported: true });
      assert.deepEqual(body.etag, { supported: true });
      assert.deepEqual(body.changePassword, { supported: true }, 'PUT and PATCH of password are supported');
      assert.equal((body.authenticationSchemes as Record<string, unknown>[])[0]?.type, 'oauthbearertoken');
    }
  });

  it('RFC 9865 section 4: pagination says cursor and index are supported, index by default, with the page sizes query.ts applies and the cursor lifetime cursor.ts enforces', async () => {
    const body = json(await t.request('GET', '/v2/scim/ServiceProviderConfig'));
    assert.deepEqual(body.pagination, { cursor: true, index: true, defaultPaginationMethod: 'index', defaultPageSize: 100, maxPageSize: 1000, cursorTimeout: 3600 });
  });

  it('Entra: /Schemas is a ListResponse listing User, EnterpriseUser and Group, without nulls', async () => {
    const res = await t.request('GET', '/v2/scim/Schemas');
    const body = json(res);
    assert.deepEqual(body.schemas, ['urn:ietf:params:scim:api:messages:2.0:ListResponse']);
    const ids = (body.Resources as Record<string, unknown>[]).map((r) => r.id);
    assert.deepEqual(ids, [USER, ENTERPRISE, GROUP]);
    assert.equal(res.body.includes('null'), false);
  });

  it('/Schemas/{urn} returns one schema whose attributes drive validation (password returned never)', async () => {
    const user = json(await t.request('GET', `/v2/scim/Schemas/${USER}`));
    assert.equal(user.id, USER);
    const attrs = user.attributes as Record<string, unknown>[];
    const userName = attrs.find((a) => a.name === 'userName');
    assert.equal(userName?.required, true);
    assert.equal(userName?.uniqueness, 'server');
    assert.equal(attrs.find((a) => a.name === 'password')?.returned, 'never');
    assert.equal(attrs.find((a) => a.name === 'groups')?.mutability, 'readOnly');
    const group = json(await t.request('GET', `/scim/Schemas/${GROUP}`));
    assert.ok((group.attributes as Record<string, unknown>[]).some((a) => a.name === 'members'));
    assert.equal((await t.request('GET', '/v2/scim/Schemas/urn:nope')).statusCode, 404);
  });

  it('/ResourceTypes lists User (with the enterprise extension) and Group', async () => {
    const body = json(await t.request('GET', '/v2/scim/ResourceTypes'));
    const rts = body.Resources as Record<string, unknown>[];
    assert.deepEqual(rts.map((r) => r.name), ['User', 'Group']);
    assert.deepEqual(rts[0]?.schemaExtensions, [{ schema: ENTERPRISE, required: false }]);
    const one = json(await t.request('GET', '/v2/scim/ResourceTypes/Group'));
    assert.equal(one.endpoint, '/Groups');
    assert.equal((await t.request('GET', '/v2/scim/ResourceTypes/Widget')).statusCode, 404);
  });
});
