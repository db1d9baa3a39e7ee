/**
 * Groups mapped to roles and entitlements (issue 31 item 4, DESIGN.md section 12): a team maps
 * one of its groups to a role or an entitlement of its catalog, and the group's members hold it
 * (their effective access, src/access/effective.ts, reads these mappings). The operations behind
 * `rollcall role map | unmap | mappings`, the admin API's `/v2/admin/Catalog/mappings` and the
 * console (a deleted group's mappings are removed by scim/group-mappings.ts, which records every
 * mapping change). It owns these rules; it writes no SQL
 * (repos/mappings.ts) and parses no HTTP.
 *
 * Each change is one transaction with its audit row (`access_mapped`, `access_unmapped`) and ONE
 * feed event, whatever the group's size (item 5): a `patch` of the Role or Entitlement resource,
 * `changed: ["groups"]`, the group in the members delta (`added` or `removed`). Its version is the
 * team's schema version, bumped by each mapping change (`catalogChanged`) so that every state of a
 * Role or Entitlement has a version of its own (RFC 9967 readers order and deduplicate by it); the
 * bump also makes every instance reload the team's types, a cost mapping changes can afford
 * (they are rare).
 * Mapping again what is mapped changes nothing (no audit row, no event). The team's mappings are
 * capped by its `access.mappings` budget (budgets.ts).
 */
import type { Actor } from '../audit/events.ts';
import { budgetsOf, OverBudget } from '../budgets.ts';
import type { Clock } from '../clock.ts';
import { iso } from '../clock.ts';
import { badRequest, notFound } from '../scim/errors.ts';
import { recordMapping, typeOf } from '../scim/group-mappings.ts';
import type { Recorder } from '../scim/group-mappings.ts';
import { namesType } from '../scim/schema/catalog.ts';
import type { Storage } from '../storage/connect.ts';
import type { Executor } from '../storage/types.ts';
import { catalogRows, nextSchemaVersion } from '../storage/repos/catalog.ts';
import type { CatalogEntryRow, CatalogRows, CatalogTypeRow } from '../storage/repos/catalog.ts';
import {
  countMappingsLocked,
  deleteMapping,
  deleteMappingsOfEntry,
  groupName,
  insertMapping,
  listMappingRows,
  lockGroupForMapping,
  mappingByKey,
} from '../storage/repos/mappings.ts';
import type { MappingKind, MappingRow } from '../storage/repos/mappings.ts';
import type { TeamRow } from '../storage/repos/teams.ts';
import { transact } from '../storage/statements.ts';

export interface MappingDeps {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly baseUrl: string;
}

/** Who changes the team's mappings (the CLI, an administrator's token, the console). */
export interface MappingChange {
  readonly actor: Actor;
  readonly requestId?: string | null;
}

/** A mapping as sent: `{"group", "kind": "role" | "entitlement", "value", "type"?}` (unchecked). */
export interface MappingInput {
  readonly group?: unknown;
  readonly kind?: unknown;
  readonly value?: unknown;
  /** An entitlement's type, by name (`License`) or endpoint without its slash; none for a role. */
  readonly type?: unknown;
}

/** A mapping as the admin API, the CLI and the console show it. */
export interface MappingView {
  readonly group: { readonly id: string; readonly displayName: string };
  readonly kind: MappingKind;
  /** An entitlement's type name. */
  readonly type?: string;
  readonly value: string;
  /** The entry's displayName in the catalog. */
  readonly display?: string;
  readonly created: string;
}

/** What the catalog says of one mapped entry: the entry and, for an entitlement, its type. */
interface Entry {
  readonly row: CatalogEntryRow;
  readonly type?: CatalogTypeRow;
}

/** Values named in a refusal, at most. */
const LISTED = 20;
const MAX_VALUE = 256;
const MAX_GROUP_ID = 64;

const KIND_WORDS: Record<MappingKind, string> = { role: 'role', entitlement: 'entitlement' };

interface ParsedInput {
  readonly groupId: string;
  readonly kind: MappingKind;
  readonly value: string;
  readonly type?: string;
}

