/**
 * Password hashing with scrypt from node:crypto (OWASP parameters: N=2^17, r=8, p=1), encoded
 * as `scrypt$N$r$p$salt$hash`. Verification is constant-time. No native build, no download.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import type { ScryptOptions } from 'node:crypto';

const N = 131072;
const R = 8;
const P = 1;
const KEYLEN = 32;

const derive = (password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    scrypt(password.normalize('NFC'), salt, KEYLEN, { ...options, maxmem: 256 * 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, { N, r: R, p: P });
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const parts = encoded.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, salt, hash] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * Sign-in passwords (issue 13 item 10; NIST SP 800-63B 3.1.1.2): at least 12 characters, no
 * composition rules, and anything up to 1,024 characters (far beyond the 64 NIST asks to allow).
 * Characters are Unicode code points after NFC, as 800-63B counts them.
 */
export const SIGN_IN_PASSWORD_MIN = 12;
export const SIGN_IN_PASSWORD_MAX = 1024;

/** Why `password` cannot be a sign-in password, or undefined when it can. */
export function signInPasswordProblem(password: string): string | undefined {
  const length = [...password.normalize('NFC')].length;
  if (length < SIGN_IN_PASSWORD_MIN) return `a password for a user who signs in (userType admin) needs at least ${SIGN_IN_PASSWORD_MIN} characters`;
  if (length > SIGN_IN_PASSWORD_MAX) return `a password for a user who signs in (userType admin) has at most ${SIGN_IN_PASSWORD_MAX} characters`;
  return undefined;
}
