/**
 * The pure PATCH engine (src/scim/patch.ts) against RFC 7644 section 3.5.2, on stored-shape
 * documents and without I/O: add, replace and remove with and without paths, no-path value
 * objects with dotted and URN keys, value-filtered paths, the element a filtered write creates
 * (Entra ID E8), primary demotion, removal by value array, Group member deltas and how several
 * member operations compose, and every refusal with its status and scimType. A fast-check
 * property holds applyPatch to "a result or a ScimError 400, and the input never touched" for
 * random operation lists.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ScimError } from '../../src/scim/errors.ts';
import type { ScimType } from '../../src/scim/errors.ts';
import { applyPatch, MAX_OPERATIONS, membersOnlyChange } from '../../src/scim/patch.ts';
import type { PatchResult } from '../../src/scim/patch.ts';
import { groupResourceType, userResourceType } from '../../src/scim/schema/registry.ts';
import type { ResourceTypeDef } from '../../src/scim/schema/types.ts';
import { validateResource } from '../../src/scim/validate.ts';

type Json = Record<string, unknown>;

const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

/** A document as the service stores it: a create body after validation. */
const stored = (rt: ResourceTypeDef, body: Json): Json => validateResource(rt, body, 'create').document;

const babs = (): Json =>
  stored(userResourceType, {
    userName: 'bjensen@example.com',
    externalId: 'bjensen',
    name: { familyName: 'Jensen', givenName: 'Barbara', middleName: 'Jane' },
    displayName: 'Babs Jensen',
    title: 'Tour Guide',
    emails: [
      { value: 'bjensen@example.com', type: 'work', primary: true },
      { value: 'babs@jensen.org', type: 'home' },
    ],
    phoneNumbers: [{ value: '555-555-8377', type: 'work' }],
    [ENTERPRISE]: { employeeNumber: '701984', department: 'Tour Operations', manager: { value: '26118915' } },
  });

const tourGuides = (): Json => stored(groupResourceType, { displayName: 'Tour Guides', externalId: 'tg' });

const body = (...operations: unknown[]): Json => ({ schemas: [PATCH_OP], Operations: operations });

const patchUser = (...operations: unknown[]): Json => applyPatch(userResourceType, babs(), body(...operations)).document;
const patchGroup = (...operations: unknown[]): PatchResult => applyPatch(groupResourceType, tourGuides(), body(...operations));

function refused(fn: () => unknown, scimType: ScimType, label = ''): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof ScimError, `${label} threw ${String(error)}`);
    assert.equal(error.status, 400, label);
    assert.equal(error.scimType, scimType, `${label}: ${error.message}`);
    return true;
  }, label);
}

const emailsOf = (document: Json): Json[] => document.emails as Json[];
const enterpriseOf = (document: Json): Json => document[ENTERPRISE] as Json;

