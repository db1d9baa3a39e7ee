/**
 * The rendered `/Schemas` and `/ResourceTypes` lists of each team's schema version, so that a team
 * with many extensions does not make every GET of /Schemas render its JSON again. A
 * team's resource types are one object per schema version (TeamTypesCache), so the rendered
 * bytes are kept per that object: a schema change makes a new version, hence new types, hence a
 * new rendering; requests without a token share the core types' one. Kept per app, bounded in
 * bytes, the oldest rendering dropped first; each document is itself bounded by the team's
 * `discovery.bytes` budget, checked when a schema is registered (schema-budgets.ts).
 */
import { resourceTypesList, schemasList } from './discovery.ts';
import type { TeamTypes } from './schema/extensions.ts';

type Kind = 'schemas' | 'resourceTypes';

const RENDER: Record<Kind, (baseUrl: string, types: TeamTypes) => Record<string, unknown>> = {
  schemas: schemasList,
  resourceTypes: resourceTypesList,
};

export const DEFAULT_DISCOVERY_CACHE_BYTES = 64 * 1024 * 1024;

export class DiscoveryCache {
  readonly #maxBytes: number;
  readonly #entries = new Map<TeamTypes, Partial<Record<Kind, Buffer>>>();
  #bytes = 0;
  #renders = 0;

  constructor(maxBytes = DEFAULT_DISCOVERY_CACHE_BYTES) {
    this.#maxBytes = maxBytes;
  }

  /** How many documents this cache has rendered (each miss renders one). */
  get renders(): number {
    return this.#renders;
  }

  /** The `/Schemas` list of `types`, as bytes (one app has one base URL). */
  schemas(types: TeamTypes, baseUrl: string): Buffer {
    return this.#get('schemas', types, baseUrl);
  }

  /** The `/ResourceTypes` list of `types`, as bytes. */
  resourceTypes(types: TeamTypes, baseUrl: string): Buffer {
    return this.#get('resourceTypes', types, baseUrl);
  }

  #get(kind: Kind, types: TeamTypes, baseUrl: string): Buffer {
    const entry = this.#entries.get(types);
    const hit = entry?.[kind];
    if (hit) {
      // Most recently used last: the oldest is dropped first.
      this.#entries.delete(types);
      this.#entries.set(types, entry!);
      return hit;
    }
    this.#renders++;
    const bytes = Buffer.from(JSON.stringify(RENDER[kind](baseUrl, types)));
    const next = { ...entry, [kind]: bytes };
    this.#entries.delete(types);
    this.#entries.set(types, next);
    this.#bytes += bytes.length;
    for (const [key, old] of this.#entries) {
      if (this.#bytes <= this.#maxBytes || key === types) break;
      this.#bytes -= (old.schemas?.length ?? 0) + (old.resourceTypes?.length ?? 0);
      this.#entries.delete(key);
    }
    return bytes;
  }
}
