/**
 * The operations on a team's schema extensions behind `rollcall schema ...` and the admin HTTP
 * API (`/v2/admin/Schemas`): register (add, or replace with a new definition under the
 * evolution rule of schema/extensions.ts), list, show, remove. And the per-app cache of each
 * team's resource types, rebuilt when the team's `schema_version` (read with the bearer token)
 * moved. It owns these rules; it writes no SQL (repos/extensions.ts) and parses no HTTP.
 *
 * Every change writes an audit row (`schema_added`, `schema_removed`) and is measured against
 * the team's budgets (schema-budgets.ts). The expression indexes of extension attributes (lower.ts
 * `indexedKeys`: `uniqueness: server` ones) are not built in the change's transaction: the
 * change commits, and the app's index builder (index-builder.ts), or the CLI after its change,
 * builds what is pending and drops what nobody wants any more, one index at a time. Until then
 * filters on the attribute answer the same rows without the index.
 */
import type { Actor } from '../audit/events.ts';
import { recordEvent } from '../audit/events.ts';
import type { Clock } from '../clock.ts';
import { iso } from '../clock.ts';
import type { Storage } from '../storage/connect.ts';
import type { Executor } from '../storage/types.ts';
import { pendingIndexes } from '../storage/repos/expression-indexes.ts';
import type { WantedIndex } from '../storage/repos/expression-indexes.ts';
import { catalogRows } from '../storage/repos/catalog.ts';
import type { CatalogEntryRow, CatalogRows } from '../storage/repos/catalog.ts';
import { hasCatalog } from './schema/catalog.ts';
import { withCatalog } from './assignments.ts';
import type { Catalog, CatalogEntry } from './schema/catalog.ts';
import { extensionByKey, extensionsOf, removeExtension, saveExtension } from '../storage/repos/extensions.ts';
import type { ExtensionRow } from '../storage/repos/extensions.ts';
import type { TeamRow } from '../storage/repos/teams.ts';
import { schemaDocument } from './discovery.ts';
import { badRequest, notFound } from './errors.ts';
import { checkEvolution, CORE_TYPES, readExtension, teamTypes } from './schema/extensions.ts';
import type { ExtensionDecl, TeamTypes } from './schema/extensions.ts';
import { indexedKeys } from './filter/lower.ts';
import { transact } from '../storage/statements.ts';
import { checkSchemaBudgets } from './schema-budgets.ts';
import type { StoredExtension } from './schema-budgets.ts';

export interface SchemaDeps {
  readonly storage: Storage;
  readonly clock: Clock;
  /** The public base URL (the size of the team's /Schemas document depends on it). */
  readonly baseUrl: string;
  /** Told after a change commits, so that the indexes it wants are built (index-builder.ts). */
  readonly indexes?: { kick(): void };
}

/** Who changes a team's schemas (the CLI, or an administrator's token through the admin API). */
export interface SchemaChange {
  readonly actor: Actor;
  readonly requestId?: string | null;
}

/** The audit event of a change to the team's schema extensions, in the change's transaction. */
const auditSchema = (deps: SchemaDeps, trx: Executor, team: TeamRow, change: SchemaChange, action: 'schema_added' | 'schema_removed', detail: Record<string, unknown>): Promise<void> =>
  recordEvent(trx, deps.clock, { teamId: team.id, actor: change.actor, requestId: change.requestId ?? null, action, resourceType: 'Schema', resourceId: null, detail });

/** The expression indexes the team's extension of `decl` wants (lower.ts indexedKeys). */
export const wantedIndexesOf = (teamId: string, decl: ExtensionDecl): WantedIndex[] => indexedKeys(decl.schema).map((key) => ({ teamId, key }));

const indexedNames = (decl: ExtensionDecl): string[] => decl.schema.attributes.filter((a) => indexedKeys({ ...decl.schema, attributes: [a] }).length > 0).map((a) => a.name);

/** A registered extension as `schema list` shows it. */
export interface ExtensionView {
  readonly id: string;
  readonly resourceType: 'User' | 'Group';
  readonly required: boolean;
  readonly attributes: number;
  /** Attributes with an expression index (`uniqueness: server`): fast `eq` filters. */
  readonly indexed: string[];
  /** Those of `indexed` whose index is not built yet (their filters answer, without it). */
  readonly pending: string[];
  readonly updated: string;
}

const storedOf = (row: ExtensionRow): StoredExtension => ({ decl: declOf(row), definition: row.definition });

export const tableOf = (decl: ExtensionDecl): 'users' | 'groups' => (decl.resourceType === 'User' ? 'users' : 'groups');

export const declOf = (row: ExtensionRow): ExtensionDecl => readExtension(row.resource_type, row.required === 1, JSON.parse(row.definition));

async function viewOf(ex: Executor, row: ExtensionRow): Promise<ExtensionView> {
  const decl = declOf(row);
  const wanted = wantedIndexesOf(row.team_id, decl);
  const pending = new Set(await pendingIndexes(ex, tableOf(decl), wanted));
  // indexedNames and indexedKeys list the same attributes in the same order.
  const indexed = indexedNames(decl);
  return { id: decl.schema.id, resourceType: decl.resourceType, required: decl.required, attributes: decl.schema.attributes.length, indexed, pending: indexed.filter((_, i) => pending.has(wanted[i]!)), updated: row.updated_at };
}

