/**
 * OAuth clients as the token endpoint authenticates them (RFC 6749 2.3.1), kept per instance for
 * a short time so that a token request does not read its client's row every time.
 * Only the row is kept (its secret as the stored SHA-256); the presented secret is still checked
 * on every request (clients.ts). Deleting a client or replacing its secret is announced by
 * storage (revocations.ts) and drops the entry at once, on this instance when the change commits
 * and on the others through PostgreSQL's LISTEN/NOTIFY; while those notices may be missed (the
 * LISTEN connection is down) nothing is served from memory. Unknown ids are never kept.
 */
import type { Clock } from '../clock.ts';
import type { Storage } from '../storage/connect.ts';
import { clientById } from '../storage/repos/clients.ts';
import type { ClientRow } from '../storage/repos/clients.ts';
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
  readonly #entries = new Map<string, { readonly row: ClientRow; readonly until: number }>();
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
    const now = this.#clock.now().getTime();
    const caching = this.#ttlMs > 0 && this.#storage.revocations.live;
    if (caching) {
      const hit = this.#entries.get(id);
      if (hit && now < hit.until) return hit.row;
      if (hit) this.#entries.delete(id);
    }
    const generation = this.#generation;
    const row = await clientById(this.#storage.db, id);
    if (row && caching && generation === this.#generation && this.#storage.revocations.live) {
      if (this.#entries.size >= this.#maxEntries) {
        const oldest = this.#entries.keys().next();
        if (!oldest.done) this.#entries.delete(oldest.value);
      }
      this.#entries.set(id, { row, until: now + this.#ttlMs });
    }
    return row;
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
