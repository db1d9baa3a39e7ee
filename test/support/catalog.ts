/**
 * For tests that need a team with a catalog before the catalog's own operations are the subject:
 * writes roles, entitlement types and entitlements straight through the catalog repository, and
 * bumps the team's schema version as a catalog change does (so every app reloads the team's types).
 */
import type { Storage } from '../../src/storage/connect.ts';
import { catalogChanged, setCatalogSchemas, upsertCatalogEntry, upsertCatalogType } from '../../src/storage/repos/catalog.ts';

export interface SeedEntry {
  readonly value: string;
  readonly displayName?: string;
  readonly description?: string;
}

export interface SeedType {
  readonly name: string;
  readonly endpoint: string;
  readonly required?: boolean;
  readonly multiValued?: boolean;
  readonly description?: string;
  readonly entitlements?: readonly SeedEntry[];
}

export interface SeedCatalog {
  readonly schemas?: 'okta' | 'ietf';
  readonly roles?: readonly SeedEntry[];
  readonly types?: readonly SeedType[];
}

const AT = '2026-01-01T00:00:00.000Z';

export async function seedCatalog(storage: Storage, teamId: string, catalog: SeedCatalog): Promise<void> {
  await storage.db.transaction().execute(async (trx) => {
    if (catalog.schemas) await setCatalogSchemas(trx, teamId, catalog.schemas);
    for (const role of catalog.roles ?? []) {
      await upsertCatalogEntry(trx, { team_id: teamId, kind: 'role', type_key: '', value: role.value, display_name: role.displayName ?? role.value, description: role.description ?? null, created_at: AT, updated_at: AT });
    }
    for (const type of catalog.types ?? []) {
      await upsertCatalogType(trx, {
        team_id: teamId, name: type.name, name_key: type.name.toLowerCase(), endpoint: type.endpoint, endpoint_key: type.endpoint.toLowerCase(),
        description: type.description ?? null, required: type.required ? 1 : 0, multi_valued: type.multiValued === false ? 0 : 1, created_at: AT, updated_at: AT,
      });
      for (const e of type.entitlements ?? []) {
        await upsertCatalogEntry(trx, { team_id: teamId, kind: 'entitlement', type_key: type.name.toLowerCase(), value: e.value, display_name: e.displayName ?? e.value, description: e.description ?? null, created_at: AT, updated_at: AT });
      }
    }
    await catalogChanged(trx, teamId);
  });
}
