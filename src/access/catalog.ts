/**
 * The operations on a team's catalog of roles and entitlements (DESIGN.md section 12) behind
 * `rollcall role | entitlement | catalog ...`, the admin API (`/v2/admin/Catalog`) and the console:
 * read it, replace it whole (idempotent), add or remove one role, entitlement type or entitlement,
 * set which schemas discovery shows. It owns these rules; it writes no SQL (repos/catalog.ts,
 * repos/catalog-holders.ts) and parses no HTTP; the input rules are catalog-input.ts's.
 *
 * Every operation is one transaction that first locks the team's row (two changes of one catalog
 * never interleave), then computes the catalog it wants, and applies the difference:
 * - each entry or type added, changed or removed is audited (`role_added`, `entitlement_updated`,
 *   `entitlement_type_removed`, ...) and is an event on the team's feed (RFC 9967 `create` /
 *   `put` / `delete` on `Role`, `Entitlement` or `ResourceType`), whose `version` is the team's
 *   schema version after the change; a type removed also removes (and announces) its entries;
 * - the team's schema version moves once (`catalogChanged`), so every instance reloads the team's
 *   types, which carry the catalog; nothing changed, nothing is written (no audit, no event);
 * - an entry removed (or an entitlement moved to another type) that users hold or groups map is
 *   refused (409, with the counts) unless forced: then it is taken from those users
 *   (scim/grants.ts `removeGrantFromUsers`, a SCIM patch event per user) and its mappings go;
 * - the catalog's size (types and entries) is held to the team's budget `catalog.entries`: a
 *   change that grows it past the budget is refused (400 naming the budget); shrinking is not.
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
import { badRequest, notFound, ScimError } from '../scim/errors.ts';
import { removeGrantFromUsers } from '../scim/grants.ts';
import type { CatalogSchemas } from '../scim/schema/catalog.ts';
import type { Storage } from '../storage/connect.ts';
import { catalogChanged, catalogRows, deleteCatalogEntry, deleteCatalogType, setCatalogSchemas as saveCatalogSchemas, upsertCatalogEntry, upsertCatalogType } from '../storage/repos/catalog.ts';
import type { CatalogEntryRow, CatalogRows, CatalogTypeRow, GrantKind } from '../storage/repos/catalog.ts';
import { deleteMappingsOfEntry, holdingsOfMany, lockTeamRow, schemaVersionOf } from '../storage/repos/catalog-holders.ts';
import type { Holdings } from '../storage/repos/catalog-holders.ts';
import type { TeamRow } from '../storage/repos/teams.ts';
import { transact } from '../storage/statements.ts';
import type { Tx } from '../storage/types.ts';
import { readCatalogDocument, readEntry, readSchemas, readType, readTypeName, readValue } from './catalog-input.ts';
import type { CatalogDocument, EntryInput, TypeInput } from './catalog-input.ts';

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

/** A role or an entitlement as the admin API shows it (`description` omitted when none). */
export interface EntryView {
  readonly value: string;
  readonly displayName: string;
  readonly description?: string;
}

export interface TypeView {
  readonly name: string;
  readonly endpoint: string;
  readonly description?: string;
  readonly required: boolean;
  readonly multiValued: boolean;
  readonly entitlements: readonly EntryView[];
}

/** GET /v2/admin/Catalog: roles by value, types by name, entitlements by value. */
export interface CatalogView {
  readonly schemas: CatalogSchemas;
  readonly roles: readonly EntryView[];
  readonly entitlementTypes: readonly TypeView[];
}

/** What a change did: the catalog after it, and how many entries and types it added, changed, removed. */
export interface CatalogResult {
  readonly catalog: CatalogView;
  readonly added: number;
  readonly updated: number;
  readonly removed: number;
}

/** An entry (or a type) removed: how many users held it and how many groups mapped it (forced). */
export interface Removal {
  readonly removed: string;
  readonly users: number;
  readonly groups: number;
}

const byCode = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const entryView = (r: CatalogEntryRow): EntryView => ({ value: r.value, displayName: r.display_name, ...(r.description !== null ? { description: r.description } : {}) });

function viewOf(rows: CatalogRows): CatalogView {
  const entries = [...rows.entries].sort((a, b) => byCode(a.value, b.value));
  return {
    schemas: rows.schemas,
    roles: entries.filter((e) => e.kind === 'role').map(entryView),
    entitlementTypes: [...rows.types]
      .sort((a, b) => byCode(a.name_key, b.name_key))
      .map((t) => ({
        name: t.name,
        endpoint: t.endpoint,
        ...(t.description !== null ? { description: t.description } : {}),
        required: t.required === 1,
        multiValued: t.multi_valued === 1,
        entitlements: entries.filter((e) => e.kind === 'entitlement' && e.type_key === t.name_key).map(entryView),
      })),
  };
}

