/**
 * The operations on a team's schema extensions behind `rollcall schema ...` and the admin HTTP
 * API (`/v2/admin/Schemas`): register (add, or replace with a new definition under the
 * evolution rule of schema/extensions.ts), list, show, remove. And the per-app cache of each
 * team's resource types, rebuilt when the team's `schema_version` (read with the bearer token)
 * moved. It owns these rules; it writes no SQL (repos/extensions.ts) and parses no HTTP.
 *
 * Every change writes an audit row (`schema_added`, `schema_removed`) and brings the expression
 * indexes of extension attributes (lower.ts `indexedKeys`: `uniqueness: server` ones) in line
 * with every team's extensions, in the change's transaction: a removed attribute or extension
 * loses its index unless another team's extension still wants the same one.
 */
import type { Actor } from '../audit/events.ts';
import { recordEvent } from '../audit/events.ts';
import type { Clock } from '../clock.ts';
import { iso } from '../clock.ts';
import type { Storage } from '../storage/connect.ts';
import type { Executor } from '../storage/types.ts';
import { syncExpressionIndexes } from '../storage/repos/expression-indexes.ts';
import { activeExtensions, extensionByKey, extensionsOf, removeExtension, saveExtension } from '../storage/repos/extensions.ts';
import type { ExtensionRow } from '../storage/repos/extensions.ts';
import type { TeamRow } from '../storage/repos/teams.ts';
import { schemaDocument } from './discovery.ts';
import { badRequest, notFound } from './errors.ts';
import { checkEvolution, CORE_TYPES, readExtension, teamTypes } from './schema/extensions.ts';
import type { ExtensionDecl, TeamTypes } from './schema/extensions.ts';
import { indexedKeys } from './filter/lower.ts';
import { transact } from '../storage/statements.ts';

export interface SchemaDeps {
  readonly storage: Storage;
  readonly clock: Clock;
}

/** Who changes a team's schemas (the CLI, or an administrator's token through the admin API). */
export interface SchemaChange {
  readonly actor: Actor;
  readonly requestId?: string | null;
}

/** The audit event of a change to the team's schema extensions, in the change's transaction. */
const auditSchema = (deps: SchemaDeps, trx: Executor, team: TeamRow, change: SchemaChange, action: 'schema_added' | 'schema_removed', detail: Record<string, unknown>): Promise<void> =>
  recordEvent(trx, deps.clock, { teamId: team.id, actor: change.actor, requestId: change.requestId ?? null, action, resourceType: 'Schema', resourceId: null, detail });

/** Makes the expression indexes those of every team's current extensions (lower.ts indexedKeys). */
async function syncIndexes(trx: Executor): Promise<void> {
  const decls = (await activeExtensions(trx)).map(declOf);
  const wanted = (type: 'User' | 'Group') => decls.filter((d) => d.resourceType === type).flatMap((d) => indexedKeys(d.schema));
  await syncExpressionIndexes(trx, 'users', wanted('User'));
  await syncExpressionIndexes(trx, 'groups', wanted('Group'));
}

/**
 * Makes the expression indexes those every team's extensions want, in one transaction: after
 * `rollcall copy`, whose target has the tables' rows but none of these indexes, and when a server
 * starts (a migration may have retired extensions whose indexes must go). Nothing to do, it
 * reads the extensions and the index names only.
 */
export async function rebuildExtensionIndexes(storage: Storage): Promise<void> {
  await transact(storage.db, syncIndexes);
}

const indexedNames = (decl: ExtensionDecl): string[] => decl.schema.attributes.filter((a) => indexedKeys({ ...decl.schema, attributes: [a] }).length > 0).map((a) => a.name);

/** A registered extension as `schema list` shows it. */
export interface ExtensionView {
  readonly id: string;
  readonly resourceType: 'User' | 'Group';
  readonly required: boolean;
  readonly attributes: number;
  /** Attributes with an expression index (`uniqueness: server`): fast `eq` filters. */
  readonly indexed: string[];
  readonly updated: string;
}

const declOf = (row: ExtensionRow): ExtensionDecl => readExtension(row.resource_type, row.required === 1, JSON.parse(row.definition));

const viewOf = (row: ExtensionRow): ExtensionView => {
  const decl = declOf(row);
  return { id: decl.schema.id, resourceType: decl.resourceType, required: decl.required, attributes: decl.schema.attributes.length, indexed: indexedNames(decl), updated: row.updated_at };
};

/** The team's resource types, read from storage. */
export async function loadTeamTypes(ex: Executor, teamId: string): Promise<TeamTypes> {
  const rows = await extensionsOf(ex, teamId);
  return rows.length === 0 ? CORE_TYPES : teamTypes(rows.map(declOf));
}

/** Each team's resource types, kept per app and rebuilt when the team's schema version moved. */
export class TeamTypesCache {
  readonly #entries = new Map<string, { readonly version: number; readonly types: TeamTypes }>();

  async typesOf(ex: Executor, team: TeamRow): Promise<TeamTypes> {
    const version = team.schema_version ?? 0;
    // A team that never declared an extension has the core types: no query.
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
  return transact(deps.storage.db, async (trx) => {
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
    await saveExtension(trx, row);
    await syncIndexes(trx);
    await auditSchema(deps, trx, team, change, 'schema_added', {
      schema: decl.schema.id,
      resourceType: decl.resourceType,
      replaced: existing !== undefined && existing.removed_at === null,
      attributes: decl.schema.attributes.map((a) => a.name),
      indexed: indexedNames(decl),
    });
    return viewOf(row);
  });
}

export async function listSchemas(deps: SchemaDeps, team: TeamRow): Promise<ExtensionView[]> {
  return (await extensionsOf(deps.storage.db, team.id)).map(viewOf);
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
    await syncIndexes(trx);
    await auditSchema(deps, trx, team, change, 'schema_removed', { schema: row.schema_id, resourceType: row.resource_type });
    return true;
  });
  if (!removed) throw notFound(`Team ${team.name} has no schema extension ${id}`);
}
