/**
 * What the console's Roles & entitlements pages read and change (issue 31, DESIGN.md section 12),
 * for one signed-in admin of one team: the team's catalog, its group mappings, and one user's
 * effective access. Thin glue over the domain the CLI and the admin API share
 * (access/catalog.ts, access/mappings.ts, access/effective.ts), so the rules, the audit rows and
 * the events are theirs; the admin is the actor (`via: 'console'`). What is only the console's:
 * reading a form's group (an id or a displayName) and its entry choice (`role:V` or
 * `entitlement:Type:V`, the `access` parameter's syntax). No SQL and no HTML here.
 */
import { addEntitlement, addEntitlementType, addRole, getCatalog, removeEntitlement, removeEntitlementType, removeRole, setCatalogSchemas } from '../access/catalog.ts';
import type { AddOutcome, CatalogChange, CatalogDeps, CatalogView, Removal, RemoveOptions } from '../access/catalog.ts';
import { accessOfUser, holdersOf } from '../access/effective.ts';
import type { HoldersPage, UserAccess } from '../access/effective.ts';
import { listMappings, mapGroup, unmapGroup } from '../access/mappings.ts';
import type { MappingView } from '../access/mappings.ts';
import type { ScimContext } from '../scim/context.ts';
import { notFound, scimErrorOf } from '../scim/errors.ts';
import { getGroup, listGroups } from '../scim/groups.ts';
import { parseListQuery } from '../scim/query.ts';
import { groupResourceType } from '../scim/schema/registry.ts';
import { loadTeamTypes } from '../scim/team-schemas.ts';
import { ConsoleInputError } from './directory.ts';

export type { AddOutcome, CatalogView, HoldersPage, MappingView, Removal, UserAccess };

/** Users per page of an entry's holders. */
export const HOLDERS_PAGE = 50;

/** The domain's dependencies and the change's author, from the admin's context (the catalog's and the mappings' alike). */
export const depsOf = (ctx: ScimContext): CatalogDeps => ({ storage: ctx.storage, clock: ctx.clock, baseUrl: ctx.baseUrl });
export const changeOf = (ctx: ScimContext): CatalogChange => ({ actor: ctx.actor, requestId: ctx.requestId });

/**
 * How a refusal to remove what users hold says "force" on the console: the page shows the
 * refusal above a form that repeats the removal with force.
 */
const FORCE_HINT = 'confirm below';
const removing = (force: boolean): RemoveOptions => ({ force, forceHint: FORCE_HINT });

/**
 * The context with the team's resource types, which carry its catalog (the console's context is
 * built without them; effective access reads the catalog's display names and types there).
 */
export async function withCatalog(ctx: ScimContext): Promise<ScimContext> {
  return ctx.types ? ctx : { ...ctx, types: await loadTeamTypes(ctx.storage.db, ctx.team.id) };
}

/** The team's catalog, as the admin API shows it. */
export const teamCatalog = (ctx: ScimContext): Promise<CatalogView> => getCatalog(depsOf(ctx), ctx.team);

/** A role or an entitlement as a form sends it: value, displayName, and a description when one was typed. */
export interface EntryForm {
  readonly value: string;
  readonly displayName: string;
  readonly description: string;
}

const entryInput = (form: EntryForm) => ({ value: form.value, displayName: form.displayName, ...(form.description !== '' ? { description: form.description } : {}) });

/** Adds a role, or changes the displayName and description of the one with that value. */
export async function addRoleFromConsole(ctx: ScimContext, form: EntryForm): Promise<AddOutcome> {
  return (await addRole(depsOf(ctx), ctx.team, entryInput(form), changeOf(ctx))).outcome;
}

/** Removes a role; one users hold or groups map only when `force` (the admin confirmed). */
export const removeRoleFromConsole = (ctx: ScimContext, value: string, force: boolean): Promise<Removal> =>
  removeRole(depsOf(ctx), ctx.team, value, changeOf(ctx), removing(force));

/** An entitlement type as its form sends it: `required` ticked or not, `multiValued` "multi" or "single". */
export interface TypeForm {
  readonly name: string;
  readonly endpoint: string;
  readonly required: boolean;
  readonly multiValued: string;
  readonly description: string;
}

/** Adds an entitlement type, or changes the one with that name. */
export async function addTypeFromConsole(ctx: ScimContext, form: TypeForm): Promise<AddOutcome> {
  if (form.multiValued !== 'multi' && form.multiValued !== 'single') throw new ConsoleInputError('choose whether a user may hold several entitlements of the type, or at most one');
  const input = { name: form.name, endpoint: form.endpoint, required: form.required, multiValued: form.multiValued === 'multi', ...(form.description !== '' ? { description: form.description } : {}) };
  return (await addEntitlementType(depsOf(ctx), ctx.team, input, changeOf(ctx))).outcome;
}

/** Removes an entitlement type and its entitlements; held or mapped ones only when `force`. */
export const removeTypeFromConsole = (ctx: ScimContext, name: string, force: boolean): Promise<Removal & { entitlements: number }> =>
  removeEntitlementType(depsOf(ctx), ctx.team, name, changeOf(ctx), removing(force));

