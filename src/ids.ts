/**
 * Identifiers and secrets: resource ids are 20 characters of [A-Z0-9] from the CSPRNG
 * (the contract's shape); tokens are 256 random bits, base64url, with a recognisable prefix.
 */
import { createHash, randomBytes, randomFillSync } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** Random bytes drawn a pool at a time: one call into the CSPRNG per ~200 ids, not one per id. */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

export function newId(): string {
  // 36 does not divide 256: reject bytes >= 252 (7 * 36) so every character is equally likely.
  let out = '';
  while (out.length < 20) {
    if (poolAt === pool.length) {
      randomFillSync(pool);
      poolAt = 0;
    }
    const b = pool[poolAt++]!;
    if (b < 252) out += ALPHABET[b % 36];
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

/**
 * The id of the same alphabet and length just after `id` (base 36, plus one): what follows a
 * time-ordered id that a later one must sort after, when the clock has not moved past it.
 */
export function nextOrderedId(id: string): string {
  const chars = id.split('');
  for (let i = chars.length - 1; i >= 0; i--) {
    const at = ALPHABET_ORDER.indexOf(chars[i]!);
    if (at < ALPHABET_ORDER.length - 1) {
      chars[i] = ALPHABET_ORDER[at + 1]!;
      return chars.join('');
    }
    chars[i] = ALPHABET_ORDER[0]!;
  }
  return `${ALPHABET_ORDER[ALPHABET_ORDER.length - 1]}${chars.join('')}`;
}

/** The id alphabet in its sort order (digits before letters, as text compares them). */
const ALPHABET_ORDER = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

export function newToken(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