/** The team's catalog as its requests see it (schema/catalog.ts); undefined when it declared none. */
export function catalogOf(rows: CatalogRows): Catalog | undefined {
  const entry = (r: CatalogEntryRow): CatalogEntry => ({ value: r.value, displayName: r.display_name, ...(r.description !== null ? { description: r.description } : {}) });
  const catalog: Catalog = {
    schemas: rows.schemas,
    roles: rows.entries.filter((r) => r.kind === 'role').map(entry),
    types: rows.types.map((t) => ({
      name: t.name,
      endpoint: t.endpoint,
      ...(t.description !== null ? { description: t.description } : {}),
      required: t.required === 1,
      multiValued: t.multi_valued === 1,
      entitlements: rows.entries.filter((r) => r.kind === 'entitlement' && r.type_key === t.name_key).map(entry),
    })),
  };
  return hasCatalog(catalog) ? catalog : undefined;
}

/** The team's resource types (its extensions and its catalog), read from storage. */
export async function loadTeamTypes(ex: Executor, teamId: string): Promise<TeamTypes> {
  const [rows, catalogRowsOfTeam] = await Promise.all([extensionsOf(ex, teamId), catalogRows(ex, teamId)]);
  const types = rows.length === 0 ? CORE_TYPES : teamTypes(rows.map(declOf));
  const catalog = catalogOf(catalogRowsOfTeam);
  return catalog ? withCatalog(types, catalog) : types;
}

/** Each team's resource types, kept per app and rebuilt when the team's schema version moved. */
export class TeamTypesCache {
  readonly #entries = new Map<string, { readonly version: number; readonly types: TeamTypes }>();

  async typesOf(ex: Executor, team: TeamRow): Promise<TeamTypes> {
    const version = team.schema_version ?? 0;
    // A team that never declared an extension or a catalog has the core types: no query.
    if (version === 0) return CORE_TYPES;
    const hit = this.#entries.get(team.id);
    if (hit && hit.version === version) return hit.types;
    const types = await loadTeamTypes(ex, team.id);
    // Bounded: a server serves a limited number of teams, but never let it grow without end.
    if (this.#entries.size >= 10_000) this.#entries.clear();
    this.#entries.set(team.id, { version, types });
    return types;
  }
}

/**
 * Registers `schema` (RFC 7643 section 7) for the team's `resourceType`, or replaces the
 * definition of the extension with that id: attributes may be added, and left out (their values
 * stay stored, hidden, and come back if declared again); a type never changes. The id may not be
 * registered for the other resource type.
 */
export async function addSchema(deps: SchemaDeps, team: TeamRow, input: { resourceType: unknown; required?: unknown; schema: unknown }, change: SchemaChange): Promise<ExtensionView> {
  const decl = readExtension(input.resourceType, input.required, input.schema);
  const key = decl.schema.id.toLowerCase();
  const now = iso(deps.clock);
  const view = await transact(deps.storage.db, async (trx) => {
    const existing = await extensionByKey(trx, team.id, key);
    if (existing && existing.resource_type !== decl.resourceType) {
      throw badRequest('invalidValue', `${decl.schema.id} extends ${existing.resource_type}; it cannot extend ${decl.resourceType} too`);
    }
    const declared = checkEvolution(existing ? (JSON.parse(existing.declared) as Record<string, string>) : {}, decl.schema);
    const row: ExtensionRow = {
      team_id: team.id,
      schema_id: decl.schema.id,
      schema_key: key,
      resource_type: decl.resourceType,
      required: decl.required ? 1 : 0,
      definition: JSON.stringify(input.schema),
      declared: JSON.stringify(declared),
      created_at: existing?.created_at ?? now,
      updated_at: now,
      removed_at: null,
    };
    // Saving bumps the team's schema version, which locks the team's row: a concurrent change
    // of the team's schemas waits, and the budgets below count the extensions it committed.
    await saveExtension(trx, row);
    const after = (await extensionsOf(trx, team.id)).map(storedOf);
    const before = after.filter((e) => e.decl.schema.id.toLowerCase() !== key);
    if (existing && existing.removed_at === null) before.push(storedOf(existing));
    checkSchemaBudgets(team, before, after, deps.baseUrl);
    await auditSchema(deps, trx, team, change, 'schema_added', {
      schema: decl.schema.id,
      resourceType: decl.resourceType,
      replaced: existing !== undefined && existing.removed_at === null,
      attributes: decl.schema.attributes.map((a) => a.name),
      indexed: indexedNames(decl),
    });
    return viewOf(trx, row);
  });
  deps.indexes?.kick();
  return view;
}

export async function listSchemas(deps: SchemaDeps, team: TeamRow): Promise<ExtensionView[]> {
  const rows = await extensionsOf(deps.storage.db, team.id);
  const views: ExtensionView[] = [];
  for (const row of rows) views.push(await viewOf(deps.storage.db, row));
  return views;
}

/** The extension's schema document (as /Schemas/{id} shows it to the team). */
export async function showSchema(deps: SchemaDeps, team: TeamRow, id: string, baseUrl: string): Promise<Record<string, unknown>> {
  const row = await extensionByKey(deps.storage.db, team.id, id.toLowerCase());
  if (!row || row.removed_at !== null) throw notFound(`Team ${team.name} has no schema extension ${id}`);
  return { ...schemaDocument(declOf(row).schema, baseUrl), resourceType: row.resource_type, required: row.required === 1 };
}

/** Removes the extension: its values stay stored, hidden, until it is added again. */
export async function removeSchema(deps: SchemaDeps, team: TeamRow, id: string, change: SchemaChange): Promise<void> {
  const removed = await transact(deps.storage.db, async (trx) => {
    const row = await extensionByKey(trx, team.id, id.toLowerCase());
    if (!row || !(await removeExtension(trx, team.id, id.toLowerCase(), iso(deps.clock)))) return false;
    await auditSchema(deps, trx, team, change, 'schema_removed', { schema: row.schema_id, resourceType: row.resource_type });
    return true;
  });
  if (!removed) throw notFound(`Team ${team.name} has no schema extension ${id}`);
  deps.indexes?.kick();
}
