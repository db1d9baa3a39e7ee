/**
 * Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP) as authenticator apps compute
 * them: HMAC-SHA-1, 6 digits, 30-second steps from the Unix epoch, with node:crypto. Also the
 * base32 text (RFC 4648 section 6) apps take the secret in, and the otpauth:// URI of the
 * "Key Uri Format" every app reads. Pure functions: which step was used last is factors.ts's.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const TOTP_DIGITS = 6;
export const TOTP_PERIOD_SECONDS = 30;
/** Steps accepted either side of now, for a clock a little off or a code typed as it turned. */
export const TOTP_WINDOW = 1;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32, without padding (what authenticator apps are given). */
export function base32Encode(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** RFC 4226 5.3: the HOTP value of `counter` under `key`, `digits` long. */
export function hotp(key: Uint8Array, counter: number, digits = TOTP_DIGITS, algorithm: 'sha1' | 'sha256' | 'sha512' = 'sha1'): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac(algorithm, key).update(message).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const binary = ((mac[offset]! & 0x7f) << 24) | (mac[offset + 1]! << 16) | (mac[offset + 2]! << 8) | mac[offset + 3]!;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** RFC 6238 4.2: the time step of `ms` (Unix time in milliseconds). */
export const timeStep = (ms: number): number => Math.floor(ms / 1000 / TOTP_PERIOD_SECONDS);

/** The TOTP value at `ms`. */
export const totpAt = (key: Uint8Array, ms: number, digits = TOTP_DIGITS, algorithm: 'sha1' | 'sha256' | 'sha512' = 'sha1'): string =>
  hotp(key, timeStep(ms), digits, algorithm);

/**
 * The time steps within the window around `ms` whose code is `code`, latest first (normally one;
 * two only when two steps of the window share a code). Compared in constant time.
 */
export function matchingSteps(key: Uint8Array, code: string, ms: number): number[] {
  if (!/^[0-9]{6}$/.test(code)) return [];
  const now = timeStep(ms);
  const steps: number[] = [];
  for (let step = now + TOTP_WINDOW; step >= now - TOTP_WINDOW; step--) {
    if (timingSafeEqual(Buffer.from(hotp(key, step)), Buffer.from(code))) steps.push(step);
  }
  return steps;
}

/** The otpauth:// URI an authenticator app reads (the "Key Uri Format"): issuer, account, secret. */
export function otpauthUri(issuer: string, account: string, key: Uint8Array): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const params = new URLSearchParams({ secret: base32Encode(key), issuer, algorithm: 'SHA1', digits: String(TOTP_DIGITS), period: String(TOTP_PERIOD_SECONDS) });
  return `otpauth://totp/${label}?${params.toString()}`;
}
