/**
 * `changedAttributes` and `sameJson` (src/audit/events.ts), which name the attributes a write
 * changed in its audit row and feed event: values compare as JSON whatever the order of their
 * objects' keys (PostgreSQL's jsonb returns keys in its own order), arrays in order, a key whose
 * value is undefined as absent; extension attributes are named `<urn>:<name>`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { changedAttributes, sameJson } from '../../src/audit/events.ts';

const EXT = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

describe('sameJson', () => {
  it('ignores object key order, at any depth', () => {
    assert.equal(sameJson({ value: 'admin', display: 'Admin', primary: true }, { primary: true, display: 'Admin', value: 'admin' }), true);
    assert.equal(sameJson([{ a: { x: 1, y: [1, { p: 1, q: 2 }] } }], [{ a: { y: [1, { q: 2, p: 1 }], x: 1 } }]), true);
  });
  it('compares arrays in order, and values exactly', () => {
    assert.equal(sameJson([{ value: 'a' }, { value: 'b' }], [{ value: 'b' }, { value: 'a' }]), false);
    assert.equal(sameJson([1, 2], [1, 2, 3]), false);
    assert.equal(sameJson({ value: 'a' }, { value: 'A' }), false);
    assert.equal(sameJson({ value: 1 }, { value: '1' }), false);
    assert.equal(sameJson({ a: 1 }, { a: 1, b: 2 }), false);
    assert.equal(sameJson({ a: 1, b: 2 }, { a: 1 }), false);
    assert.equal(sameJson({ a: null }, {}), false);
    assert.equal(sameJson([], {}), false);
    assert.equal(sameJson({}, []), false);
    assert.equal(sameJson(null, {}), false);
    assert.equal(sameJson('x', 'x'), true);
  });
  it('takes a key whose value is undefined as absent, as JSON does', () => {
    assert.equal(sameJson({ a: 1, b: undefined }, { a: 1 }), true);
    assert.equal(sameJson({ a: 1 }, { b: undefined, a: 1 }), true);
    assert.equal(sameJson({ a: undefined }, { b: 1 }), false);
  });
});

describe('changedAttributes', () => {
  it('names nothing for roles re-sent with their keys in another order', () => {
    const before = { userName: 'bjensen', roles: [{ value: 'admin', display: 'Admin', primary: true }], [EXT]: { department: 'R&D', manager: { value: 'M', displayName: 'Boss' } } };
    const after = { [EXT]: { manager: { displayName: 'Boss', value: 'M' }, department: 'R&D' }, roles: [{ primary: true, display: 'Admin', value: 'admin' }], userName: 'bjensen' };
    assert.deepEqual(changedAttributes(before, after), []);
  });
  it('names each changed attribute, extension attributes by URN', () => {
    const before = { userName: 'bjensen', roles: [{ value: 'admin' }], title: 'x', [EXT]: { department: 'R&D' } };
    const after = { userName: 'bjensen', roles: [{ value: 'viewer' }], nickName: 'b', [EXT]: { department: 'Ops' } };
    assert.deepEqual(changedAttributes(before, after), ['nickName', 'roles', 'title', `${EXT}:department`]);
  });
});
