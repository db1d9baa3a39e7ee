/**
 * OAuth clients as the token endpoint authenticates them (RFC 6749 2.3.1), kept per instance for
 * a short time so that a token request does not read its client's row every time.
 * The row is kept with its unrevoked secrets (their stored SHA-256); the presented secret is
 * still checked on every request (client-secrets.ts). Deleting a client, changing it, or adding
 * or revoking one of its secrets is announced by
 * storage (revocations.ts) and drops the entry at once, on this instance when the change commits
 * and on the others through PostgreSQL's LISTEN/NOTIFY; while those notices may be missed (the
 * LISTEN connection is down) nothing is served from memory. Unknown ids are never kept.
 */
import type { Clock } from '../clock.ts';
import type { Storage } from '../storage/connect.ts';
import { clientById } from '../storage/repos/clients.ts';
import type { ClientRow } from '../storage/repos/clients.ts';
import { unrevokedSecrets } from '../storage/repos/client-secrets.ts';
import type { ClientWithSecrets } from './client-secrets.ts';
import { SecretUse } from './client-secrets.ts';
import type { Revoked } from '../storage/revocations.ts';

export interface ClientCacheSettings {
  /** How long a client row is served from memory (0: never). */
  readonly ttlSeconds: number;
  readonly maxEntries: number;
}

export class ClientCache {
  readonly #storage: Storage;
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #entries = new Map<string, { readonly found: ClientWithSecrets; readonly until: number }>();
  /** When this instance last wrote each secret's use (client-secrets.ts). */
  readonly secretUse = new SecretUse();
  /** Bumped by every notice: a read that began under an older generation is not kept. */
  #generation = 0;
  readonly #unsubscribe: () => void;

  constructor(storage: Storage, clock: Clock, settings: ClientCacheSettings) {
    this.#storage = storage;
    this.#clock = clock;
    this.#ttlMs = Math.max(0, settings.ttlSeconds) * 1000;
    this.#maxEntries = Math.max(1, settings.maxEntries);
    this.#unsubscribe = this.#ttlMs > 0 ? storage.revocations.subscribe((revoked) => this.#revoked(revoked)) : () => {};
  }

  /** The client with this id, or undefined. */
  async byId(id: string): Promise<ClientRow | undefined> {
    return (await this.withSecrets(id))?.client;
  }

  /** The client with this id and its unrevoked secrets (expired ones included), or undefined. */
  async withSecrets(id: string): Promise<ClientWithSecrets | undefined> {
    const now = this.#clock.now().getTime();
    const caching = this.#ttlMs > 0 && this.#storage.revocations.live;
    if (caching) {
      const hit = this.#entries.get(id);
      if (hit && now < hit.until) return hit.found;
      if (hit) this.#entries.delete(id);
    }
    const generation = this.#generation;
    const client = await clientById(this.#storage.db, id);
    const found = client ? { client, secrets: await unrevokedSecrets(this.#storage.db, id) } : undefined;
    if (found && caching && generation === this.#generation && this.#storage.revocations.live) {
      if (this.#entries.size >= this.#maxEntries) {
        const oldest = this.#entries.keys().next();
        if (!oldest.done) this.#entries.delete(oldest.value);
      }
      this.#entries.set(id, { found, until: now + this.#ttlMs });
    }
    return found;
  }

  close(): void {
    this.#unsubscribe();
    this.#entries.clear();
  }

  #revoked(revoked: Revoked): void {
    this.#generation++;
    if (revoked.kind === 'all') this.#entries.clear();
    else if (revoked.kind === 'client') this.#entries.delete(revoked.id);
  }
}
