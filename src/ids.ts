/**
 * Identifiers and secrets: resource ids are 20 characters of [A-Z0-9] from crypto.randomBytes
 * (the contract's shape); tokens are 256 random bits, base64url, with a recognisable prefix.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/**
 * The random bytes of a version 4 UUID's hex form: all but byte 6 (its version nibble) and byte 8
 * (its variant bits), 14 uniform bytes a UUID.
 */
const UUID_RANDOM_BYTES = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34].filter((at) => at !== 14 && at !== 19);

export function newId(): string {
  // Random bytes from randomUUID, which draws them from a pool Node refills a few kilobytes at a
  // time (randomBytes per id cost a system call per id, on every request's log row).
  // 36 does not divide 256: reject bytes >= 252 (7 * 36) so every character is equally likely.
  let out = '';
  while (out.length < 20) {
    const uuid = randomUUID();
    for (const at of UUID_RANDOM_BYTES) {
      const b = parseInt(uuid.slice(at, at + 2), 16);
      if (b < 252 && out.length < 20) out += ALPHABET[b % 36];
    }
  }
  return out;
}

/**
 * An id of the same shape whose first 9 characters are `ms` in base 36: ids made later sort later,
 * so rows keyed by them are appended to their index instead of landing on a random page of it
 * (the request log writes one row per request). The other 11 characters are newId's.
 */
export function timeOrderedId(ms: number): string {
  return Math.max(0, Math.floor(ms)).toString(36).toUpperCase().padStart(9, '0').slice(-9) + newId().slice(0, 11);
}

export function newToken(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
