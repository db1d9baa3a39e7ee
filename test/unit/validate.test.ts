/**
 * The schema-driven validator (RFC 7643 sections 2 and 7): immutable attributes keep their value
 * once set (2.2), readOnly input is ignored, the writeOnly password is set aside, canonical values
 * are matched case-insensitively and stored canonically, at most one primary (2.4), unknown
 * attributes are refused. The immutable rule is checked on a schema made for the test: the
 * shipped User and Group schemas have no immutable top-level attribute.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ScimError } from '../../src/scim/errors.ts';
import { userResourceType } from '../../src/scim/schema/registry.ts';
import { attr } from '../../src/scim/schema/types.ts';
import type { ResourceTypeDef } from '../../src/scim/schema/types.ts';
import { validateResource } from '../../src/scim/validate.ts';

const badgeType: ResourceTypeDef = {
  name: 'User',
  endpoint: '/Users',
  description: 'test',
  schema: {
    id: 'urn:test:Badge',
    name: 'Badge',
    description: 'test',
    attributes: [attr('userName', 'string', 'login', { required: true }), attr('badge', 'string', 'set once', { mutability: 'immutable' })],
  },
  extensions: [],
};

const refused = (run: () => unknown, scimType: string) =>
  assert.throws(run, (e: unknown) => e instanceof ScimError && e.status === 400 && e.scimType === scimType);

describe('validateResource', () => {
  it('RFC 7643 2.2: an immutable attribute may be set once, then keeps its value on replace and patch', () => {
    assert.equal(validateResource(badgeType, { userName: 'a', badge: 'B1' }, 'create').document.badge, 'B1');
    assert.equal(validateResource(badgeType, { userName: 'a', badge: 'B1' }, 'replace', { userName: 'a' }).document.badge, 'B1', 'set where there was none');
    assert.equal(validateResource(badgeType, { userName: 'b', badge: 'B1' }, 'replace', { userName: 'a', badge: 'B1' }).document.badge, 'B1', 'same value');
    refused(() => validateResource(badgeType, { userName: 'a', badge: 'B2' }, 'replace', { userName: 'a', badge: 'B1' }), 'mutability');
    refused(() => validateResource(badgeType, { userName: 'a' }, 'patch', { userName: 'a', badge: 'B1' }), 'mutability');
  });

  it('RFC 7643 7: readOnly input is ignored; the writeOnly password is set aside, never in the document', () => {
    const v = validateResource(userResourceType, { userName: 'a@x.example', id: 'X', meta: { version: 'W/"9"' }, groups: [{ value: 'g' }], password: 'secret words' }, 'create');
    assert.deepEqual(v.document, { userName: 'a@x.example' });
    assert.equal(v.password, 'secret words');
  });

  it('RFC 7643 2.3.1 / T23: canonical values match in any case and are stored canonically; unknown ones are refused', () => {
    const v = validateResource(userResourceType, { userName: 'a@x.example', emails: [{ value: 'a@x.example', Type: 'WORK' }] }, 'create');
    assert.deepEqual(v.document.emails, [{ value: 'a@x.example', type: 'work' }]);
    refused(() => validateResource(userResourceType, { userName: 'a@x.example', emails: [{ value: 'a@x.example', type: 'office' }] }, 'create'), 'invalidValue');
  });

  it('RFC 7643 2.4: at most one primary value', () => {
    refused(() => validateResource(userResourceType, { userName: 'a@x.example', emails: [{ value: 'a', primary: true }, { value: 'b', primary: 'True' }] }, 'create'), 'invalidValue');
  });

  it('unknown attributes and sub-attributes are invalidSyntax; a missing required one is invalidValue', () => {
    refused(() => validateResource(userResourceType, { userName: 'a@x.example', shoeSize: 42 }, 'create'), 'invalidSyntax');
    refused(() => validateResource(userResourceType, { userName: 'a@x.example', name: { nickname: 'x' } }, 'create'), 'invalidSyntax');
    refused(() => validateResource(userResourceType, { name: { givenName: 'x' } }, 'create'), 'invalidValue');
  });
});
