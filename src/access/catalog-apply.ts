/**
 * How a change of a team's catalog is applied (catalog.ts's operations all end here): the
 * difference between the catalog a change wants and the stored one, in the change's locked
 * transaction. Entries removed (or entitlements moved to another type) that users hold or groups
 * map are refused with the counts unless forced, which takes them from those users
 * (scim/grants.ts) and unmaps their groups (mappings.ts: an audit row and an unmapping event each,
 * at versions of their own); the team's budget `catalog.entries` refuses growth past it; rows are
 * written; the schema version moves once more; each entry or type changed is an audit row and a
 * feed event whose version is the schema version after the change. It owns these
 * rules; it writes no SQL (repos) and parses no HTTP.
 */
import { randomBytes } from 'node:crypto';
import type { Actor, AuditEvent } from '../audit/events.ts';
import { recordEvent } from '../audit/events.ts';
import { budgetsOf, OverBudget } from '../budgets.ts';
import type { Clock } from '../clock.ts';
import { iso } from '../clock.ts';
import { recordAuditedChange } from '../events/feed.ts';
import type { Change, ChangeType } from '../events/feed.ts';
import { PasswordHasher } from '../oauth/passwords.ts';
import type { ScimContext } from '../scim/context.ts';
import { badRequest, ScimError } from '../scim/errors.ts';
import { removeGrantFromUsers } from '../scim/grants.ts';
import type { CatalogSchemas } from '../scim/schema/catalog.ts';
import type { Storage } from '../storage/connect.ts';
import { catalogChanged, catalogRows, deleteCatalogEntry, lockCatalogEntries, schemaVersionOf, deleteCatalogType, setCatalogSchemas as saveCatalogSchemas, upsertCatalogEntry, upsertCatalogType } from '../storage/repos/catalog.ts';
import type { CatalogEntryRow, CatalogRows, CatalogTypeRow, GrantKind } from '../storage/repos/catalog.ts';
import { holdingsOfMany } from '../storage/repos/catalog-holders.ts';
import type { Holdings } from '../storage/repos/catalog-holders.ts';
import type { TeamRow } from '../storage/repos/teams.ts';
import type { Tx } from '../storage/types.ts';
import type { EntryInput, TypeInput } from './catalog-input.ts';
import { unmapRemovedEntry } from './mappings.ts';

export interface CatalogDeps {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly baseUrl: string;
}

/** Who changes the catalog (the CLI, the console, or an administrator's token through the admin API). */
export interface CatalogChange {
  readonly actor: Actor;
  readonly requestId?: string | null;
}

export interface RemoveOptions {
  /** Remove entries users hold or groups map: from those users, with the mappings. */
  readonly force?: boolean;
  /** How the caller's surface says "force" in a refusal (default `send force=true`). */
  readonly forceHint?: string;
}

/** The catalog a change wants: types by name_key, entries by kind and value. */
export interface Wanted {
  schemas: CatalogSchemas;
  readonly types: Map<string, CatalogTypeRow>;
  readonly entries: Map<string, CatalogEntryRow>;
}

export const entryKey = (kind: GrantKind, value: string): string => `${kind}\u0000${value}`;

export function wantedOf(rows: CatalogRows): Wanted {
  return { schemas: rows.schemas, types: new Map(rows.types.map((t) => [t.name_key, t])), entries: new Map(rows.entries.map((e) => [entryKey(e.kind, e.value), e])) };
}

export function typeRow(team: TeamRow, input: TypeInput, existing: CatalogTypeRow | undefined, now: string): CatalogTypeRow {
  return {
    team_id: team.id,
    name: input.name,
    name_key: input.name.toLowerCase(),
    endpoint: input.endpoint,
    endpoint_key: input.endpoint.toLowerCase(),
    description: input.description ?? null,
    required: input.required ? 1 : 0,
    multi_valued: input.multiValued ? 1 : 0,
    created_at: existing?.created_at ?? now,
    updated_at: now,
  };
}

export function entryRow(team: TeamRow, kind: GrantKind, typeKey: string, input: EntryInput, existing: CatalogEntryRow | undefined, now: string): CatalogEntryRow {
  return { team_id: team.id, kind, type_key: typeKey, value: input.value, display_name: input.displayName, description: input.description ?? null, created_at: existing?.created_at ?? now, updated_at: now };
}

const TYPE_FIELDS = [['name', 'name'], ['endpoint', 'endpoint'], ['description', 'description'], ['required', 'required'], ['multiValued', 'multi_valued']] as const;
const ENTRY_FIELDS = [['displayName', 'display_name'], ['description', 'description'], ['type', 'type_key']] as const;

const typeChanges = (a: CatalogTypeRow | undefined, b: CatalogTypeRow): string[] => TYPE_FIELDS.filter(([, c]) => a?.[c] !== b[c] && !(a === undefined && b[c] === null)).map(([n]) => n);
const entryChanges = (a: CatalogEntryRow | undefined, b: CatalogEntryRow): string[] =>
  ENTRY_FIELDS.filter(([n, c]) => (n === 'type' ? b.kind === 'entitlement' : true) && a?.[c] !== b[c] && !(a === undefined && b[c] === null)).map(([n]) => n);

