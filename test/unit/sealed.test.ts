/**
 * keys/sealed.ts: AES-256-GCM opening insists on the full 16-byte tag. GCM verifies only as many
 * tag bytes as it is given, so a value whose tag was cut to 4 bytes would otherwise open (and a
 * forger would need only 2^32 tries instead of 2^128).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { openWith, SealError, sealWith } from '../../src/keys/sealed.ts';

const key = randomBytes(32);

test('a sealed value opens with its own key and context', () => {
  const text = sealWith(key, 'ctx', Buffer.from('secret'));
  assert.equal(openWith(key, 'ctx', text).toString(), 'secret');
});

for (const length of [4, 12, 15]) {
  test(`a tag truncated to ${length} bytes is refused (SealError), though it is a prefix of the true tag`, () => {
    const [format, iv, tag, sealed] = sealWith(key, 'ctx', Buffer.from('secret')).split('.');
    const short = Buffer.from(tag!, 'base64url').subarray(0, length).toString('base64url');
    assert.throws(() => openWith(key, 'ctx', [format, iv, short, sealed].join('.')), SealError);
  });
}
