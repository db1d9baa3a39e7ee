/**
 * Identifiers and secrets: resource ids are 20 characters of [A-Z0-9] from crypto.randomBytes
 * (the contract's shape); tokens are 256 random bits, base64url, with a recognisable prefix.
 */
import { createHash, randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export function newId(): string {
  // 36 does not divide 256: reject bytes >= 252 (7 * 36) so every character is equally likely.
  let out = '';
  while (out.length < 20) {
    for (const b of randomBytes(32)) {
      if (b < 252 && out.length < 20) out += ALPHABET[b % 36];
    }
  }
  return out;
}

export function newToken(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export function sha256(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
