/**
 * Client secrets as the token endpoint checks them (RFC 6749 2.3.1; DESIGN.md section 11): a
 * client holds up to five live secrets, and any of them authenticates it. The presented secret's
 * SHA-256 is compared in constant time against every slot, the unused ones against stand-ins,
 * so the time taken says nothing about how many secrets a client has, which one matched, or
 * whether the client exists. A secret that is expired or revoked fails exactly as a wrong one.
 *
 * A secret's "last used" is written at most once a minute per secret and instance, by one
 * conditional UPDATE beside the request, never inside the grant's transaction.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.ts';
import { sha256 } from '../ids.ts';
import type { ClientRow } from '../storage/repos/clients.ts';
import type { ClientSecretRow } from '../storage/repos/client-secrets.ts';
import { touchSecret } from '../storage/repos/client-secrets.ts';
import type { Executor } from '../storage/types.ts';

/** How many secrets of one client may be live (neither revoked nor expired) at once. */
export const MAX_LIVE_SECRETS = 5;
/** A new secret's lifetime when none is asked for, and the longest one allowed, in days. */
export const DEFAULT_SECRET_DAYS = 730;
export const MAX_SECRET_DAYS = 1095;
/** How often one secret's last use is written, at most. */
const LAST_USED_EVERY_MS = 60_000;

/** A client with its unrevoked secrets, as the client cache keeps it. */
export interface ClientWithSecrets {
  readonly client: ClientRow;
  readonly secrets: readonly ClientSecretRow[];
}

/** The authenticated client and the secret that proved it. */
export interface SecretAuthentication {
  readonly client: ClientRow;
  readonly secret: ClientSecretRow;
}

const equalHashes = (a: string, b: string): boolean => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** Whether a secret authenticates at `now`. */
export const isLiveSecret = (secret: ClientSecretRow, now: string): boolean => secret.revoked_at === null && secret.expires_at > now;

/**
 * The secret of `found` whose hash is the presented one and that is live at `now`; undefined
 * otherwise. Always MAX_LIVE_SECRETS comparisons (more only for a client holding more unrevoked
 * but expired secrets), whichever secret matches and whether the client exists.
 */
export function matchSecret(found: ClientWithSecrets | undefined, clientId: string, presented: string, now: string): SecretAuthentication | undefined {
  const hash = sha256(presented);
  const secrets = found?.secrets ?? [];
  let matched: ClientSecretRow | undefined;
  const slots = Math.max(MAX_LIVE_SECRETS, secrets.length);
  for (let i = 0; i < slots; i++) {
    const secret = secrets[i];
    const equal = equalHashes(hash, secret?.secret_hash ?? sha256(`${clientId}:unused:${i}`));
    if (equal && secret !== undefined && matched === undefined) matched = secret;
  }
  if (!found || !matched || !isLiveSecret(matched, now)) return undefined;
  return { client: found.client, secret: matched };
}

/**
 * Remembers when this instance last wrote each secret's use, so a busy client costs one write
 * a minute. Bounded: entries older than a minute are forgotten when it grows.
 */
export class SecretUse {
  readonly #written = new Map<string, number>();
  readonly #maxEntries: number;

  constructor(maxEntries = 10_000) {
    this.#maxEntries = maxEntries;
  }

  /** Records that `secret` authenticated a request now, writing it when a minute has passed. */
  async used(ex: Executor, clock: Clock, secret: ClientSecretRow): Promise<void> {
    const now = clock.now().getTime();
    const last = Math.max(this.#written.get(secret.id) ?? 0, secret.last_used_at === null ? 0 : Date.parse(secret.last_used_at));
    if (now - last < LAST_USED_EVERY_MS) return;
    if (this.#written.size >= this.#maxEntries) {
      for (const [id, at] of this.#written) if (now - at >= LAST_USED_EVERY_MS) this.#written.delete(id);
      if (this.#written.size >= this.#maxEntries) this.#written.clear();
    }
    this.#written.set(secret.id, now);
    await touchSecret(ex, secret.id, new Date(now).toISOString(), new Date(now - LAST_USED_EVERY_MS).toISOString());
  }
}