describe('RFC 7644 3.5.2.1 add', () => {
  it('RFC 7644 3.5.2.1: add with a path to a single-valued attribute sets it, replacing any value', () => {
    assert.equal(patchUser({ op: 'add', path: 'nickName', value: 'Babs' }).nickName, 'Babs');
    assert.equal(patchUser({ op: 'add', path: 'title', value: 'Chief' }).title, 'Chief');
  });

  it('RFC 7644 3.5.2.1: add to a sub-attribute of a complex attribute sets only that sub-attribute', () => {
    assert.deepEqual(patchUser({ op: 'add', path: 'name.honorificPrefix', value: 'Ms.' }).name, { familyName: 'Jensen', givenName: 'Barbara', middleName: 'Jane', honorificPrefix: 'Ms.' });
  });

  it('RFC 7644 3.5.2.1: a complex value adds the sub-attributes it names and keeps the others', () => {
    assert.deepEqual(patchUser({ op: 'add', path: 'name', value: { givenName: 'Babs' } }).name, { familyName: 'Jensen', givenName: 'Babs', middleName: 'Jane' });
  });

  it('RFC 7644 3.5.2.1: add to a multi-valued attribute appends the new values and skips ones already there', () => {
    const emails = emailsOf(patchUser({ op: 'add', path: 'emails', value: [{ value: 'babs@jensen.org', type: 'home' }, { value: 'b@other.example', type: 'other' }] }));
    assert.deepEqual(emails.map((e) => e.value), ['bjensen@example.com', 'babs@jensen.org', 'b@other.example']);
  });

  it('RFC 7644 3.5.2 / RFC 7643 2.4: adding a primary value demotes the previous primary', () => {
    const emails = emailsOf(patchUser({ op: 'add', path: 'emails', value: [{ value: 'new@example.com', type: 'work', primary: true }] }));
    assert.deepEqual(emails.filter((e) => e.primary === true).map((e) => e.value), ['new@example.com']);
    assert.equal(emails.find((e) => e.value === 'bjensen@example.com')?.primary, false);
  });

  it('RFC 7644 3.5.2: setting primary through a value-filtered path demotes every other value', () => {
    for (const operation of [
      { op: 'replace', path: 'emails[type eq "home"].primary', value: true },
      { op: 'add', path: 'emails[type eq "home"].primary', value: true },
      { op: 'add', path: 'emails[type eq "other"]', value: { value: 'o@example.com', primary: true } },
      { op: 'replace', value: { 'emails[type eq "home"].primary': true } },
    ]) {
      const emails = emailsOf(patchUser(operation));
      assert.equal(emails.filter((e) => e.primary === true).length, 1, JSON.stringify(operation));
      assert.equal(emails.find((e) => e.value === 'bjensen@example.com')?.primary === true, false, JSON.stringify(operation));
    }
  });

  it('RFC 7644 3.5.2.1: add without a path takes an object whose keys are attribute paths, dotted and URN-prefixed', () => {
    const document = patchUser({
      op: 'add',
      value: {
        nickName: 'Babs',
        'name.honorificSuffix': 'III',
        [`${ENTERPRISE}:costCenter`]: '4130',
        [`${ENTERPRISE}:manager.value`]: '99',
      },
    });
    assert.equal(document.nickName, 'Babs');
    assert.equal((document.name as Json).honorificSuffix, 'III');
    assert.equal((document.name as Json).familyName, 'Jensen');
    assert.deepEqual(enterpriseOf(document), { employeeNumber: '701984', department: 'Tour Operations', costCenter: '4130', manager: { value: '99' } });
  });

  it('RFC 7644 3.5.2.1: an extension object in a no-path value merges into the stored extension, whatever the op', () => {
    for (const op of ['add', 'replace']) {
      const document = patchUser({ op, value: { [ENTERPRISE]: { division: 'Theme Park' } } });
      assert.deepEqual(enterpriseOf(document), { employeeNumber: '701984', department: 'Tour Operations', division: 'Theme Park', manager: { value: '26118915' } }, op);
    }
  });

  it('RFC 7644 3.5.2.1: add to an extension attribute of a user without the extension creates the extension object', () => {
    const bare = stored(userResourceType, { userName: 'x' });
    assert.deepEqual(applyPatch(userResourceType, bare, body({ op: 'add', path: `${ENTERPRISE}:department`, value: 'Sales' })).document[ENTERPRISE], { department: 'Sales' });
  });

  it('Entra ID E6: the enterprise manager given as a bare id is stored as {value}', () => {
    assert.deepEqual(enterpriseOf(patchUser({ op: 'add', path: `${ENTERPRISE}:manager`, value: '42' })).manager, { value: '42' });
  });

  it('Entra ID E8: a filtered add that matches no value creates the element from the filter\'s eq terms', () => {
    const phones = patchUser({ op: 'add', path: 'phoneNumbers[type eq "mobile"].value', value: '555-0100' }).phoneNumbers as Json[];
    assert.deepEqual(phones, [{ value: '555-555-8377', type: 'work' }, { value: '555-0100', type: 'mobile' }]);
    const addresses = patchUser({ op: 'add', path: 'addresses[type eq "work"].locality', value: 'Hollywood' }).addresses as Json[];
    assert.deepEqual(addresses, [{ locality: 'Hollywood', type: 'work' }]);
  });

  it('RFC 7644 3.5.2.1: a filtered add that matches sets the sub-attribute on the matching elements only', () => {
    const emails = emailsOf(patchUser({ op: 'add', path: 'emails[type eq "work"].display', value: 'Work mail' }));
    assert.deepEqual(emails, [
      { value: 'bjensen@example.com', display: 'Work mail', type: 'work', primary: true },
      { value: 'babs@jensen.org', type: 'home' },
    ]);
  });

  it('RFC 7644 3.5.2: operation names are case-insensitive (Entra ID sends "Add", "Replace")', () => {
    assert.equal(patchUser({ op: 'Add', path: 'title', value: 'A' }).title, 'A');
    assert.equal(patchUser({ op: 'REPLACE', path: 'title', value: 'B' }).title, 'B');
    assert.equal(patchUser({ op: 'Remove', path: 'title' }).title, undefined);
  });
});