/**
 * Adds an entitlement of the type, or changes the one with that value; one of another type is
 * moved, which its holders decide like a removal (refused with the counts unless `force`).
 */
export async function addEntitlementFromConsole(ctx: ScimContext, type: string, form: EntryForm, force: boolean): Promise<AddOutcome> {
  return (await addEntitlement(depsOf(ctx), ctx.team, type, entryInput(form), changeOf(ctx), removing(force))).outcome;
}

/** Removes an entitlement of the type; a held or mapped one only when `force`. */
export const removeEntitlementFromConsole = (ctx: ScimContext, type: string, value: string, force: boolean): Promise<Removal> =>
  removeEntitlement(depsOf(ctx), ctx.team, type, value, changeOf(ctx), removing(force));

/** Which schemas discovery shows for the catalog: `okta` or `ietf`; whether that changed anything. */
export async function setSchemasFromConsole(ctx: ScimContext, schemas: string): Promise<boolean> {
  return (await setCatalogSchemas(depsOf(ctx), ctx.team, schemas, changeOf(ctx))).changed;
}

/** A role or an entitlement of the catalog, as a form names it. */
export type EntryRef = { readonly kind: 'role'; readonly value: string } | { readonly kind: 'entitlement'; readonly type: string; readonly value: string };

/** An entry's form value: `role:V` or `entitlement:Type:V` (a type name holds no colon). */
export const entryChoice = (entry: EntryRef): string => (entry.kind === 'role' ? `role:${entry.value}` : `entitlement:${entry.type}:${entry.value}`);

/** Reads an entry choice (entryChoice); a ConsoleInputError when it is none. */
export function parseEntryChoice(text: string): EntryRef {
  if (text.startsWith('role:') && text.length > 5) return { kind: 'role', value: text.slice(5) };
  const match = /^entitlement:([^:]+):(.+)$/s.exec(text);
  if (match) return { kind: 'entitlement', type: match[1]!, value: match[2]! };
  throw new ConsoleInputError('choose a role or an entitlement of the catalog');
}

/** Quotes a value for a SCIM filter (RFC 7644 3.4.2.2: a JSON string). */
const quoted = (value: string): string => JSON.stringify(value);

/**
 * The id of the team's group a form names: its id, or else its displayName (unique per team,
 * compared as SCIM compares it). A 404 ScimError naming the text when neither finds one.
 */
export async function groupOf(ctx: ScimContext, text: string): Promise<string> {
  const wanted = text.trim();
  if (wanted === '') throw new ConsoleInputError('enter a group: its id or its displayName');
  if (wanted.length > 256) throw new ConsoleInputError('a group id or displayName is at most 256 characters');
  if (/^[A-Za-z0-9]{1,64}$/.test(wanted)) {
    try {
      return String((await getGroup(ctx, wanted)).resource.id);
    } catch (error) {
      if (scimErrorOf(error)?.status !== 404) throw error;
    }
  }
  const query = parseListQuery(groupResourceType, { filter: `displayName eq ${quoted(wanted)}`, count: '2', attributes: 'displayName' });
  const found = await listGroups(ctx, query);
  const group = found.resources[0];
  if (!group) throw notFound(`The team has no group with the id or displayName "${wanted}"`);
  return String(group.id);
}

/** The team's group mappings, or one group's. */
export const teamMappings = (ctx: ScimContext, group?: string): Promise<MappingView[]> =>
  listMappings(depsOf(ctx), ctx.team, group !== undefined && group !== '' ? { group } : {});

/** Maps the group the form names (id or displayName) to the chosen entry; whether it was new. */
export async function mapFromConsole(ctx: ScimContext, form: { group: string; entry: string }): Promise<{ mapping: MappingView; created: boolean }> {
  const entry = parseEntryChoice(form.entry);
  const group = await groupOf(ctx, form.group);
  return mapGroup(depsOf(ctx), ctx.team, { group, ...entry }, changeOf(ctx));
}

/** Removes one mapping (the list's remove button: the group's id and the entry choice). */
export async function unmapFromConsole(ctx: ScimContext, form: { group: string; entry: string }): Promise<MappingView> {
  const entry = parseEntryChoice(form.entry);
  return unmapGroup(depsOf(ctx), ctx.team, { group: form.group, ...entry }, changeOf(ctx));
}

/** One user's effective access with its sources (404 as the access API answers it). */
export async function userAccess(ctx: ScimContext, id: string): Promise<UserAccess> {
  return accessOfUser(await withCatalog(ctx), id);
}

/** One page of the active users holding the chosen entry (directly or through a group), by user id. */
export async function entryHolders(ctx: ScimContext, entry: EntryRef, cursor: string): Promise<HoldersPage> {
  return holdersOf(await withCatalog(ctx), entry, { count: HOLDERS_PAGE, ...(cursor !== '' ? { cursor } : {}) });
}
