/**
 * The operations on a team's catalog of roles and entitlements (DESIGN.md section 12) behind
 * `rollcall role | entitlement | catalog ...`, the admin API (`/v2/admin/Catalog`) and the console:
 * read it, replace it whole (idempotent), add or remove one role, entitlement type or entitlement,
 * set which schemas discovery shows. It owns these rules; it writes no SQL (repos/catalog.ts,
 * repos/catalog-holders.ts) and parses no HTTP; the input rules are catalog-input.ts's.
 *
 * Every operation is one transaction that first locks the team's row (two changes of one catalog
 * never interleave), then computes the catalog it wants, and applies the difference
 * (catalog-apply.ts):
 * - each entry or type added, changed or removed is audited (`role_added`, `entitlement_updated`,
 *   `entitlement_type_removed`, ...) and is an event on the team's feed (RFC 9967 `create` /
 *   `put` / `delete` on `Role`, `Entitlement` or `ResourceType`), whose `version` is the team's
 *   schema version after the change; a type removed also removes (and announces) its entries;
 * - the team's schema version moves once (`catalogChanged`), so every instance reloads the team's
 *   types, which carry the catalog; nothing changed, nothing is written (no audit, no event);
 * - an entry removed (or an entitlement moved to another type) that users hold or groups map is
 *   refused (409, with the counts) unless forced: then it is taken from those users
 *   (scim/grants.ts `removeGrantFromUsers`, a SCIM patch event per user) and its mappings go
 *   (mappings.ts `unmapRemovedEntry`, an unmapping audit row and event per mapping);
 * - the catalog's size (types and entries) is held to the team's budget `catalog.entries`: a
 *   change that grows it past the budget is refused (400 naming the budget); shrinking is not.
 */
import { recordEvent } from '../audit/events.ts';
import { iso } from '../clock.ts';
import { badRequest, notFound, ScimError } from '../scim/errors.ts';
import type { CatalogSchemas } from '../scim/schema/catalog.ts';
import { catalogRows } from '../storage/repos/catalog.ts';
import type { CatalogEntryRow, CatalogRows, CatalogTypeRow, GrantKind } from '../storage/repos/catalog.ts';
import { lockTeamRow } from '../storage/repos/catalog-holders.ts';
import type { TeamRow } from '../storage/repos/teams.ts';
import { RetryWrite } from '../scim/write.ts';
import type { Tx } from '../storage/types.ts';
import { applyCatalog, entryKey, entryRow, typeRow, wantedOf } from './catalog-apply.ts';
import type { Applied, CatalogChange, CatalogDeps, RemoveOptions, Wanted } from './catalog-apply.ts';
import { readCatalogDocument, readEntry, readSchemas, readType, readTypeName, readValue } from './catalog-input.ts';
import type { CatalogDocument } from './catalog-input.ts';

export type { CatalogChange, CatalogDeps, RemoveOptions } from './catalog-apply.ts';

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


/** How many times a catalog change runs when it keeps losing a race (below). */
const ATTEMPTS = 5;

/**
 * Runs a catalog change as one transaction, again (from the start, its attempt rolled back) when
 * it lost a race it cannot wait out: a forced removal's rewrite of a holder that a concurrent
 * write changed first (`RetryWrite`, scim/grants.ts), a deadlock or serialization failure between
 * the removal and users' writes, or a prepared statement a migration made stale. After ATTEMPTS
 * it answers 409, never a server error.
 */
async function retried<T>(deps: CatalogDeps, work: (trx: Tx) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await deps.storage.db.transaction().execute(work);
    } catch (error) {
      const lost = error instanceof RetryWrite || deps.storage.hooks.isRetryable(error);
      if (!lost) throw error;
      if (attempt >= ATTEMPTS) throw new ScimError(409, "the catalog change kept losing to concurrent writes of the users holding what it removes; try again");
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 10 * attempt)));
    }
  }
}

/** One catalog change: lock, read, let `want` make the wanted catalog, apply. */
function changeCatalog<T>(deps: CatalogDeps, team: TeamRow, change: CatalogChange, options: RemoveOptions, want: (current: CatalogRows, wanted: Wanted) => void, answer: (applied: Applied, current: CatalogRows) => T, audit?: (applied: Applied) => Record<string, unknown> | undefined): Promise<T> {
  return retried(deps, async (trx) => {
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