/** The input's fields, each checked for its form (400 invalidValue naming the field). */
function parseInput(input: MappingInput): ParsedInput {
  const { group, kind, value, type } = input;
  if (typeof group !== 'string' || group.length === 0 || group.length > MAX_GROUP_ID) throw badRequest('invalidValue', 'group must be the id of one of the team\'s groups');
  if (kind !== 'role' && kind !== 'entitlement') throw badRequest('invalidValue', 'kind must be "role" or "entitlement"');
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_VALUE) throw badRequest('invalidValue', `value must be the ${KIND_WORDS[kind]}'s value (1 to ${MAX_VALUE} characters)`);
  if (type === undefined || type === null) return { groupId: group, kind, value };
  if (kind === 'role') throw badRequest('invalidValue', 'a role has no type: send type only with kind "entitlement"');
  if (typeof type !== 'string' || type.length === 0 || type.length > MAX_VALUE) throw badRequest('invalidValue', 'type must name an entitlement type of the team\'s catalog (its name, e.g. "License")');
  return { groupId: group, kind, value, type };
}

/** Whether `type` (as sent) names the type row (schema/catalog.ts `namesType`: its name or its endpoint without the slash, case-insensitively). */
const namesTypeRow = (type: string, row: CatalogTypeRow): boolean => namesType(type, { name: row.name, endpoint: row.endpoint });

/** The catalog's entry the input names, or a 400 invalidValue naming the value and the catalog. */
function entryOf(catalog: CatalogRows, input: ParsedInput): Entry {
  const row = catalog.entries.find((e) => e.kind === input.kind && e.value === input.value);
  const type = row && row.kind === 'entitlement' ? typeOf(catalog, row.type_key) : undefined;
  if (row && (input.type === undefined || (type !== undefined && namesTypeRow(input.type, type)))) return { row, ...(type ? { type } : {}) };
  const scope = input.type === undefined ? undefined : catalog.types.find((t) => namesTypeRow(input.type!, t));
  if (input.type !== undefined && scope === undefined) {
    const names = catalog.types.map((t) => t.name);
    throw badRequest('invalidValue', `"${input.type}" is not an entitlement type in the team's catalog (${names.length === 0 ? 'it has none' : listed(names)})`);
  }
  const candidates = catalog.entries.filter((e) => e.kind === input.kind && (scope === undefined || e.type_key === scope.name_key)).map((e) => e.value);
  const what = input.kind === 'role' ? 'a role' : scope ? `an entitlement of type ${scope.name}` : 'an entitlement';
  throw badRequest('invalidValue', `"${input.value}" is not ${what} in the team's catalog (${candidates.length === 0 ? 'it has none' : listed(candidates)})`);
}

const listed = (values: readonly string[]): string => (values.length <= LISTED ? values.join(', ') : `${values.slice(0, LISTED).join(', ')}, and ${values.length - LISTED} more`);

const viewOf = (row: MappingRow, groupDisplayName: string, catalog: CatalogRows): MappingView => {
  const entry = catalog.entries.find((e) => e.kind === row.kind && e.value === row.value);
  const type = row.kind === 'entitlement' ? (typeOf(catalog, row.type_key)?.name ?? row.type_key) : undefined;
  return {
    group: { id: row.group_id, displayName: groupDisplayName },
    kind: row.kind,
    ...(type !== undefined ? { type } : {}),
    value: row.value,
    ...(entry ? { display: entry.display_name } : {}),
    created: row.created_at,
  };
};

const recorder = (deps: MappingDeps, team: TeamRow, change: MappingChange): Recorder => ({ clock: deps.clock, teamId: team.id, actor: change.actor, requestId: change.requestId ?? null });

/**
 * Maps the group to the role or entitlement: 201-like `created: true` with one audit row and one
 * event; `created: false` and nothing written when the mapping was there already. The group must
 * be the team's (404), the entry in its catalog (400), and a new mapping within the team's
 * `access.mappings` budget (400).
 */
