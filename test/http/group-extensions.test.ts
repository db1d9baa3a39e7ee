/**
 * Issue 11 on Groups, on every engine: a required Group extension (RFC 7643 section 6
 * `schemaExtensions.required`) is enforced on create, its values are returned, patched by URN
 * path, filtered and sorted, and a `uniqueness: server` value is freed when its group is deleted.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

type Json = Record<string, unknown>;

const URN = 'urn:acme:params:scim:schemas:extension:Org:2.0:Group';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';

for (const engine of engines) {
  describe(`Group schema extensions on ${engine.name}`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp({ engine });
      const schema = { id: URN, attributes: [{ name: 'code', type: 'string', uniqueness: 'server', required: true }, { name: 'size', type: 'integer' }] };
      const res = await t.request('POST', '/v2/admin/Schemas', { resourceType: 'Group', required: true, schema });
      assert.equal(res.statusCode, 201, res.body);
    });
    after(() => t.close());

    it('RFC 7643 6: a required extension and its required attribute are enforced; values returned, patched, filtered, sorted; unique values freed by DELETE', async () => {
      const rt = json(await t.request('GET', '/v2/scim/ResourceTypes/Group'));
      assert.deepEqual(rt.schemaExtensions, [{ schema: URN, required: true }]);
      const missing = await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP], displayName: 'no-ext' });
      assert.equal(missing.statusCode, 400, missing.body);
      assert.match(String(json(missing).detail), /extension .* is required/);
      const noCode = await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP, URN], displayName: 'no-code', [URN]: { size: 1 } });
      assert.equal(noCode.statusCode, 400);
      assert.match(String(json(noCode).detail), /:code is required/);

      const a = json(await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP, URN], displayName: 'A', [URN]: { code: 'ENG', size: 5 } }));
      const b = json(await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP, URN], displayName: 'B', [URN]: { code: 'OPS', size: 2 } }));
      assert.deepEqual(a[URN], { code: 'ENG', size: 5 });
      const patched = await t.request('PATCH', `/v2/scim/Groups/${String(b.id)}?attributes=${URN}:size`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: `${URN}:size`, value: 9 }] });
      assert.equal(patched.statusCode, 200, patched.body);
      assert.deepEqual(json(patched)[URN], { size: 9 });
      const filtered = json(await t.request('GET', `/v2/scim/Groups?filter=${encodeURIComponent(`${URN}:size gt 4`)}&sortBy=${URN}:size&attributes=displayName`));
      assert.deepEqual((filtered.Resources as Json[]).map((g) => g.displayName), ['A', 'B']);
      const dup = await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP, URN], displayName: 'C', [URN]: { code: 'eng' } });
      assert.equal(dup.statusCode, 409);
      assert.equal((await t.request('DELETE', `/v2/scim/Groups/${String(a.id)}`)).statusCode, 204);
      assert.equal((await t.request('POST', '/v2/scim/Groups', { schemas: [GROUP, URN], displayName: 'C', [URN]: { code: 'eng' } })).statusCode, 201);
    });
  });
}
