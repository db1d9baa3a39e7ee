/**
 * A team's catalog of roles and entitlements (migration 023): entitlement types and entries, read
 * whole (a catalog is bounded by the team's `catalog.entries` budget) and written row by row in
 * the caller's transaction. Every write bumps the team's schema version (extensions.ts
 * `bumpSchemaVersion`), which the caller does once per change with `catalogChanged`.
 */
import { hooksIfAny } from '../statements.ts';
import { bumpSchemaVersion } from './extensions.ts';
import type { CatalogEntriesTable, CatalogTypesTable, Executor } from '../types.ts';

export type CatalogTypeRow = CatalogTypesTable;
export type CatalogEntryRow = CatalogEntriesTable;
export type GrantKind = CatalogEntriesTable['kind'];

export interface CatalogRows {
  readonly schemas: 'okta' | 'ietf';
  readonly types: CatalogTypeRow[];
  readonly entries: CatalogEntryRow[];
}

/** The whole catalog of a team: types by name, entries by kind, type and value. */
export async function catalogRows(ex: Executor, teamId: string): Promise<CatalogRows> {
  const [team, types, entries] = await Promise.all([
    ex.selectFrom('teams').select('catalog_schemas').where('id', '=', teamId).executeTakeFirst(),
    ex.selectFrom('catalog_types').selectAll().where('team_id', '=', teamId).orderBy('name_key').execute(),
    ex.selectFrom('catalog_entries').selectAll().where('team_id', '=', teamId).orderBy('kind').orderBy('type_key').orderBy('value').execute(),
  ]);
  return { schemas: team?.catalog_schemas ?? 'okta', types, entries };
}

export async function upsertCatalogType(ex: Executor, row: CatalogTypeRow): Promise<void> {
  await ex
    .insertInto('catalog_types')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['team_id', 'name_key']).doUpdateSet({
        name: row.name,
        endpoint: row.endpoint,
        endpoint_key: row.endpoint_key,
        description: row.description,
        required: row.required,
        multi_valued: row.multi_valued,
        updated_at: row.updated_at,
      }),
    )
    .execute();
}

/** Removes a type and its entries; whether it existed. */
export async function deleteCatalogType(ex: Executor, teamId: string, nameKey: string): Promise<boolean> {
  await ex.deleteFrom('catalog_entries').where('team_id', '=', teamId).where('kind', '=', 'entitlement').where('type_key', '=', nameKey).execute();
  const result = await ex.deleteFrom('catalog_types').where('team_id', '=', teamId).where('name_key', '=', nameKey).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function upsertCatalogEntry(ex: Executor, row: CatalogEntryRow): Promise<void> {
  await ex
    .insertInto('catalog_entries')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['team_id', 'kind', 'value']).doUpdateSet({ type_key: row.type_key, display_name: row.display_name, description: row.description, updated_at: row.updated_at }),
    )
    .execute();
}

/** Removes an entry; whether it existed. */
export async function deleteCatalogEntry(ex: Executor, teamId: string, kind: GrantKind, value: string): Promise<boolean> {
  const result = await ex.deleteFrom('catalog_entries').where('team_id', '=', teamId).where('kind', '=', kind).where('value', '=', value).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function setCatalogSchemas(ex: Executor, teamId: string, schemas: 'okta' | 'ietf'): Promise<void> {
  await ex.updateTable('teams').set({ catalog_schemas: schemas }).where('id', '=', teamId).execute();
}

/** The team's schema version (a catalog or mapping event's `version`, read after the change's bump). */
export async function schemaVersionOf(ex: Executor, teamId: string): Promise<number> {
  const row = await ex.selectFrom('teams').select('schema_version').where('id', '=', teamId).executeTakeFirst();
  return Number(row?.schema_version ?? 0);
}

/** Once per change of the catalog, in its transaction: every instance reloads the team's types. */
export const catalogChanged = (ex: Executor, teamId: string): Promise<void> => bumpSchemaVersion(ex, teamId);

/**
 * A mapping change's version (repos/mappings.ts's rows are not the catalog, but its events are the
 * Role's or Entitlement's): the schema version bumped (`catalogChanged`) and read back, so each
 * mapping event carries a version no other state of the resource had.
 */
export async function nextSchemaVersion(ex: Executor, teamId: string): Promise<number> {
  await catalogChanged(ex, teamId);
  return schemaVersionOf(ex, teamId);
}

/** How many values one statement of the locking reads below names. */
const LOCK_CHUNK = 500;

/**
 * Which of the entries `values` of `kind` the team's catalog holds now, read in the caller's
 * transaction through the entries' key, each row found share-locked until the transaction ends
 * where the engine locks rows (PostgreSQL `FOR SHARE`): a user write assigning an entry sees it
 * there or is refused, and a concurrent removal of it (which locks it first,
 * `lockCatalogEntries`) waits for the write, or is waited for and leaves nothing to find.
 */
export async function catalogEntriesPresent(ex: Executor, teamId: string, kind: GrantKind, values: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < values.length; i += LOCK_CHUNK) {
    let query = ex.selectFrom('catalog_entries').select('value').where('team_id', '=', teamId).where('kind', '=', kind).where('value', 'in', values.slice(i, i + LOCK_CHUNK));
    if (hooksIfAny(ex)?.rowLocks) query = query.forShare();
    for (const r of await query.execute()) found.add(r.value);
  }
  return found;
}

/**
 * Locks the entries `values` of `kind` (PostgreSQL `FOR UPDATE`; nothing on SQLite, whose
 * transactions run one at a time) before a catalog change counts their holders and removes
 * them: a user write assigning one of them (`catalogEntriesPresent`) either committed before,
 * and is counted, or waits and then finds the entry gone.
 */
export async function lockCatalogEntries(ex: Executor, teamId: string, kind: GrantKind, values: readonly string[]): Promise<void> {
  if (!hooksIfAny(ex)?.rowLocks) return;
  for (let i = 0; i < values.length; i += LOCK_CHUNK) {
    await ex.selectFrom('catalog_entries').select('value').where('team_id', '=', teamId).where('kind', '=', kind).where('value', 'in', values.slice(i, i + LOCK_CHUNK)).forUpdate().execute();
  }
}