/** One entry or type that changes, with the event it makes. */
export interface Step {
  readonly type: ChangeType;
  readonly resourceType: 'Role' | 'Entitlement' | 'ResourceType';
  readonly id: string;
  readonly changed: readonly string[];
  readonly data: Record<string, unknown>;
  readonly action: AuditEvent['action'];
  readonly holdings?: Holdings;
}

const ACTIONS = {
  Role: { create: 'role_added', put: 'role_updated', delete: 'role_removed' },
  Entitlement: { create: 'entitlement_added', put: 'entitlement_updated', delete: 'entitlement_removed' },
  ResourceType: { create: 'entitlement_type_added', put: 'entitlement_type_updated', delete: 'entitlement_type_removed' },
} as const;

const typeData = (t: CatalogTypeRow): Record<string, unknown> => ({
  id: t.name,
  name: t.name,
  endpoint: t.endpoint,
  ...(t.description !== null ? { description: t.description } : {}),
  required: t.required === 1,
  multiValued: t.multi_valued === 1,
});

const holdingText = (kind: GrantKind, value: string, h: Holdings): string => {
  const parts = [
    ...(h.users > 0 ? [`held by ${h.users} user${h.users === 1 ? '' : 's'}`] : []),
    ...(h.groups > 0 ? [`mapped from ${h.groups} group${h.groups === 1 ? '' : 's'}`] : []),
  ];
  return `${kind} ${JSON.stringify(value)} is ${parts.join(' and ')}`;
};

/** A ScimContext for the forced removal's user writes (scim/grants.ts), acting as `change.actor`. */
const writeContext = (deps: CatalogDeps, team: TeamRow, change: CatalogChange): ScimContext => ({
  storage: deps.storage,
  clock: deps.clock,
  baseUrl: deps.baseUrl,
  team,
  actor: change.actor,
  requestId: change.requestId ?? null,
  // The removal hands out no cursors and sets no password.
  cursorSecret: randomBytes(32).toString('base64url'),
  passwords: new PasswordHasher(),
});

export interface Applied {
  readonly rows: CatalogRows;
  readonly steps: readonly Step[];
  readonly schemasChanged: boolean;
}

/**
 * Applies the difference between the team's catalog (`current`) and `wanted`, in `trx`: holders
 * checked, budget checked, rows written, the version bumped once, each step audited and on the
 * feed. `wanted` is what the caller's change makes of `current`.
 */