export async function mapGroup(deps: MappingDeps, team: TeamRow, input: MappingInput, change: MappingChange): Promise<{ mapping: MappingView; created: boolean }> {
  const parsed = parseInput(input);
  return transact(deps.storage.db, async (trx) => {
    // The team's row locked first (as a catalog change does), then the count, catalog and group.
    const held = await countMappingsLocked(trx, team.id);
    const catalog = await catalogRows(trx, team.id);
    const entry = entryOf(catalog, parsed);
    const group = await lockGroupForMapping(trx, team.id, parsed.groupId);
    if (!group) throw notFound(`Group ${parsed.groupId} not found`);
    const key = { team_id: team.id, kind: parsed.kind, value: entry.row.value, group_id: group.id };
    const existing = await mappingByKey(trx, key);
    if (existing) return { mapping: viewOf(existing, group.display_name, catalog), created: false };
    const cap = budgetsOf(team)['access.mappings'];
    if (held >= cap) {
      throw new OverBudget(team.id, 'access.mappings', `Team ${team.name} maps groups to roles and entitlements ${held} times; its budget "access.mappings" is ${cap}: unmap one first, or ask the operator to raise the limit`);
    }
    const row: MappingRow = { ...key, type_key: entry.row.type_key, created_at: iso(deps.clock) };
    await insertMapping(trx, row);
    await recordMapping(recorder(deps, team, change), trx, 'access_mapped', row, catalog, await nextSchemaVersion(trx, team.id));
    return { mapping: viewOf(row, group.display_name, catalog), created: true };
  });
}

/**
 * Removes the mapping, with its audit row and its one event; 404 when the group is not mapped to
 * that entry (an entitlement's `type`, when sent, must name the mapping's type).
 */
export async function unmapGroup(deps: MappingDeps, team: TeamRow, input: MappingInput, change: MappingChange): Promise<MappingView> {
  const parsed = parseInput(input);
  const what = `${KIND_WORDS[parsed.kind]}${parsed.type !== undefined ? ` of type ${parsed.type}` : ''} "${parsed.value}"`;
  const missing = () => notFound(`Group ${parsed.groupId} is not mapped to the ${what}`);
  return transact(deps.storage.db, async (trx) => {
    const catalog = await catalogRows(trx, team.id);
    const key = { team_id: team.id, kind: parsed.kind, value: parsed.value, group_id: parsed.groupId };
    const existing = await mappingByKey(trx, key);
    if (!existing) throw missing();
    if (parsed.type !== undefined) {
      const type = typeOf(catalog, existing.type_key);
      if (!(type ? namesTypeRow(parsed.type, type) : parsed.type.toLowerCase() === existing.type_key)) throw missing();
    }
    const removed = await deleteMapping(trx, key);
    // A concurrent unmapping won (PostgreSQL): it recorded the change.
    if (!removed) throw missing();
    const group = await groupName(trx, team.id, removed.group_id);
    await recordMapping(recorder(deps, team, change), trx, 'access_unmapped', removed, catalog, await nextSchemaVersion(trx, team.id));
    return viewOf(removed, group?.display_name ?? '', catalog);
  });
}

/** The team's mappings, or one group's (404 when the team has no such group). */
export async function listMappings(deps: MappingDeps, team: TeamRow, options: { readonly group?: string } = {}): Promise<MappingView[]> {
  const db = deps.storage.db;
  if (options.group !== undefined && (options.group.length > MAX_GROUP_ID || !(await groupName(db, team.id, options.group)))) throw notFound(`Group ${options.group} not found`);
  const [rows, catalog] = await Promise.all([listMappingRows(db, team.id, options.group), catalogRows(db, team.id)]);
  return rows.map((r) => viewOf(r, r.group_display_name, catalog));
}

/**
 * A catalog entry's forced removal (catalog-apply.ts), in its transaction, before the entry goes:
 * removes the groups' mappings to it, each with its `access_unmapped` audit row (`entryRemoved`)
 * and its one event, as an unmapping would. `catalog` is the catalog before the change (the
 * events' document). Answers how many it removed.
 */
export async function unmapRemovedEntry(by: Recorder, trx: Executor, kind: MappingKind, value: string, catalog: CatalogRows): Promise<number> {
  const removed = await deleteMappingsOfEntry(trx, by.teamId, kind, value);
  for (const row of removed) await recordMapping(by, trx, 'access_unmapped', row, catalog, await nextSchemaVersion(trx, by.teamId), { entryRemoved: true });
  return removed.length;
}
