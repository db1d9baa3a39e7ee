/**
 * DESIGN 7: PATCH then GET equals the PATCH applied in memory. Random operation lists over real
 * User attributes are sent over HTTP; the stored result must equal the pure engine's result, and
 * no operation list may produce a 500. Runs on every engine.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { applyPatch } from '../../src/scim/patch.ts';
import { userResourceType } from '../../src/scim/schema/registry.ts';
import { validateResource } from '../../src/scim/validate.ts';
import { ScimError } from '../../src/scim/errors.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

const paths = [
  'title', 'nickName', 'displayName', 'locale', 'name.givenName', 'name.familyName', 'Name.FamilyName',
  'emails[type eq "work"].value', 'phoneNumbers[type eq "mobile"].value', `${ENTERPRISE}:department`, `${ENTERPRISE}:employeeNumber`,
];
const text = fc.string({ minLength: 1, maxLength: 12, unit: fc.constantFrom(...'abcXYZ09 .-@é'.split('')) }).filter((s) => s.trim() !== '');
const operation = fc.oneof(
  fc.record({ op: fc.constantFrom('add', 'replace', 'Replace', 'Add'), path: fc.constantFrom(...paths), value: text }),
  fc.record({ op: fc.constantFrom('remove', 'Remove'), path: fc.constantFrom(...paths) }),
  fc.record({ op: fc.constantFrom('replace', 'add'), value: fc.dictionary(fc.constantFrom('title', 'nickName', 'name.givenName', `${ENTERPRISE}:costCenter`), text, { minKeys: 1 }) }),
);

/** The stored document of a representation: what PATCH works on. */
function documentOf(resource: Record<string, unknown>): Record<string, unknown> {
  const { id, meta, schemas, groups, ...document } = resource;
  void id;
  void meta;
  void schemas;
  void groups;
  return document;
}

for (const engine of engines) {
  describe(`PATCH property on ${engine.name}`, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp({ engine });
    });
    after(() => t.close());

    it('random PATCHes: the response and a later GET equal the engine applied in memory; never a 500', async () => {
      let n = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 4 }), async (operations) => {
          const created = await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: `p${n++}@x.example`, title: 'Start' });
          assert.equal(created.statusCode, 201, created.body);
          const before = documentOf(json(created));
          const id = String(json(created).id);
          const body = { schemas: [PATCH], Operations: operations };

          let expected: Record<string, unknown> | ScimError;
          try {
            expected = validateResource(userResourceType, applyPatch(userResourceType, before, body).document, 'patch', before).document;
          } catch (error) {
            if (!(error instanceof ScimError)) throw error;
            expected = error;
          }
          const res = await t.request('PATCH', `/v2/scim/Users/${id}`, body);
          assert.notEqual(res.statusCode, 500, res.body);
          if (expected instanceof ScimError) {
            assert.equal(res.statusCode, expected.status, res.body);
            assert.deepEqual(documentOf(json(await t.request('GET', `/v2/scim/Users/${id}`))), before, 'a refused PATCH changes nothing');
            return;
          }
          assert.equal(res.statusCode, 200, res.body);
          const { active, ...rest } = expected;
          assert.deepEqual(documentOf(json(res)), { ...rest, active: active ?? true });
          assert.deepEqual(documentOf(json(await t.request('GET', `/v2/scim/Users/${id}`))), documentOf(json(res)));
        }),
        { numRuns: 60 },
      );
    });
  });
}
