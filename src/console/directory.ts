/**
 * What the console's pages read and change (DESIGN.md section 9), as domain
 * calls for one signed-in admin of one team: users and groups through the SCIM services (the
 * same filters, sorting, cursors and visibility rules as the API), a group's members in pages
 * by (joined, id) seek, a resource's audit history, the audit log with filters, the overview's
 * counts, and the settings. The admin is the actor of every change (`via: 'console'`). No SQL
 * and no HTML here.
 */
import type { Actor } from '../audit/events.ts';
import type { ScimContext } from '../scim/context.ts';
import { hidesDeactivated } from '../scim/context.ts';
import { getGroup, listGroups } from '../scim/groups.ts';
import { parseListQuery, parseProjection } from '../scim/query.ts';
import type { Resource } from '../scim/representation.ts';
import { groupResourceType, userResourceType } from '../scim/schema/registry.ts';
import { getUser, listUsers, patchUser } from '../scim/users.ts';
import { PATCH_OP } from '../scim/schema/urns.ts';
import { listClients } from '../storage/repos/clients.ts';
import { memberChunk } from '../storage/repos/groups.ts';
import { lastRequestPerConnection } from '../storage/repos/request-log.ts';
import { clientsWithTokens, teamCounts } from '../storage/repos/console.ts';
import { auditLog } from './audit.ts';
import type { AuditEntry } from './audit.ts';
import { ConsoleInputError } from './input-error.ts';
import { listProvisioningTokens } from '../storage/repos/provisioning-tokens.ts';

export const PAGE_SIZE = 50;

/** What an admin typed and the console refuses (input-error.ts; kept here for the pages that import it from here). */
export { ConsoleInputError };

/** Quotes a value for a SCIM filter (RFC 7644 3.4.2.2: a JSON string). */
const quoted = (value: string): string => JSON.stringify(value);

export interface ListPage {
  readonly resources: readonly Resource[];
  readonly total: number | undefined;
  readonly next: string | undefined;
  readonly previous: string | undefined;
  /** The order the page is in: CREATED or a sortBy the console offers (descending as asked). */
  readonly orderedBy: string;
}

export interface DirectoryQuery {
  /**
   * Plain words (case-insensitive): a user whose userName, given name or family name starts with
   * them, or whose externalId is exactly them. Groups: displayName starts with them, or
   * externalId is them. Every branch is an index range at any size (migration 012). A user
   * search lists by userName unless another order is chosen: its page is then the first entries
   * of the userName range merged with the few name matches, or a short walk of the userName
   * order when names match many (repos/list/by-key-prefix.ts), where creation order would have to sort
   * every match of a common prefix. Anything else (emails, `co`, a given and a family name
   * together) takes a SCIM filter.
   */
  readonly q?: string;
  /** A SCIM filter, for those who know the grammar; wins over `q`. */
  readonly filter?: string;
  /** CREATED, a sort the console offers, or nothing (the list's default order). */
  readonly sortBy?: string;
  readonly descending?: boolean;
  readonly cursor?: string;
}

/** The creation order, chosen by name (`sortBy=created`): no SCIM sortBy. */
export const CREATED = 'created';

const USER_SORTS = new Set(['userName', 'name.familyName', 'meta.lastModified']);
const GROUP_SORTS = new Set(['displayName', 'meta.lastModified']);

/**
 * The order a page is listed in: the one chosen when the console offers it, else `byDefault`.
 * Lists default to creation order (the (team, created, id) index serves it at any size); a
 * user word search defaults to userName (DirectoryQuery.q).
 */
const orderOf = (sortBy: string | undefined, allowed: ReadonlySet<string>, byDefault: string): string =>
  sortBy === CREATED || (sortBy !== undefined && allowed.has(sortBy)) ? sortBy : byDefault;

const sortParams = (orderedBy: string, descending: boolean | undefined): { sortBy?: string; sortOrder?: string } =>
  orderedBy === CREATED ? {} : { sortBy: orderedBy, sortOrder: descending ? 'descending' : 'ascending' };

/** The filter of a query, and whether it comes from plain words (`q`) rather than a SCIM filter. */
function filterOf(query: DirectoryQuery, words: (q: string) => string): { filter?: string; words: boolean } {
  if (query.filter !== undefined && query.filter.trim() !== '') return { filter: query.filter.trim(), words: false };
  const q = query.q?.trim();
  if (!q) return { words: false };
  if (q.length > 200) throw new ConsoleInputError('the search is at most 200 characters');
  return { filter: words(q), words: true };
}

/** The SCIM filter of a plain-word user search (DirectoryQuery.q). */
export function userWords(q: string): string {
  return [`userName sw ${quoted(q)}`, `name.givenName sw ${quoted(q)}`, `name.familyName sw ${quoted(q)}`, `externalId eq ${quoted(q)}`].join(' or ');
}

/** One page of a team's users (RFC 9865 cursors: fast at any depth). */
export async function searchUsers(ctx: ScimContext, query: DirectoryQuery): Promise<ListPage> {
  const { filter, words } = filterOf(query, userWords);
  const orderedBy = orderOf(query.sortBy, USER_SORTS, words ? 'userName' : CREATED);
  const list = parseListQuery(userResourceType, {
    ...(filter !== undefined ? { filter } : {}),
    ...sortParams(orderedBy, query.descending),
    cursor: query.cursor ?? '',
    count: String(PAGE_SIZE),
    attributes: 'userName,name,emails,active,externalId,meta',
  });
  const result = await listUsers(ctx, list);
  return { resources: result.resources, total: result.totalResults, next: result.nextCursor, previous: result.previousCursor, orderedBy };
}