describe('RFC 7644 3.5.2.3 replace', () => {
  it('RFC 7644 3.5.2.3: replace of a single-valued attribute sets it, and of an absent one adds it', () => {
    assert.equal(patchUser({ op: 'replace', path: 'title', value: 'Chief' }).title, 'Chief');
    assert.equal(patchUser({ op: 'replace', path: 'locale', value: 'en-US' }).locale, 'en-US');
  });

  it('RFC 7644 3.5.2.3: replace of a multi-valued attribute without a filter replaces all its values', () => {
    assert.deepEqual(emailsOf(patchUser({ op: 'replace', path: 'emails', value: [{ value: 'only@example.com', type: 'work' }] })), [{ value: 'only@example.com', type: 'work' }]);
  });

  it('RFC 7644 3.5.2.3: a complex value replaces the sub-attributes it names; the others are left unchanged', () => {
    assert.deepEqual(patchUser({ op: 'replace', path: 'name', value: { givenName: 'Babs', familyName: 'J' } }).name, { familyName: 'J', givenName: 'Babs', middleName: 'Jane' });
  });

  it('RFC 7644 3.5.2.3: replace with a value filter replaces every matching value, and only those', () => {
    const emails = emailsOf(patchUser({ op: 'replace', path: 'emails[type eq "home"]', value: { value: 'babs@home.example', type: 'home' } }));
    assert.deepEqual(emails, [{ value: 'bjensen@example.com', type: 'work', primary: true }, { value: 'babs@home.example', type: 'home' }]);
    const values = emailsOf(patchUser({ op: 'replace', path: 'emails[value ew ".org" or value ew ".com"].display', value: 'mail' }));
    assert.deepEqual(values.map((e) => e.display), ['mail', 'mail']);
  });

  it('RFC 7644 3.5.2.3: replace of the sub-attribute of a filtered value (emails[type eq "work"].value)', () => {
    const emails = emailsOf(patchUser({ op: 'replace', path: 'emails[type eq "work"].value', value: 'barbara@example.com' }));
    assert.deepEqual(emails[0], { value: 'barbara@example.com', type: 'work', primary: true });
    assert.deepEqual(emails[1], { value: 'babs@jensen.org', type: 'home' });
  });

  it('RFC 7644 3.5.2.3: replace without a path takes an object of attribute paths', () => {
    const document = patchUser({ op: 'replace', value: { title: 'Chief', 'name.givenName': 'Babs', [`${ENTERPRISE}:department`]: 'Ops', emails: [{ value: 'z@example.com' }] } });
    assert.equal(document.title, 'Chief');
    assert.equal((document.name as Json).givenName, 'Babs');
    assert.equal(enterpriseOf(document).department, 'Ops');
    assert.deepEqual(document.emails, [{ value: 'z@example.com' }]);
  });

  it('Okta O10: read-only attributes inside a no-path value object are skipped, not refused', () => {
    const result = patchGroup({ op: 'replace', value: { id: 'abc', displayName: 'Guides', meta: { version: 'W/"9"' } } });
    assert.equal(result.document.displayName, 'Guides');
    assert.equal('id' in result.document, false);
    assert.equal('meta' in result.document, false);
  });

  it('Entra ID E9: replace or add with null or "" removes the target instead of storing an empty value', () => {
    assert.equal('title' in patchUser({ op: 'replace', path: 'title', value: '' }), false);
    assert.equal('title' in patchUser({ op: 'add', path: 'title', value: null }), false);
    assert.equal((patchUser({ op: 'replace', path: 'name.middleName', value: '' }).name as Json).middleName, undefined);
    assert.equal(enterpriseOf(patchUser({ op: 'replace', path: `${ENTERPRISE}:manager`, value: null })).manager, undefined);
  });

  it('contract: the Group alias display replaces displayName', () => {
    assert.equal(patchGroup({ op: 'replace', path: 'display', value: 'Guides' }).document.displayName, 'Guides');
  });
});

