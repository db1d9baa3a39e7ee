/**
 * scim/assignments.ts in memory: `grantsOf` reads a document's grants rows by migration 023's
 * rules (string values of 1..1,024 characters, types of at most 256 or none, duplicates collapsed
 * with primary when any is, byte bounds), and `checkAssignments` leaves teams without a catalog
 * alone and keeps values a user already held.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkAssignments, grantsOf, sameAssignments } from '../../src/scim/assignments.ts';
import { typeNamed } from '../../src/scim/schema/catalog.ts';
import type { Catalog } from '../../src/scim/schema/catalog.ts';

const catalog: Catalog = {
  schemas: 'okta',
  roles: [{ value: 'admin', displayName: 'Admin' }],
  types: [{ name: 'License', endpoint: '/Licenses', required: false, multiValued: true, entitlements: [{ value: 'e5', displayName: 'E5' }] }],
};

describe('grantsOf', () => {
  it('reads roles and entitlements as the backfill does', () => {
    const grants = grantsOf({
      roles: [{ value: 'admin' }, { value: 'admin', primary: true }, { value: 'admin', type: 't' }, { value: '' }, { value: 7 }, { type: 'x' }, 'bare', { value: 'x'.repeat(1025) }, { value: 'ok', type: 'y'.repeat(257) }, { value: 'é'.repeat(1000) }],
      entitlements: [{ value: 'e5', type: 'License' }],
    });
    assert.deepEqual(grants, [
      { kind: 'entitlement', value: 'e5', type: 'License', primary: false },
      { kind: 'role', value: 'admin', type: '', primary: true },
      { kind: 'role', value: 'admin', type: 't', primary: false },
    ]);
    assert.deepEqual(grantsOf(undefined), []);
  });

  it('compares attributes whatever the order of their elements\' keys', () => {
    assert.ok(sameAssignments({ roles: [{ value: 'a', type: 'b' }] }, { roles: [{ type: 'b', value: 'a' }] }));
    assert.ok(!sameAssignments({ roles: [{ value: 'a' }] }, { roles: [{ value: 'a' }, { value: 'b' }] }));
  });
});

describe('checkAssignments', () => {
  it('a team without a catalog is not checked', () => {
    checkAssignments(undefined, 'create', { roles: [{ value: 'anything' }] });
  });

  it('a value the user already held is kept; a new unknown one is refused', () => {
    const original = { roles: [{ value: 'legacy' }] };
    checkAssignments(catalog, 'replace', { roles: [{ value: 'legacy' }, { value: 'admin' }] }, original);
    assert.throws(() => checkAssignments(catalog, 'replace', { roles: [{ value: 'legacy2' }] }, original), /"legacy2" is not a role in the team's catalog \(admin\)/);
  });

  it('an entitlement type names the type or its endpoint, in any case', () => {
    assert.equal(typeNamed(catalog, 'licenses')?.name, 'License');
    assert.equal(typeNamed(catalog, 'LICENSE')?.name, 'License');
    assert.equal(typeNamed(catalog, '/Licenses'), undefined);
    checkAssignments(catalog, 'create', { entitlements: [{ value: 'e5', type: 'Licenses' }] });
  });
});
