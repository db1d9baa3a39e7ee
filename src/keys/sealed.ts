/**
 * Secrets Rollcall must read back (not only compare), sealed at rest: AES-256-GCM (node:crypto)
 * under a key derived from the master key for one use (master.ts `deriveKey`), bound as
 * additional data to what the secret belongs to, so a sealed value moved to another row does not
 * open. The key store seals its generated keys this way (store.ts); webhook signing secrets are
 * sealed with their own derived key (events/webhook-secrets.ts). Format: `v1.<iv>.<tag>.<sealed>`,
 * base64url. It owns no SQL.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deriveKey } from './master.ts';

const FORMAT = 'v1';
/** GCM's full tag. Pinned on opening: GCM checks only the bytes it is given, so a shorter tag would be a weaker check. */
const TAG_BYTES = 16;

export class SealError extends Error {
  /** `format`: not something this version sealed; `key`: another master key, or another context. */
  readonly kind: 'format' | 'key';
  constructor(kind: 'format' | 'key', message: string) {
    super(message);
    this.kind = kind;
  }
}

/** `material` sealed under `key` (32 bytes), bound to `context`. */
export function sealWith(key: Buffer, context: string, material: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const sealed = Buffer.concat([cipher.update(material), cipher.final()]);
  return [FORMAT, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), sealed.toString('base64url')].join('.');
}

/** What `sealWith` sealed, or a SealError: another format, another key, or another context. */
export function openWith(key: Buffer, context: string, text: string): Buffer {
  const [format, iv, tag, sealed] = text.split('.');
  if (format !== FORMAT || iv === undefined || tag === undefined || sealed === undefined) throw new SealError('format', 'not in a format this version reads');
  const authTag = Buffer.from(tag, 'base64url');
  if (authTag.length !== TAG_BYTES) throw new SealError('format', `not in a format this version reads (the tag must be ${TAG_BYTES} bytes)`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(authTag);
    return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]);
  } catch {
    throw new SealError('key', 'cannot be decrypted with this master key');
  }
}

/** Seals and opens the secrets of one use under the key derived for it (derived once). */
export class SecretBox {
  readonly #key: Buffer;

  constructor(master: Buffer, use: string) {
    this.#key = deriveKey(master, use);
  }

  seal(context: string, material: Buffer): string {
    return sealWith(this.#key, context, material);
  }

  open(context: string, text: string): Buffer {
    return openWith(this.#key, context, text);
  }
}
