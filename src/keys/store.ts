/**
 * The key store (DESIGN.md section 8): secrets that Rollcall generates, kept in
 * the `keys` table encrypted with AES-256-GCM (node:crypto) under a key derived from the master
 * key (master.ts), and rotated by `rollcall keys rotate`. A rotation makes a new current key and
 * gives the previous one an end (`not_after`): it still verifies until then (one session lifetime
 * for the cookie key), then it is refused and later deleted.
 *
 * Each app holds a KeyStore with the decrypted live keys, re-read from the database when older
 * than REFRESH_SECONDS (on the app's clock), so a rotation reaches every instance within that
 * delay; an instance that has not yet seen it keeps signing with the previous key, which every
 * instance still accepts. Purposes are named here: the cookie key and the events' ES256 signing key.
 * It owns no HTTP and no SQL.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { newId } from '../ids.ts';
import { deleteRetiredKeys, insertKey, liveKeys, retireKeys } from '../storage/repos/keys.ts';
import type { KeyRow } from '../storage/repos/keys.ts';
import type { Db, Executor } from '../storage/types.ts';
import { SESSION_TTL_SECONDS } from '../sessions.ts';
import { deriveKey } from './master.ts';
import { openWith, SealError, SecretBox, sealWith } from './sealed.ts';

/** The events' signing key: a P-256 private key (PKCS #8, DER) made by node:crypto, for ES256 (RFC 7518 3.4). */
const p256 = (): Buffer => generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'der', type: 'pkcs8' });

/** What each purpose's keys are for, how long a replaced key still verifies, and how one is made. */
export const KEY_PURPOSES = {
  /** Signs the pages' cookies (session id, CSRF secret): a replaced key lasts one session lifetime. */
  cookie: { windowSeconds: SESSION_TTL_SECONDS, make: (): Buffer => randomBytes(32) },
  /**
   * Signs the events' SETs (RFC 9967, ES256): a replaced key stays in /.well-known/jwks.json for
   * the feed's retention (the last event it signed can be replayed until then); `rotateKeys`
   * takes the configured retention instead of this default.
   */
  events: { windowSeconds: 30 * 86_400, make: p256 },
} as const;

export type KeyPurpose = keyof typeof KEY_PURPOSES;

/** How stale an instance's copy of the keys may get before it re-reads them. */
export const REFRESH_SECONDS = 30;

export class KeyStoreError extends Error {}

/** AES-256-GCM under the master key (sealed.ts), bound (as additional data) to the key's id and purpose. */
function seal(master: Buffer, row: Pick<KeyRow, 'id' | 'purpose'>, material: Buffer): string {
  return sealWith(deriveKey(master, 'key encryption'), `${row.id}:${row.purpose}`, material);
}

function unseal(master: Buffer, row: KeyRow): Buffer {
  try {
    return openWith(deriveKey(master, 'key encryption'), `${row.id}:${row.purpose}`, row.material);
  } catch (error) {
    if (error instanceof SealError && error.kind === 'format') throw new KeyStoreError(`key ${row.id} is not in a format this version reads`);
    throw new KeyStoreError(`key ${row.id} (${row.purpose}) cannot be decrypted: this instance's master key (SECRET_KEY or the key file) is not the one it was stored with`);
  }
}

async function newKey(ex: Executor, master: Buffer, purpose: KeyPurpose, createdAt: string): Promise<string> {
  const id = newId();
  await insertKey(ex, { id, purpose, created_at: createdAt, not_after: null, material: seal(master, { id, purpose }, KEY_PURPOSES[purpose].make()) });
  return id;
}

export interface Rotated {
  readonly purpose: KeyPurpose;
  /** The new current key. */
  readonly id: string;
  /** The keys it replaced, and until when they still verify. */
  readonly previous: readonly string[];
  readonly previousValidUntil: string;
}

