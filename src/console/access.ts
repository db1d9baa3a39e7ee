/**
 * What the console's Roles & entitlements pages read and change (issue 31, DESIGN.md section 12),
 * for one signed-in admin of one team: the team's catalog, its group mappings, and one user's
 * effective access. Thin glue over the domain the CLI and the admin API share
 * (access/catalog.ts, access/mappings.ts, access/effective.ts), so the rules, the audit rows and
 * the events are theirs; the admin is the actor (`via: 'console'`). What is only the console's:
 * reading a form's group (an id or a displayName) and its entry choice (`role:V` or
 * `entitlement:Type:V`, the `access` parameter's syntax). No SQL and no HTML here.
 */
import { accessOfUser } from '../access/effective.ts';
import type { UserAccess } from '../access/effective.ts';
import { listMappings, mapGroup, unmapGroup } from '../access/mappings.ts';
import type { MappingChange, MappingDeps, MappingView } from '../access/mappings.ts';
import type { ScimContext } from '../scim/context.ts';
import { notFound, scimErrorOf } from '../scim/errors.ts';
import { getGroup, listGroups } from '../scim/groups.ts';
import { parseListQuery } from '../scim/query.ts';
import type { Catalog } from '../scim/schema/catalog.ts';
import { groupResourceType } from '../scim/schema/registry.ts';
import { loadTeamTypes } from '../scim/team-schemas.ts';
import { ConsoleInputError } from './directory.ts';

export type { MappingView, UserAccess };

/** The catalog of a team that declared none: no roles, no types, Okta's schemas. */
const EMPTY: Catalog = { schemas: 'okta', roles: [], types: [] };

/** The domain's dependencies and the change's author, from the admin's context. */
export const depsOf = (ctx: ScimContext): MappingDeps => ({ storage: ctx.storage, clock: ctx.clock, baseUrl: ctx.baseUrl });
export const changeOf = (ctx: ScimContext): MappingChange => ({ actor: ctx.actor, requestId: ctx.requestId });

/**
 * The context with the team's resource types, which carry its catalog (the console's context is
 * built without them; the catalog's display names and types come from there).
 */
export async function withCatalog(ctx: ScimContext): Promise<ScimContext> {
  return ctx.types ? ctx : { ...ctx, types: await loadTeamTypes(ctx.storage.db, ctx.team.id) };
}

/** The team's catalog as its SCIM requests see it (empty when it declared none). */
export async function teamCatalog(ctx: ScimContext): Promise<Catalog> {
  return (await withCatalog(ctx)).types?.catalog ?? EMPTY;
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