export async function applyCatalog(deps: CatalogDeps, trx: Tx, team: TeamRow, change: CatalogChange, current: CatalogRows, wanted: Wanted, options: RemoveOptions): Promise<Applied> {
  const now = iso(deps.clock);
  const before = wantedOf(current);
  const typeName = (key: string): string => wanted.types.get(key)?.name ?? before.types.get(key)?.name ?? key;
  const entryData = (e: CatalogEntryRow): Record<string, unknown> => ({
    id: e.value,
    displayName: e.display_name,
    ...(e.description !== null ? { description: e.description } : {}),
    ...(e.kind === 'entitlement' ? { type: typeName(e.type_key) } : {}),
  });
  const resourceOf = (kind: GrantKind) => (kind === 'role' ? 'Role' : 'Entitlement') as 'Role' | 'Entitlement';

  // A required type with no entitlement would refuse every user's create: each one needs one.
  for (const [key, t] of wanted.types) {
    if (t.required !== 1 || [...wanted.entries.values()].some((e) => e.kind === 'entitlement' && e.type_key === key)) continue;
    throw badRequest('invalidValue', `entitlement type ${t.name} is required but has no entitlements: every user would need one of none; declare its entitlements first, or make it not required`);
  }

  // Entries removed, or entitlements moved to another type: their holders decide.
  const leaving: CatalogEntryRow[] = [];
  for (const [key, e] of before.entries) {
    const next = wanted.entries.get(key);
    if (!next || next.type_key !== e.type_key) leaving.push(e);
  }
  const held = new Map<string, Holdings>();
  for (const kind of ['role', 'entitlement'] as const) {
    // Locked before counting: a user write assigning one of them is counted or then refused.
    await lockCatalogEntries(trx, team.id, kind, leaving.filter((e) => e.kind === kind).map((e) => e.value));
    const found = await holdingsOfMany(trx, team.id, kind, leaving.filter((e) => e.kind === kind).map((e) => e.value));
    for (const [value, h] of found) held.set(entryKey(kind, value), h);
  }
  if (held.size > 0 && !options.force) {
    const texts = leaving.filter((e) => held.has(entryKey(e.kind, e.value))).map((e) => holdingText(e.kind, e.value, held.get(entryKey(e.kind, e.value))!));
    const shown = texts.slice(0, 10).join('; ') + (texts.length > 10 ? `; and ${texts.length - 10} more` : '');
    throw new ScimError(409, `${shown}; ${options.forceHint ?? 'send force=true'} to remove ${texts.length === 1 ? 'it' : 'them'} from them`);
  }

  const size = (w: { types: Map<string, unknown>; entries: Map<string, unknown> }) => w.types.size + w.entries.size;
  const limit = budgetsOf(team)['catalog.entries'];
  if (size(wanted) > limit && size(wanted) > size(before)) {
    throw new OverBudget(team.id, 'catalog.entries', `Team ${team.name} would have ${size(wanted)} roles, entitlement types and entitlements in its catalog; its budget "catalog.entries" is ${limit}`);
  }

  const steps: Step[] = [];
  const ctx = held.size > 0 ? writeContext(deps, team, change) : undefined;
  for (const e of leaving) {
    const h = held.get(entryKey(e.kind, e.value));
    if (h && ctx) {
      await removeGrantFromUsers(ctx, trx, e.kind, e.value);
      // Each mapping goes as an unmapping would: its audit row and its event, before the entry's own.
      if (h.groups > 0) await unmapRemovedEntry({ clock: deps.clock, teamId: team.id, actor: change.actor, requestId: change.requestId ?? null }, trx, e.kind, e.value, current);
    }
    if (!wanted.entries.has(entryKey(e.kind, e.value))) {
      await deleteCatalogEntry(trx, team.id, e.kind, e.value);
      steps.push({ type: 'delete', resourceType: resourceOf(e.kind), id: e.value, changed: [], data: entryData(e), action: ACTIONS[resourceOf(e.kind)].delete, ...(h ? { holdings: h } : {}) });
    }
  }
  const typeSteps: Step[] = [];
  for (const [key, t] of before.types) {
    if (wanted.types.has(key)) continue;
    await deleteCatalogType(trx, team.id, key);
    typeSteps.push({ type: 'delete', resourceType: 'ResourceType', id: t.name, changed: [], data: typeData(t), action: ACTIONS.ResourceType.delete });
  }
  for (const [key, t] of wanted.types) {
    const was = before.types.get(key);
    const changed = typeChanges(was, t);
    if (was && changed.length === 0) continue;
    await upsertCatalogType(trx, { ...t, created_at: was?.created_at ?? now, updated_at: now });
    typeSteps.push({ type: was ? 'put' : 'create', resourceType: 'ResourceType', id: t.name, changed, data: typeData(t), action: ACTIONS.ResourceType[was ? 'put' : 'create'] });
  }
  for (const [key, e] of wanted.entries) {
    const was = before.entries.get(key);
    const changed = entryChanges(was, e);
    // A type renamed (its case) changes its entitlements' `type` too: nothing stored changes.
    if (was && changed.length === 0) continue;
    await upsertCatalogEntry(trx, { ...e, created_at: was?.created_at ?? now, updated_at: now });
    const h = held.get(key);
    steps.push({ type: was ? 'put' : 'create', resourceType: resourceOf(e.kind), id: e.value, changed, data: entryData(e), action: ACTIONS[resourceOf(e.kind)][was ? 'put' : 'create'], ...(h ? { holdings: h } : {}) });
  }
  const schemasChanged = wanted.schemas !== current.schemas;
  if (schemasChanged) await saveCatalogSchemas(trx, team.id, wanted.schemas);

  // Removals of entries first, then types (their own entries' removals listed before them), then additions.
  const ordered = [...steps.filter((s) => s.type === 'delete'), ...typeSteps.filter((s) => s.type === 'delete'), ...typeSteps.filter((s) => s.type !== 'delete'), ...steps.filter((s) => s.type !== 'delete')];
  if (ordered.length > 0 || schemasChanged) {
    await catalogChanged(trx, team.id);
    const version = await schemaVersionOf(trx, team.id);
    const actor = change.actor;
    const requestId = change.requestId ?? null;
    for (const s of ordered) {
      const detail = { changed: s.changed, ...(s.holdings ? { forced: true, users: s.holdings.users, groups: s.holdings.groups } : {}) };
      const event: Change = { teamId: team.id, type: s.type, resourceType: s.resourceType, resourceId: s.id, version, changed: s.changed, actor, txn: requestId, externalId: null, data: JSON.stringify(s.data) };
      await recordAuditedChange(deps, trx, { teamId: team.id, actor, requestId, action: s.action, resourceType: s.resourceType, resourceId: s.id, detail }, event);
    }
    if (schemasChanged) {
      await recordEvent(trx, deps.clock, { teamId: team.id, actor, requestId, action: 'catalog_schemas_set', resourceType: 'Catalog', resourceId: null, detail: { from: current.schemas, to: wanted.schemas } });
    }
  }
  return { rows: await catalogRows(trx, team.id), steps: ordered, schemasChanged };
}