describe('RFC 7644 3.5.2.2 remove', () => {
  it('RFC 7644 3.5.2.2: remove of a single-valued attribute deletes it', () => {
    const document = patchUser({ op: 'remove', path: 'title' });
    assert.equal('title' in document, false);
    assert.equal(document.displayName, 'Babs Jensen');
  });

  it('RFC 7644 3.5.2.2: remove of a sub-attribute deletes it, and the parent once it is empty', () => {
    assert.deepEqual(patchUser({ op: 'remove', path: 'name.middleName' }).name, { familyName: 'Jensen', givenName: 'Barbara' });
    assert.equal('name' in patchUser({ op: 'remove', path: 'name.middleName' }, { op: 'remove', path: 'name.givenName' }, { op: 'remove', path: 'name.familyName' }), false);
  });

  it('RFC 7644 3.5.2.2: remove of a multi-valued attribute without a filter removes all its values', () => {
    assert.equal('emails' in patchUser({ op: 'remove', path: 'emails' }), false);
  });

  it('RFC 7644 3.5.2.2: remove with a value filter removes the matching values; the attribute goes when none is left', () => {
    assert.deepEqual(emailsOf(patchUser({ op: 'remove', path: 'emails[type eq "home"]' })).map((e) => e.value), ['bjensen@example.com']);
    assert.equal('emails' in patchUser({ op: 'remove', path: 'emails[type eq "home" or primary eq true]' }), false);
  });

  it('RFC 7644 3.5.2.2: remove of a sub-attribute of filtered values (emails[type eq "work"].display)', () => {
    const before = patchUser({ op: 'add', path: 'emails[type eq "work"].display', value: 'W' });
    const after = applyPatch(userResourceType, before, body({ op: 'remove', path: 'emails[type eq "work"].display' })).document;
    assert.deepEqual(after.emails, babs().emails);
  });

  it('RFC 7644 3.5.2.2: a remove whose filter matches nothing changes nothing', () => {
    assert.deepEqual(patchUser({ op: 'remove', path: 'emails[type eq "other"]' }), babs());
  });

  it('Entra ID / Okta: remove with a value array removes the listed values of a multi-valued attribute', () => {
    assert.deepEqual(emailsOf(patchUser({ op: 'remove', path: 'emails', value: [{ value: 'babs@jensen.org' }] })).map((e) => e.value), ['bjensen@example.com']);
  });

  it('RFC 7644 3.5.2.2: remove of an extension attribute, and of the whole extension by its URN', () => {
    assert.deepEqual(enterpriseOf(patchUser({ op: 'remove', path: `${ENTERPRISE}:department` })), { employeeNumber: '701984', manager: { value: '26118915' } });
    assert.equal(ENTERPRISE in patchUser({ op: 'remove', path: ENTERPRISE }), false);
    const emptied = patchUser({ op: 'remove', path: `${ENTERPRISE}:department` }, { op: 'remove', path: `${ENTERPRISE}:employeeNumber` }, { op: 'remove', path: `${ENTERPRISE}:manager` });
    assert.equal(ENTERPRISE in emptied, false, 'an emptied extension object is dropped');
  });
});

