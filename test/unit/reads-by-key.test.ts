/**
 * Which list filters are reads by key (storage/repos/list/indexed.ts `readsByKey`): on PostgreSQL a
 * hot first page of one goes on the connections lookups share, so it must be one index range of
 * a key, compared as the SQL compares it, never a test that could read many rows or none of the
 * key's indexes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Predicate, Scalar } from '../../src/storage/predicate.ts';
import { readsByKey } from '../../src/storage/repos/list/indexed.ts';

const USER_NAME = { at: 'column', column: 'user_name', folded: 'user_name_key' } as const;
const EXTERNAL_ID = { at: 'column', column: 'external_id' } as const;
const text = (scalar: Scalar, op: 'eq' | 'co', folded: boolean): Predicate => ({ kind: 'text', scalar, op, value: 'v', folded });

describe('readsByKey', () => {
  it('an equality on a key, as the SQL compares it: the folded userName, externalId exactly, the id', () => {
    assert.equal(readsByKey(text(USER_NAME, 'eq', true), 'users'), true);
    assert.equal(readsByKey(text(EXTERNAL_ID, 'eq', false), 'users'), true);
    assert.equal(readsByKey(text(EXTERNAL_ID, 'eq', false), 'groups'), true);
    assert.equal(readsByKey(text({ at: 'column', column: 'id' }, 'eq', false), 'users'), true);
    assert.equal(readsByKey(text({ at: 'column', column: 'display_name', folded: 'display_name_key' }, 'eq', true), 'groups'), true);
  });

  it('not a key as compared: a folded test of a column without a folded copy (lower(column)), the unfolded userName, another operator, another column, a combination', () => {
    assert.equal(readsByKey(text(EXTERNAL_ID, 'eq', true), 'users'), false);
    assert.equal(readsByKey(text(USER_NAME, 'eq', false), 'users'), false);
    assert.equal(readsByKey(text(USER_NAME, 'co', true), 'users'), false);
    assert.equal(readsByKey(text({ at: 'column', column: 'family_name' }, 'eq', true), 'users'), false);
    assert.equal(readsByKey(text({ at: 'column', column: 'display_name', folded: 'display_name_key' }, 'eq', true), 'users'), false);
    const both: Predicate = { kind: 'and', left: text(USER_NAME, 'eq', true), right: text(EXTERNAL_ID, 'eq', false) };
    assert.equal(readsByKey(both, 'users'), false);
  });
});
