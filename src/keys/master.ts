/**
 * The master key (DESIGN.md section 8: "private keys encrypted under a key
 * derived from the instance secret"): every key Rollcall generates is stored encrypted under a
 * key derived from it, and the list-cursor key is derived from it. It never enters the database.
 *
 * Where it comes from, in order:
 * 1. SECRET_KEY (config.ts), the same on every instance: HKDF-SHA-256 of its value.
 * 2. An SQLite file without SECRET_KEY: a key file beside the database (`<file>.key`, 32 random
 *    bytes, created once with mode 0600). Back it up with the database: without it the stored
 *    keys cannot be read, and the server refuses to start saying so (store.ts).
 * 3. In-memory SQLite without SECRET_KEY: a random key for this process (the database dies with
 *    it).
 * PostgreSQL without SECRET_KEY refuses to start, with one line naming the setting: instances
 * sharing a database must share the key, and a database server is no place for a key file.
 */
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { hkdfSync, randomBytes } from 'node:crypto';
import { ConfigError } from '../config.ts';

export interface MasterKeySource {
  /** SECRET_KEY, when set. */
  readonly secretKey: string | undefined;
  /** What the database is: an SQLite file (its path), in-memory SQLite, or PostgreSQL. */
  readonly database: { readonly engine: 'sqlite' | 'postgres'; readonly sqlitePath: string | undefined };
}

/** A 32-byte key derived from the master key for one use (HKDF-SHA-256, RFC 5869). */
export function deriveKey(master: Buffer, use: string): Buffer {
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `rollcall ${use}`, 32));
}

const fromSecret = (secret: string | Buffer): Buffer => Buffer.from(hkdfSync('sha256', secret, 'rollcall', 'rollcall master key v1', 32));

/** The key file beside an SQLite database, created on first use (mode 0600, never overwritten). */
function keyFile(path: string): Buffer {
  const file = `${path}.key`;
  try {
    const fd = openSync(file, 'wx', 0o600);
    try {
      writeSync(fd, `${randomBytes(32).toString('base64url')}\n`);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const raw = readFileSync(file, 'utf8').trim();
  if (!/^[A-Za-z0-9_-]{43}$/.test(raw)) throw new ConfigError('SECRET_KEY', `the key file ${file} is not a Rollcall key (43 base64url characters); restore it from a backup or set SECRET_KEY`);
  return Buffer.from(raw, 'base64url');
}

export function masterKey(source: MasterKeySource): Buffer {
  if (source.secretKey !== undefined) return fromSecret(source.secretKey);
  if (source.database.engine === 'postgres') {
    throw new ConfigError('SECRET_KEY', 'required with PostgreSQL (the same value on every instance, at least 32 characters, e.g. from `openssl rand -base64 32`)');
  }
  if (source.database.sqlitePath !== undefined) return fromSecret(keyFile(source.database.sqlitePath));
  return fromSecret(randomBytes(32));
}