describe('RFC 7644 3.5.2: Group members as deltas', () => {
  it('RFC 7644 3.5.2.1: add members yields their ids as a delta and leaves the document alone', () => {
    const result = patchGroup({ op: 'add', path: 'members', value: [{ value: 'u1' }, { value: 'u2' }] });
    assert.deepEqual(result.members, { clear: false, add: ['u1', 'u2'], remove: [] });
    assert.deepEqual(result.document, tourGuides());
  });

  it('RFC 7644 3.5.2.2: remove members[value eq "id"] (and several joined by or) yields a removal delta', () => {
    assert.deepEqual(patchGroup({ op: 'remove', path: 'members[value eq "u1"]' }).members, { clear: false, add: [], remove: ['u1'] });
    assert.deepEqual(patchGroup({ op: 'remove', path: 'members[value eq "u1" or value eq "u2"]' }).members, { clear: false, add: [], remove: ['u1', 'u2'] });
  });

  it('Entra ID / Okta: remove members with a value array yields a removal delta', () => {
    assert.deepEqual(patchGroup({ op: 'remove', path: 'members', value: [{ value: 'u1' }, { value: 'u2' }] }).members, { clear: false, add: [], remove: ['u1', 'u2'] });
  });

  it('RFC 7644 3.5.2.2: remove members without a filter or value removes every member', () => {
    assert.deepEqual(patchGroup({ op: 'remove', path: 'members' }).members, { clear: true, add: [], remove: [] });
  });

  it('RFC 7644 3.5.2.3: replace members is a clear that keeps the new ones', () => {
    assert.deepEqual(patchGroup({ op: 'replace', path: 'members', value: [{ value: 'u3' }] }).members, { clear: true, add: ['u3'], remove: [] });
    assert.deepEqual(patchGroup({ op: 'replace', value: { members: [{ value: 'u3' }] } }).members, { clear: true, add: ['u3'], remove: [] });
  });

  it('RFC 7644 3.5.2: operations apply in order, so remove then add of one member keeps it and add then remove drops it', () => {
    assert.deepEqual(patchGroup({ op: 'remove', path: 'members[value eq "u1"]' }, { op: 'add', path: 'members', value: [{ value: 'u1' }] }).members, { clear: false, add: ['u1'], remove: [] });
    assert.deepEqual(patchGroup({ op: 'add', path: 'members', value: [{ value: 'u1' }] }, { op: 'remove', path: 'members[value eq "u1"]' }).members, { clear: false, add: [], remove: ['u1'] });
    assert.deepEqual(
      patchGroup({ op: 'remove', path: 'members', value: [{ value: 'u1' }] }, { op: 'add', path: 'members', value: [{ value: 'u2' }] }).members,
      { clear: false, add: ['u2'], remove: ['u1'] },
    );
  });

  it('RFC 7644 3.5.2: a clear composes with the operations around it', () => {
    assert.deepEqual(
      patchGroup({ op: 'add', path: 'members', value: [{ value: 'u1' }] }, { op: 'replace', path: 'members', value: [{ value: 'u2' }] }, { op: 'add', path: 'members', value: [{ value: 'u3' }] }).members,
      { clear: true, add: ['u2', 'u3'], remove: [] },
    );
    assert.deepEqual(
      patchGroup({ op: 'replace', path: 'members', value: [{ value: 'u2' }, { value: 'u3' }] }, { op: 'remove', path: 'members[value eq "u2"]' }).members,
      { clear: true, add: ['u3'], remove: [] },
    );
  });

  it('RFC 7644 3.5.2: a member change beside a document change yields both', () => {
    const result = patchGroup({ op: 'replace', path: 'displayName', value: 'Guides' }, { op: 'add', path: 'members', value: [{ value: 'u1' }] });
    assert.equal(result.document.displayName, 'Guides');
    assert.deepEqual(result.members, { clear: false, add: ['u1'], remove: [] });
    assert.equal(patchGroup({ op: 'replace', path: 'displayName', value: 'Guides' }).members, undefined, 'no member operation, no delta');
  });

  it('the Postman collection: a member added as a bare id string', () => {
    assert.deepEqual(patchGroup({ op: 'add', path: 'members', value: 'u9' }).members, { clear: false, add: ['u9'], remove: [] });
  });
});

