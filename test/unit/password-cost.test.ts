/**
 * The cost of a new password hash (src/oauth/passwords.ts): scrypt N = 2^17, r = 8, p = 1 as
 * served, read from a process without the suite's preload (test/support/preload.ts lowers N);
 * a hash made at any N verifies at that N, and a wrong password does not.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { it } from 'node:test';
import { hashPassword, SCRYPT_COST, verifyPassword } from '../../src/oauth/passwords.ts';

const PASSWORDS = join(import.meta.dirname, '../../src/oauth/passwords.ts');

it('a process without the preload hashes at N = 2^17, r = 8, p = 1', () => {
  const script = `const { hashPassword } = await import(${JSON.stringify(PASSWORDS)}); process.stdout.write(await hashPassword('p'));`;
  const encoded = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  assert.match(encoded, /^scrypt\$131072\$8\$1\$[\w-]{22}\$[\w-]{43}$/);
  assert.equal(encoded.split('$')[1], '131072');
});

it('a hash keeps its own cost: one made at another N verifies at it; a wrong password fails', async () => {
  const before = SCRYPT_COST.N;
  try {
    SCRYPT_COST.N = 2048;
    const encoded = await hashPassword('correct horse');
    assert.equal(encoded.split('$')[1], '2048');
    SCRYPT_COST.N = 4096;
    assert.equal(await verifyPassword('correct horse', encoded), true);
    assert.equal(await verifyPassword('correct hors', encoded), false);
  } finally {
    SCRYPT_COST.N = before;
  }
});