/** The team's catalog, as GET /v2/admin/Catalog shows it. */
export async function getCatalog(deps: CatalogDeps, team: TeamRow): Promise<CatalogView> {
  return viewOf(await catalogRows(deps.storage.db, team.id));
}

// ---- the wanted catalog, and the difference applied -------------------------------------------

/** The catalog a change wants: types by name_key, entries by kind and value. */
interface Wanted {
  schemas: CatalogSchemas;
  readonly types: Map<string, CatalogTypeRow>;
  readonly entries: Map<string, CatalogEntryRow>;
}

const entryKey = (kind: GrantKind, value: string): string => `${kind}\u0000${value}`;

function wantedOf(rows: CatalogRows): Wanted {
  return { schemas: rows.schemas, types: new Map(rows.types.map((t) => [t.name_key, t])), entries: new Map(rows.entries.map((e) => [entryKey(e.kind, e.value), e])) };
}

function typeRow(team: TeamRow, input: TypeInput, existing: CatalogTypeRow | undefined, now: string): CatalogTypeRow {
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

function entryRow(team: TeamRow, kind: GrantKind, typeKey: string, input: EntryInput, existing: CatalogEntryRow | undefined, now: string): CatalogEntryRow {
  return { team_id: team.id, kind, type_key: typeKey, value: input.value, display_name: input.displayName, description: input.description ?? null, created_at: existing?.created_at ?? now, updated_at: now };
}

const TYPE_FIELDS = [['name', 'name'], ['endpoint', 'endpoint'], ['description', 'description'], ['required', 'required'], ['multiValued', 'multi_valued']] as const;
const ENTRY_FIELDS = [['displayName', 'display_name'], ['description', 'description'], ['type', 'type_key']] as const;

const typeChanges = (a: CatalogTypeRow | undefined, b: CatalogTypeRow): string[] => TYPE_FIELDS.filter(([, c]) => a?.[c] !== b[c] && !(a === undefined && b[c] === null)).map(([n]) => n);
const entryChanges = (a: CatalogEntryRow | undefined, b: CatalogEntryRow): string[] =>
  ENTRY_FIELDS.filter(([n, c]) => (n === 'type' ? b.kind === 'entitlement' : true) && a?.[c] !== b[c] && !(a === undefined && b[c] === null)).map(([n]) => n);

/** One entry or type that changes, with the event it makes. */
interface Step {
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

interface Applied {
  readonly rows: CatalogRows;
  readonly steps: readonly Step[];
  readonly schemasChanged: boolean;
}

/**
 * Applies the difference between the team's catalog (`current`) and `wanted`, in `trx`: holders
 * checked, budget checked, rows written, the version bumped once, each step audited and on the
 * feed. `wanted` is what the caller's change makes of `current`.
 */
async function applyCatalog(deps: CatalogDeps, trx: Tx, team: TeamRow, change: CatalogChange, current: CatalogRows, wanted: Wanted, options: RemoveOptions): Promise<Applied> {
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

  // Entries removed, or entitlements moved to another type: their holders decide.
  const leaving: CatalogEntryRow[] = [];
  for (const [key, e] of before.entries) {
    const next = wanted.entries.get(key);
    if (!next || next.type_key !== e.type_key) leaving.push(e);
  }
  const held = new Map<string, Holdings>();
  for (const kind of ['role', 'entitlement'] as const) {
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
      await deleteMappingsOfEntry(trx, team.id, e.kind, e.value);
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

/** One catalog change: lock, read, let `want` make the wanted catalog, apply. */
function changeCatalog<T>(deps: CatalogDeps, team: TeamRow, change: CatalogChange, options: RemoveOptions, want: (current: CatalogRows, wanted: Wanted) => void, answer: (applied: Applied, current: CatalogRows) => T, audit?: (applied: Applied) => Record<string, unknown> | undefined): Promise<T> {
  return transact(deps.storage.db, async (trx) => {
    await lockTeamRow(trx, team.id);
    try {
      return await changeLocked(trx);
    } catch (error) {
      // Only two types trading endpoints in one change can collide here (the input was checked
      // against the wanted catalog, and the team's row is locked).
      if (deps.storage.hooks.isUniqueViolation(error)) throw new ScimError(409, 'two entitlement types cannot trade endpoints in one change: give one a new endpoint first');
      throw error;
    }
  });
  async function changeLocked(trx: Tx): Promise<T> {
    const current = await catalogRows(trx, team.id);
    const wanted = wantedOf(current);
    want(current, wanted);
    const applied = await applyCatalog(deps, trx, team, change, current, wanted, options);
    const summary = audit?.(applied);
    if (summary) await recordEvent(trx, deps.clock, { teamId: team.id, actor: change.actor, requestId: change.requestId ?? null, action: 'catalog_replaced', resourceType: 'Catalog', resourceId: null, detail: summary });
    return answer(applied, current);
  }
}

const counts = (applied: Applied) => ({
  added: applied.steps.filter((s) => s.type === 'create').length,
  updated: applied.steps.filter((s) => s.type === 'put').length,
  removed: applied.steps.filter((s) => s.type === 'delete').length,
});

/**
 * Replaces the team's catalog with `body` (PUT /v2/admin/Catalog, `rollcall catalog put`): what
 * it names is added or changed, what it omits is removed; `schemas` absent keeps the setting.
 * The same document again changes nothing.
 */
export async function putCatalog(deps: CatalogDeps, team: TeamRow, body: unknown, change: CatalogChange, options: RemoveOptions = {}): Promise<CatalogResult> {
  const doc: CatalogDocument = readCatalogDocument(body);
  const now = iso(deps.clock);
  return changeCatalog(
    deps,
    team,
    change,
    options,
    (current, wanted) => {
      const before = wantedOf(current);
      wanted.types.clear();
      wanted.entries.clear();
      if (doc.schemas) wanted.schemas = doc.schemas;
      for (const r of doc.roles) wanted.entries.set(entryKey('role', r.value), entryRow(team, 'role', '', r, before.entries.get(entryKey('role', r.value)), now));
      for (const t of doc.entitlementTypes) {
        const key = t.name.toLowerCase();
        wanted.types.set(key, typeRow(team, t, before.types.get(key), now));
        for (const e of t.entitlements) wanted.entries.set(entryKey('entitlement', e.value), entryRow(team, 'entitlement', key, e, before.entries.get(entryKey('entitlement', e.value)), now));
      }
    },
    (applied) => ({ catalog: viewOf(applied.rows), ...counts(applied) }),
    (applied) => (applied.steps.length > 0 || applied.schemasChanged ? { ...counts(applied), ...(applied.schemasChanged ? { schemas: applied.rows.schemas } : {}) } : undefined),
  );
}

/** What adding one entry or type did: `added`, `updated` (displayName, description, ...), or `unchanged`. */
export type AddOutcome = 'added' | 'updated' | 'unchanged';

const outcomeOf = (applied: Applied): AddOutcome => (applied.steps.some((s) => s.type === 'create') ? 'added' : applied.steps.length > 0 ? 'updated' : 'unchanged');

/** Adds a role, or changes the displayName / description of the role with that value. */
export async function addRole(deps: CatalogDeps, team: TeamRow, input: unknown, change: CatalogChange): Promise<{ role: EntryView; outcome: AddOutcome }> {
  const entry = readEntry(input);
  const now = iso(deps.clock);
  return changeCatalog(deps, team, change, {}, (_, wanted) => {
    const key = entryKey('role', entry.value);
    wanted.entries.set(key, entryRow(team, 'role', '', entry, wanted.entries.get(key), now));
  }, (applied) => ({ role: entryView(applied.rows.entries.find((e) => e.kind === 'role' && e.value === entry.value)!), outcome: outcomeOf(applied) }));
}

/** Removes a role; one users hold or groups map only with `force` (taken from them). */
export async function removeRole(deps: CatalogDeps, team: TeamRow, value: string, change: CatalogChange, options: RemoveOptions = {}): Promise<Removal> {
  return removeEntry(deps, team, 'role', readValue(value, 'value'), change, options);
}

async function removeEntry(deps: CatalogDeps, team: TeamRow, kind: GrantKind, value: string, change: CatalogChange, options: RemoveOptions, typeName?: string): Promise<Removal> {
  return changeCatalog(deps, team, change, options, (current, wanted) => {
    const key = entryKey(kind, value);
    const found = wanted.entries.get(key);
    if (typeName !== undefined) {
      const type = requireType(current, team, typeName);
      if (found && found.type_key !== type.name_key) throw notFound(`Entitlement type ${type.name} of team ${team.name} has no entitlement "${value}" (it belongs to ${current.types.find((t) => t.name_key === found.type_key)?.name ?? found.type_key})`);
    }
    if (!found) throw notFound(`Team ${team.name}'s catalog has no ${kind} "${value}"`);
    wanted.entries.delete(key);
  }, (applied) => ({ removed: value, users: applied.steps[0]?.holdings?.users ?? 0, groups: applied.steps[0]?.holdings?.groups ?? 0 }));
}

function requireType(current: CatalogRows, team: TeamRow, name: string): CatalogTypeRow {
  const type = current.types.find((t) => t.name_key === name.toLowerCase());
  if (!type) throw notFound(`Team ${team.name} has no entitlement type "${name}"${current.types.length > 0 ? ` (its types: ${current.types.map((t) => t.name).join(', ')})` : ''}`);
  return type;
}

/** Adds an entitlement type, or changes the one with that name (compared case-insensitively). */
export async function addEntitlementType(deps: CatalogDeps, team: TeamRow, input: unknown, change: CatalogChange): Promise<{ type: Omit<TypeView, 'entitlements'>; outcome: AddOutcome }> {
  const type = readType(input);
  const now = iso(deps.clock);
  return changeCatalog(deps, team, change, {}, (_, wanted) => {
    const key = type.name.toLowerCase();
    const clash = [...wanted.types.values()].find((t) => t.name_key !== key && t.endpoint_key === type.endpoint.toLowerCase());
    if (clash) throw badRequest('invalidValue', `endpoint: "${type.endpoint}" is already the endpoint of entitlement type ${clash.name}`);
    wanted.types.set(key, typeRow(team, type, wanted.types.get(key), now));
  }, (applied) => {
    const { entitlements: _, ...view } = viewOf(applied.rows).entitlementTypes.find((t) => t.name.toLowerCase() === type.name.toLowerCase())!;
    return { type: view, outcome: outcomeOf(applied) };
  });
}

/** Removes an entitlement type and its entitlements; held or mapped ones only with `force`. */
export async function removeEntitlementType(deps: CatalogDeps, team: TeamRow, name: string, change: CatalogChange, options: RemoveOptions = {}): Promise<Removal & { entitlements: number }> {
  const typeName = readTypeName(name, 'name');
  return changeCatalog(deps, team, change, options, (current, wanted) => {
    const type = requireType(current, team, typeName);
    wanted.types.delete(type.name_key);
    for (const [key, e] of wanted.entries) if (e.kind === 'entitlement' && e.type_key === type.name_key) wanted.entries.delete(key);
  }, (applied, current) => {
    const entries = applied.steps.filter((s) => s.resourceType === 'Entitlement');
    return {
      removed: requireType(current, team, typeName).name,
      entitlements: entries.length,
      users: entries.reduce((n, s) => n + (s.holdings?.users ?? 0), 0),
      groups: entries.reduce((n, s) => n + (s.holdings?.groups ?? 0), 0),
    };
  });
}

/**
 * Adds an entitlement of the type `typeName`, or changes the displayName / description of the one
 * with that value. A value names one entitlement whatever its type: one of another type is moved,
 * which its holders decide like a removal (refused with the counts unless `force`).
 */
export async function addEntitlement(deps: CatalogDeps, team: TeamRow, typeName: string, input: unknown, change: CatalogChange, options: RemoveOptions = {}): Promise<{ entitlement: EntryView & { type: string }; outcome: AddOutcome }> {
  const entry = readEntry(input);
  const now = iso(deps.clock);
  let type: CatalogTypeRow | undefined;
  return changeCatalog(deps, team, change, options, (current, wanted) => {
    type = requireType(current, team, typeName);
    const key = entryKey('entitlement', entry.value);
    wanted.entries.set(key, entryRow(team, 'entitlement', type.name_key, entry, wanted.entries.get(key), now));
  }, (applied) => ({
    entitlement: { ...entryView(applied.rows.entries.find((e) => e.kind === 'entitlement' && e.value === entry.value)!), type: type!.name },
    outcome: outcomeOf(applied),
  }));
}

/** Removes an entitlement of the type `typeName`; a held or mapped one only with `force`. */
export async function removeEntitlement(deps: CatalogDeps, team: TeamRow, typeName: string, value: string, change: CatalogChange, options: RemoveOptions = {}): Promise<Removal> {
  return removeEntry(deps, team, 'entitlement', readValue(value, 'value'), change, options, typeName);
}

/** Which schemas the team's discovery shows for its catalog: Okta's or the IETF draft's. */
export async function setCatalogSchemas(deps: CatalogDeps, team: TeamRow, schemas: unknown, change: CatalogChange): Promise<{ schemas: CatalogSchemas; changed: boolean }> {
  const wantedSchemas = readSchemas(schemas);
  return changeCatalog(deps, team, change, {}, (_, wanted) => {
    wanted.schemas = wantedSchemas;
  }, (applied) => ({ schemas: wantedSchemas, changed: applied.schemasChanged }));
}