describe('RFC 7644 3.5.2 and 3.12: refusals', () => {
  it('RFC 7644 3.5.2.2: remove without a path is 400 noTarget', () => {
    refused(() => patchUser({ op: 'remove' }), 'noTarget');
    refused(() => patchUser({ op: 'remove', path: '' }), 'noTarget');
  });

  it('RFC 7644 3.5.2.3: a filtered add or replace that matches nothing and cannot create a value is 400 noTarget', () => {
    refused(() => patchUser({ op: 'replace', path: 'emails[value co "nowhere"].display', value: 'x' }), 'noTarget');
    refused(() => patchUser({ op: 'add', path: 'emails[not (type pr)]', value: { value: 'x@example.com' } }), 'noTarget');
    refused(() => patchUser({ op: 'replace', path: `${ENTERPRISE}:manager[value eq "nobody"].value`, value: 'x' }), 'noTarget');
  });

  it('RFC 7644 3.5.2: a path naming no attribute, or malformed, is 400 invalidPath', () => {
    const bad: unknown[] = [
      { op: 'add', path: 'shoeSize', value: '42' },
      { op: 'replace', path: 'name.shoeSize', value: '42' },
      { op: 'remove', path: 'emails[shoe eq "x"]' },
      { op: 'add', path: 'emails[type eq "work"].shoe', value: 'x' },
      { op: 'add', path: 'title[value eq "x"]', value: 'x' },
      { op: 'replace', path: 'emails.value', value: 'x' },
      { op: 'add', path: 'emails[type eq "work"', value: 'x' },
      { op: 'add', path: `${ENTERPRISE}:shoeSize`, value: 'x' },
      { op: 'add', path: 42, value: 'x' },
      { op: 'add', value: { shoeSize: '42' } },
      { op: 'add', value: { [ENTERPRISE]: { shoeSize: '42' } } },
      { op: 'add', path: 'urn:example:unknown:Thing:attr', value: 'x' },
    ];
    for (const operation of bad) refused(() => patchUser(operation), 'invalidPath', JSON.stringify(operation));
    refused(() => patchGroup({ op: 'remove', path: 'members[display eq "bjensen"]' }), 'invalidPath', 'members are removed by value');
    refused(() => patchGroup({ op: 'add', path: 'members[value eq "u1"]', value: [{ value: 'u1' }] }), 'invalidPath', 'members are added without a filter');
  });

  it('RFC 7643 2.2 / RFC 7644 3.5.2: a path naming a read-only attribute is 400 mutability', () => {
    const bad: unknown[] = [
      { op: 'replace', path: 'id', value: 'x' },
      { op: 'remove', path: 'id' },
      { op: 'replace', path: 'meta.lastModified', value: '2026-01-01T00:00:00Z' },
      { op: 'add', path: 'groups', value: [{ value: 'g1' }] },
      { op: 'remove', path: 'groups' },
      { op: 'replace', path: `${ENTERPRISE}:manager.displayName`, value: 'Boss' },
    ];
    for (const operation of bad) refused(() => patchUser(operation), 'mutability', JSON.stringify(operation));
    refused(() => patchGroup({ op: 'replace', path: 'value', value: 'x' }), 'mutability', 'the Group alias value is id');
    refused(() => patchGroup({ op: 'replace', path: 'members[value eq "u1"].display', value: 'x' }), 'mutability', 'member sub-attributes');
  });

  it('RFC 7644 3.5.2: a body that is not a PatchOp message is 400 invalidSyntax', () => {
    const bad: [unknown, string][] = [
      [null, 'null body'],
      [[], 'array body'],
      ['add', 'string body'],
      [{ Operations: [{ op: 'add', path: 'title', value: 'x' }] }, 'no schemas'],
      [{ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], Operations: [{ op: 'add', path: 'title', value: 'x' }] }, 'wrong schema'],
      [{ schemas: PATCH_OP, Operations: [{ op: 'add', path: 'title', value: 'x' }] }, 'schemas not an array'],
      [{ schemas: [PATCH_OP] }, 'no Operations'],
      [{ schemas: [PATCH_OP], Operations: [] }, 'empty Operations'],
      [{ schemas: [PATCH_OP], Operations: { op: 'add' } }, 'Operations not an array'],
      [body('add'), 'an operation that is not an object'],
      [body({ path: 'title', value: 'x' }), 'no op'],
      [body({ op: 'delete', path: 'title' }), 'unknown op'],
      [body({ op: 42, path: 'title' }), 'op not a string'],
      [body({ op: 'add', path: 'title' }), 'add without a value'],
      [body({ op: 'replace', path: 'title' }), 'replace without a value'],
      [body({ op: 'add' }), 'no-path add without a value'],
    ];
    for (const [input, label] of bad) refused(() => applyPatch(userResourceType, babs(), input), 'invalidSyntax', label);
  });

  it('RFC 7644 3.5.2: schemas and Operations are matched case-insensitively (Entra ID sends "operations")', () => {
    assert.equal(applyPatch(userResourceType, babs(), { schemas: [PATCH_OP.toUpperCase()], operations: [{ op: 'add', path: 'title', value: 'x' }] }).document.title, 'x');
  });

  it('RFC 7644 3.5.2 and 3.12: a value of the wrong type or outside the canonical values is 400 invalidValue', () => {
    const bad: unknown[] = [
      { op: 'add', path: 'active', value: 'maybe' },
      { op: 'add', path: 'title', value: 42 },
      { op: 'add', path: 'emails', value: [{ value: 'x@example.com', type: 'pigeon' }] },
      { op: 'add', path: 'emails', value: 'x@example.com' },
      { op: 'replace', path: 'emails', value: [{ value: 'a@example.com', primary: true }, { value: 'b@example.com', primary: true }] },
      { op: 'add', value: 'title' },
      { op: 'add', path: 'emails[type eq "home"]', value: 'x@example.com' },
    ];
    for (const operation of bad) refused(() => patchUser(operation), 'invalidValue', JSON.stringify(operation));
  });

  it(`RFC 7644 3.12: more than ${MAX_OPERATIONS} operations are 400 tooMany`, () => {
    const operation = { op: 'add', path: 'title', value: 'x' };
    assert.equal(patchUser(...Array.from({ length: MAX_OPERATIONS }, () => operation)).title, 'x');
    refused(() => patchUser(...Array.from({ length: MAX_OPERATIONS + 1 }, () => operation)), 'tooMany');
  });

  it('RFC 7644 3.5.2: operations are all or nothing; a refused one leaves the input as it was', () => {
    const input = babs();
    const copy = structuredClone(input);
    refused(() => applyPatch(userResourceType, input, body({ op: 'replace', path: 'title', value: 'x' }, { op: 'remove', path: 'id' })), 'mutability');
    assert.deepEqual(input, copy);
  });
});

