import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OAuthError } from '../../src/oauth/errors.ts';
import { parseScope } from '../../src/oauth/scopes.ts';

test('a new grant naming no scope gets read and write; ssf only when asked for', () => {
  assert.deepEqual(parseScope(undefined), ['read', 'write']);
  assert.deepEqual(parseScope('  '), ['read', 'write']);
  assert.deepEqual(parseScope('scim'), ['read', 'write']);
  assert.deepEqual(parseScope('ssf'), ['ssf']);
  assert.deepEqual(parseScope('ssf read'), ['read', 'ssf']);
  assert.deepEqual(parseScope('scim ssf'), ['read', 'write', 'ssf']);
});

test('a refresh keeps what was granted and cannot widen it', () => {
  assert.deepEqual(parseScope(undefined, ['ssf']), ['ssf']);
  assert.deepEqual(parseScope(undefined, ['read', 'write', 'ssf']), ['read', 'write', 'ssf']);
  assert.throws(() => parseScope('ssf', ['read', 'write']), (e: unknown) => e instanceof OAuthError && /not granted/.test(e.message));
  assert.throws(() => parseScope('admin'), (e: unknown) => e instanceof OAuthError && /Unknown scope/.test(e.message));
});
