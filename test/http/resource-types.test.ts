/**
 * Issue 9 item 6: `/ResourceTypes` names its types `User` and `Group`, as RFC 7643 section 6's
 * examples do (and as every client that reads `meta.resourceType` expects). This pins it so that
 * nobody "fixes" the names to the endpoint spelling (`Users`) or to the schema URN: `name`, `id`
 * and each resource's `meta.resourceType` agree, under both prefixes.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';

const RESOURCE_TYPE = 'urn:ietf:params:scim:schemas:core:2.0:ResourceType';

describe('ResourceTypes names (RFC 7643 6)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  it('RFC 7643 6: name and id are "User" and "Group" (not "Users", not a URN), matching meta.resourceType', async () => {
    for (const prefix of ['/v2/scim', '/scim']) {
      const list = json(await t.request('GET', `${prefix}/ResourceTypes`));
      const types = list.Resources as Record<string, unknown>[];
      assert.deepEqual(types.map((r) => [r.id, r.name, r.endpoint, r.schema]), [
        ['User', 'User', '/Users', 'urn:ietf:params:scim:schemas:core:2.0:User'],
        ['Group', 'Group', '/Groups', 'urn:ietf:params:scim:schemas:core:2.0:Group'],
      ]);
      for (const type of types) {
        assert.deepEqual(type.schemas, [RESOURCE_TYPE]);
        assert.equal((type.meta as Record<string, unknown>).resourceType, 'ResourceType');
        const one = json(await t.request('GET', `${prefix}/ResourceTypes/${String(type.name)}`));
        assert.equal(one.name, type.name);
      }
    }
    const user = json(await t.request('POST', '/v2/scim/Users', { userName: 'rt@example.com' }));
    const group = json(await t.request('POST', '/v2/scim/Groups', { displayName: 'RT' }));
    assert.equal((user.meta as Record<string, unknown>).resourceType, 'User');
    assert.equal((group.meta as Record<string, unknown>).resourceType, 'Group');
  });
});