/** Freezes `value` and everything under it, so a write to the input throws. */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

const word = fc.constantFrom('', 'x', 'Work', 'work', 'home', 'u1', 'u2', 'é', 'a b', 'TRUE', 'true', '2026-01-01T00:00:00Z', 'babs@jensen.org');
const scalar = fc.oneof({ weight: 6, arbitrary: word }, fc.boolean(), fc.constantFrom(null, 0, 42, -1.5), fc.string({ maxLength: 8 }));
const element = fc.dictionary(
  fc.oneof({ weight: 8, arbitrary: fc.constantFrom('value', 'type', 'primary', 'display', 'Value') }, fc.constantFrom('$ref', 'shoe')),
  scalar,
  { maxKeys: 4 },
);
const valueObject = fc.dictionary(
  fc.constantFrom('title', 'name.givenName', 'name', 'emails', 'emails[type eq "work"].value', 'members', 'displayName', 'id', 'active', `${ENTERPRISE}:department`, ENTERPRISE, 'schemas', 'nope'),
  fc.oneof(scalar, element, fc.array(element, { maxLength: 2 })),
  { maxKeys: 3 },
);
const value = fc.oneof({ weight: 4, arbitrary: scalar }, { weight: 2, arbitrary: element }, { weight: 2, arbitrary: fc.array(element, { maxLength: 3 }) }, fc.array(scalar, { maxLength: 2 }), valueObject);
/** Paths per resource type: mostly ones that resolve, some that must be refused. */
const pathsOf = (rt: ResourceTypeDef): fc.Arbitrary<string> => {
  const [valid, invalid] =
    rt === groupResourceType
      ? [
          ['displayName', 'display', 'externalId', 'active', 'members', 'Members', 'members[value eq "u1"]', 'members[value eq "u1" or value eq "u2"]'],
          ['members.value', 'members[display eq "x"]', 'value', 'id', 'title', 'meta.created', 'members[value eq'],
        ]
      : [
          [
            'title', 'Title', 'displayName', 'externalId', 'active', 'name', 'name.givenName', 'emails', 'emails[type eq "work"]', 'emails[type eq "work"].value',
            'emails[type eq "home"].primary', 'emails[value co "@"]', 'emails[not (primary eq true)].display', 'phoneNumbers[type eq "mobile"].value',
            'addresses[type eq "work"].locality', 'manager', ENTERPRISE, `${ENTERPRISE}:manager`, `${ENTERPRISE}:manager.value`,
            `${ENTERPRISE}:manager[value eq "26118915"].value`, `${ENTERPRISE}:department`,
          ],
          ['name.shoe', 'emails.value', 'id', 'meta.created', 'groups', 'members', 'x.y.z', 'urn:x:y', 'emails[type eq', 'title[value eq "x"]'],
        ];
  return fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...valid) }, { weight: 1, arbitrary: fc.constantFrom(...invalid) });
};

const operationOf = (rt: ResourceTypeDef) =>
  fc.oneof(
    { weight: 8, arbitrary: fc.record({ op: fc.constantFrom('add', 'replace', 'Add', 'REPLACE'), path: pathsOf(rt), value }) },
    { weight: 3, arbitrary: fc.record({ op: fc.constantFrom('remove', 'Remove'), path: pathsOf(rt), value: fc.option(value) }, { requiredKeys: ['op', 'path'] }) },
    { weight: 3, arbitrary: fc.record({ op: fc.constantFrom('add', 'replace'), value: valueObject }) },
    {
      weight: 1,
      arbitrary: fc.record(
        { op: fc.oneof(fc.constantFrom('add', 'remove', 'replace', 'delete', ''), fc.constant(7)), path: fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom(null, 3, '')), value },
        { requiredKeys: ['op'] },
      ),
    },
  );