/** Rotates every purpose's key in one transaction (`rollcall keys rotate`). */
export async function rotateKeys(db: Db, clock: Clock, master: Buffer, windows: Partial<Record<KeyPurpose, number>> = {}): Promise<Rotated[]> {
  return db.transaction().execute(async (trx) => {
    const now = clock.now();
    await deleteRetiredKeys(trx, now.toISOString());
    const rotated: Rotated[] = [];
    for (const purpose of Object.keys(KEY_PURPOSES) as KeyPurpose[]) {
      const validUntil = new Date(now.getTime() + (windows[purpose] ?? KEY_PURPOSES[purpose].windowSeconds) * 1000).toISOString();
      const previous = await retireKeys(trx, purpose, validUntil);
      const id = await newKey(trx, master, purpose, now.toISOString());
      rotated.push({ purpose, id, previous, previousValidUntil: validUntil });
    }
    return rotated;
  });
}

export interface Live {
  readonly id: string;
  readonly secret: Buffer;
}

/** One instance's view of the live keys. */
export class KeyStore {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #master: Buffer;
  #keys = new Map<KeyPurpose, readonly Live[]>();
  #loadedAt = 0;
  #version = 0;

  private constructor(db: Db, clock: Clock, master: Buffer) {
    this.#db = db;
    this.#clock = clock;
    this.#master = master;
  }

  /** Loads the live keys, making a first key for a purpose that has none. */
  static async open(db: Db, clock: Clock, master: Buffer): Promise<KeyStore> {
    const store = new KeyStore(db, clock, master);
    for (const purpose of Object.keys(KEY_PURPOSES) as KeyPurpose[]) {
      const now = clock.now().toISOString();
      // Two instances starting at once may both make one; both then verify, the newer signs.
      if ((await liveKeys(db, purpose, now)).length === 0) await newKey(db, master, purpose, now);
    }
    await store.reload();
    return store;
  }

  /** Re-reads the keys (a rotation by another process shows up here). */
  async reload(): Promise<void> {
    const now = this.#clock.now();
    const next = new Map<KeyPurpose, readonly Live[]>();
    for (const purpose of Object.keys(KEY_PURPOSES) as KeyPurpose[]) {
      const rows = await liveKeys(this.#db, purpose, now.toISOString());
      next.set(purpose, rows.map((row) => ({ id: row.id, secret: unseal(this.#master, row) })));
    }
    this.#keys = next;
    this.#loadedAt = now.getTime();
    this.#version += 1;
  }

  /**
   * Re-reads the keys if the copy is older than REFRESH_SECONDS: a rotation elsewhere is seen,
   * and a replaced key is dropped, at most that long after it happens.
   */
  async refreshIfStale(): Promise<void> {
    if (this.#clock.now().getTime() - this.#loadedAt >= REFRESH_SECONDS * 1000) await this.reload();
  }

  /**
   * A box for secrets of `use` sealed under this instance's master key (webhook signing
   * secrets): the database holds them only sealed.
   */
  box(use: string): SecretBox {
    return new SecretBox(this.#master, use);
  }

  /** Changes whenever the keys were re-read (so users may cache what they build from them). */
  get version(): number {
    return this.#version;
  }

  /** The live keys of `purpose` with their ids (a JWS `kid`): the first signs, all verify. */
  keys(purpose: KeyPurpose): readonly Live[] {
    const live = this.#keys.get(purpose) ?? [];
    if (live.length === 0) throw new KeyStoreError(`no ${purpose} key is live; run rollcall keys rotate`);
    return live;
  }

  /**
   * The live keys of `purpose` read from the database now, not this instance's copy: what a
   * verifier must be offered (the events' JWKS), since another instance may sign with a key this
   * one has not loaded yet (two instances starting at once each make one; a rotation elsewhere).
   */
  async readLive(purpose: KeyPurpose): Promise<readonly Live[]> {
    const rows = await liveKeys(this.#db, purpose, this.#clock.now().toISOString());
    return rows.map((row) => ({ id: row.id, secret: unseal(this.#master, row) }));
  }

  /** The secrets of `purpose`: the first signs, all verify. */
  secrets(purpose: KeyPurpose): readonly Buffer[] {
    const live = this.#keys.get(purpose) ?? [];
    if (live.length === 0) throw new KeyStoreError(`no ${purpose} key is live; run rollcall keys rotate`);
    return live.map((k) => k.secret);
  }
}