export async function searchGroups(ctx: ScimContext, query: DirectoryQuery): Promise<ListPage> {
  const { filter } = filterOf(query, (q) => `displayName sw ${quoted(q)} or externalId eq ${quoted(q)}`);
  const orderedBy = orderOf(query.sortBy, GROUP_SORTS, CREATED);
  const list = parseListQuery(groupResourceType, {
    ...(filter !== undefined ? { filter } : {}),
    ...sortParams(orderedBy, query.descending),
    cursor: query.cursor ?? '',
    count: String(PAGE_SIZE),
    attributes: 'displayName,externalId,meta',
  });
  const result = await listGroups(ctx, list);
  return { resources: result.resources, total: result.totalResults, next: result.nextCursor, previous: result.previousCursor, orderedBy };
}

export interface UserDetail {
  readonly resource: Resource;
  readonly history: readonly AuditEntry[];
}

export async function userDetail(ctx: ScimContext, id: string): Promise<UserDetail> {
  const found = await getUser(ctx, id);
  const history = await auditLog(ctx, { resourceId: id, limit: 50 });
  return { resource: found.resource, history: history.entries };
}

export interface MemberEntry {
  readonly id: string;
  readonly userName: string;
  readonly joined: string;
}

/** A group (without its members) and one page of members in join order, by seek (fast for 100,000 members). */
export async function groupDetail(ctx: ScimContext, id: string, after?: string): Promise<{ resource: Resource; members: MemberEntry[]; next: string | undefined; history: readonly AuditEntry[] }> {
  const found = await getGroup(ctx, id, parseProjection(groupResourceType, { excludedAttributes: 'members' }));
  let position: { created_at: string; user_id: string } | undefined;
  if (after !== undefined && after !== '') {
    const match = /^(\d{4}-\d\d-\d\dT[\d:.]+Z)_([A-Z0-9]{1,40})$/.exec(after);
    if (!match) throw new ConsoleInputError('the page position is not valid');
    position = { created_at: match[1]!, user_id: match[2]! };
  }
  const rows = await memberChunk(ctx.storage.db, ctx.team.id, id, hidesDeactivated(ctx), PAGE_SIZE + 1, position);
  const page = rows.slice(0, PAGE_SIZE);
  const last = page.at(-1);
  const history = await auditLog(ctx, { resourceId: id, limit: 20 });
  return {
    resource: found.resource,
    members: page.map((m) => ({ id: m.user_id, userName: m.user_name, joined: m.created_at })),
    next: rows.length > PAGE_SIZE && last ? `${last.created_at}_${last.user_id}` : undefined,
    history: history.entries,
  };
}

export { auditLog } from './audit.ts';
export type { AuditEntry, AuditQuery } from './audit.ts';

export interface Overview {
  readonly activeUsers: number;
  readonly deactivatedUsers: number;
  readonly groups: number;
  readonly connections: number;
  readonly activity: readonly { label: string; lastAt: string; total: number; failures: number }[];
}

/** The overview: counts, and each connection's last 24 hours of provisioning (how many failed). */
export async function overview(ctx: ScimContext): Promise<Overview> {
  const counts = await teamCounts(ctx.storage.db, ctx.team.id);
  const since = new Date(ctx.clock.now().getTime() - 86_400_000).toISOString();
  const [activity, tokens, clients] = await Promise.all([
    lastRequestPerConnection(ctx.storage.db, ctx.team.id, since),
    listProvisioningTokens(ctx.storage.db, ctx.team.id, 500),
    listClients(ctx.storage.db),
  ]);
  const tokenNames = new Map(tokens.map((t) => [t.token_hash, t.name]));
  const now = ctx.clock.now().toISOString();
  const liveTokens = tokens.filter((t) => t.revoked_at === null && t.expires_at > now).length;
  const teamClients = clients.filter((c) => c.team_id === ctx.team.id).length;
  return {
    ...counts,
    connections: liveTokens + teamClients,
    activity: activity
      .map((a) => ({
        label: a.client_id !== null ? `client ${a.client_id}` : `token "${tokenNames.get(a.token_hash ?? '') ?? 'unknown'}"`,
        lastAt: a.at,
        total: a.total,
        failures: a.failures,
      }))
      .sort((a, b) => (a.lastAt < b.lastAt ? 1 : -1)),
  };
}

/** The OAuth clients that hold live tokens for this team, or are bound to it. */
export async function teamClients(ctx: ScimContext): Promise<{ id: string; name: string; bound: boolean; liveTokens: number }[]> {
  return clientsWithTokens(ctx.storage.db, ctx.team.id, ctx.clock.now().toISOString());
}

/** The signed-in admin changes its own password (12+ characters): its other sessions end. */
export async function changeOwnPassword(ctx: ScimContext, userId: string, password: string): Promise<void> {
  await patchUser(ctx, userId, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'password', value: password }] });
}

export const consoleActor = (userId: string): Actor => ({ via: 'console', clientId: null, userId });