/** The message around the operations: the RFC's, Entra ID's lower-case key, or a broken one. */
const envelopes: ((operations: unknown[]) => unknown)[] = [
  (operations) => body(...operations),
  (operations) => ({ schemas: [PATCH_OP], operations }),
  (operations) => ({ Operations: operations }),
];

describe('applyPatch robustness (property)', () => {
  it('random operation lists on Users and Groups: a result or a ScimError 400, and the input document never mutated', () => {
    const documents: [ResourceTypeDef, Json][] = [
      [userResourceType, babs()],
      [userResourceType, stored(userResourceType, { userName: 'bare' })],
      [groupResourceType, tourGuides()],
    ];
    const cases = fc.constantFrom(...documents).chain(([rt, original]) =>
      fc.record({
        rt: fc.constant(rt),
        original: fc.constant(original),
        operations: fc.array(operationOf(rt), { minLength: 0, maxLength: 4 }),
        envelope: fc.oneof({ weight: 8, arbitrary: fc.constant(envelopes[0]!) }, fc.constantFrom(...envelopes)),
      }),
    );
    fc.assert(
      fc.property(cases, ({ rt, original, operations, envelope }) => {
        const input = deepFreeze(structuredClone(original));
        try {
          const result = applyPatch(rt, input, envelope(operations));
          assert.ok(result.document !== input, 'the result is a new document');
          // What the service does next: validation answers a document or a 400 as well.
          try {
            validateResource(rt, result.document, 'patch', input);
          } catch (error) {
            if (!(error instanceof ScimError) || error.status !== 400) throw error;
          }
        } catch (error) {
          if (error instanceof assert.AssertionError) throw error;
          assert.ok(error instanceof ScimError, `${JSON.stringify(operations)} threw ${String(error)}`);
          assert.equal(error.status, 400);
        }
        assert.deepEqual(input, original, 'the input document is unchanged');
      }),
      { numRuns: 3000 },
    );
  });
});

describe('membersOnlyChange: a PATCH of the members alone, known before the group is read', () => {
  const change = (...operations: unknown[]) => membersOnlyChange(groupResourceType, body(...operations));

  it('member operations alone answer their delta, with a path or in a no-path value object', () => {
    assert.deepEqual(change({ op: 'add', path: 'members', value: [{ value: 'u1' }] }), { clear: false, add: ['u1'], remove: [] });
    assert.deepEqual(change({ op: 'Add', value: { members: [{ value: 'u1' }] } }), { clear: false, add: ['u1'], remove: [] });
    assert.deepEqual(change({ op: 'remove', path: 'members[value eq "u1"]' }, { op: 'add', path: 'Members', value: [{ value: 'u2' }] }), { clear: false, add: ['u2'], remove: ['u1'] });
    assert.deepEqual(change({ op: 'replace', path: 'members', value: [{ value: 'u3' }] }), { clear: true, add: ['u3'], remove: [] });
  });

  it('any operation on an attribute, an extension or an unknown path is not members only; nor is a body the engine refuses', () => {
    assert.equal(change({ op: 'add', path: 'members', value: [{ value: 'u1' }] }, { op: 'replace', path: 'displayName', value: 'Guides' }), undefined);
    assert.equal(change({ op: 'replace', value: { members: [{ value: 'u1' }], externalId: 'x' } }), undefined);
    assert.equal(change({ op: 'remove', path: 'externalId' }), undefined);
    assert.equal(change({ op: 'replace', path: 'display', value: 'Guides' }), undefined);
    assert.equal(change({ op: 'add', path: 'members[value eq "u1"]', value: [{ value: 'u1' }] }), undefined);
    assert.equal(change({ op: 'add', path: 'members', value: [{ value: 'u1' }] }, { op: 'remove' }), undefined);
    assert.equal(membersOnlyChange(groupResourceType, { Operations: [] }), undefined);
  });

  it('property: whenever it answers, the full engine on a stored group gives the same delta and leaves the document as it was', () => {
    const operations = fc.array(operationOf(groupResourceType), { minLength: 1, maxLength: 4 });
    fc.assert(
      fc.property(operations, (ops) => {
        const delta = membersOnlyChange(groupResourceType, body(...ops));
        if (delta === undefined) return;
        const result = applyPatch(groupResourceType, tourGuides(), body(...ops));
        assert.deepEqual(result.members, delta);
        assert.deepEqual(result.document, tourGuides());
      }),
      { numRuns: 3000 },
    );
  });
});
