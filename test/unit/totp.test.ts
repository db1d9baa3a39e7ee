/**
 * RFC 6238 Appendix B's test vectors (the SHA-1, SHA-256 and SHA-512 seeds, 8 digits), RFC 4226
 * Appendix D's HOTP values, RFC 4648's base32 vectors, and the ±1 step window of a 6-digit code.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { base32Encode, hotp, matchingSteps, otpauthUri, timeStep, totpAt } from '../../src/oauth/totp.ts';

const SEED = {
  sha1: Buffer.from('12345678901234567890'),
  sha256: Buffer.from('12345678901234567890123456789012'),
  sha512: Buffer.from('1234567890123456789012345678901234567890123456789012345678901234'),
};

// RFC 6238 Appendix B: time (s), then the TOTP of each algorithm.
const VECTORS: [number, string, string, string][] = [
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
];

describe('TOTP (RFC 6238)', () => {
  it('RFC 6238 Appendix B: every vector, SHA-1, SHA-256 and SHA-512', () => {
    for (const [seconds, sha1, sha256, sha512] of VECTORS) {
      assert.equal(totpAt(SEED.sha1, seconds * 1000, 8, 'sha1'), sha1, `sha1 at ${seconds}`);
      assert.equal(totpAt(SEED.sha256, seconds * 1000, 8, 'sha256'), sha256, `sha256 at ${seconds}`);
      assert.equal(totpAt(SEED.sha512, seconds * 1000, 8, 'sha512'), sha512, `sha512 at ${seconds}`);
    }
  });

  it('RFC 4226 Appendix D: HOTP values of counters 0 to 9', () => {
    const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
    expected.forEach((code, counter) => assert.equal(hotp(SEED.sha1, counter), code));
  });

  it('RFC 4648 section 10: base32 vectors (without padding)', () => {
    const cases: [string, string][] = [['', ''], ['f', 'MY'], ['fo', 'MZXQ'], ['foo', 'MZXW6'], ['foob', 'MZXW6YQ'], ['fooba', 'MZXW6YTB'], ['foobar', 'MZXW6YTBOI']];
    for (const [plain, encoded] of cases) assert.equal(base32Encode(Buffer.from(plain)), encoded);
  });

  it('a 6-digit code matches its own step and one step either side, not two', () => {
    const now = 1_700_000_000_000;
    const step = timeStep(now);
    const code = (s: number) => hotp(SEED.sha1, s);
    assert.deepEqual(matchingSteps(SEED.sha1, code(step), now), [step]);
    assert.deepEqual(matchingSteps(SEED.sha1, code(step - 1), now), [step - 1]);
    assert.deepEqual(matchingSteps(SEED.sha1, code(step + 1), now), [step + 1]);
    assert.deepEqual(matchingSteps(SEED.sha1, code(step - 2), now), []);
    assert.deepEqual(matchingSteps(SEED.sha1, '12345', now), []);
    assert.deepEqual(matchingSteps(SEED.sha1, 'abcdef', now), []);
  });

  it('the otpauth URI names the issuer, the account and the base32 secret', () => {
    const uri = new URL(otpauthUri('Rollcall acme', 'admin@acme.example', Buffer.from('foobar')));
    assert.equal(uri.protocol, 'otpauth:');
    assert.equal(uri.searchParams.get('secret'), 'MZXW6YTBOI');
    assert.equal(uri.searchParams.get('issuer'), 'Rollcall acme');
    assert.equal(uri.searchParams.get('digits'), '6');
    assert.equal(uri.host, 'totp');
    assert.equal(decodeURIComponent(uri.pathname), '/Rollcall acme:admin@acme.example');
  });
});
