/**
 * RFC 4648 base32 decoding, the tests' own: an authenticator app's secret as the console's
 * Security page shows it, turned back into the key the tests compute TOTP codes with. Written
 * apart from src/oauth/totp.ts so that a wrong encoder there cannot agree with itself here.
 */
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Decode(text: string): Buffer {
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const ch of text) {
    value = (value << 5) | BASE32.indexOf(ch);
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}
