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
import { hidesDeactivated, typesOf } from '../scim/context.ts';
import { countUpTo } from '../scim/counts.ts';
import { getGroup, listGroups } from '../scim/groups.ts';
import { parseListQuery, parseProjection } from '../scim/query.ts';
import type { ListQuery } from '../scim/query.ts';
import type { ListResult, Resource } from '../scim/representation.ts';
import type { ResourceTypeDef } from '../scim/schema/types.ts';
import { getUser, listUsers, patchUser } from '../scim/users.ts';
import { groupWordSearch, USER_SEARCH_ORDER, userWordSearch, withWords } from '../scim/word-search.ts';
import { formatCount } from './format.ts';
import { searchFold } from '../text.ts';
import { PATCH_OP } from '../scim/schema/urns.ts';
import { listClients } from '../storage/repos/clients.ts';
import { memberCountsUpTo, memberPage } from '../storage/repos/groups.ts';
import { lastRequestPerConnection } from '../storage/repos/request-log.ts';
import { clientsWithTokens, teamCounts } from '../storage/repos/console.ts';
import { auditLog } from './audit.ts';
import type { AuditEntry } from './audit.ts';
import { ConsoleInputError } from './input-error.ts';
import { listProvisioningTokens } from '../storage/repos/provisioning-tokens.ts';

export const PAGE_SIZE = 50;

/**
 * A group's members are counted up to this ("more than" above it), over its membership index
 * alone when the team hides few users (repos/groups.ts memberPage), and numbered in pages up to
 * it (MAX_MEMBER_PAGE).
 */
export const COUNT_CAP = 10_000;

/**
 * A filtered users or groups list (a word search, a SCIM filter, a status) is counted up to this
 * ("of more than 1,000" above it), over at most this many rows plus one (scim/counts.ts). Each
 * match is a read of its row (the team's rules on deleted and deactivated users, the filter's
 * other tests), wherever in the table it lies: at 1,000,000 users a common given name's 10,000
 * first matches were 10,000 scattered table pages, 0.3-1 s on PostgreSQL whose cache did not hold
 * the table (docs/PERFORMANCE.md). An unfiltered list reads the team's counters, exactly.
 */
export const LIST_COUNT_CAP = 1_000;

/** A groups list counts each group's members up to this (a page of 50 groups reads at most 50 times this many rows). */
export const LIST_MEMBER_CAP = 1_000;

/** What an admin typed and the console refuses (input-error.ts; kept here for the pages that import it from here). */
export { ConsoleInputError };

/** Quotes a value for a SCIM filter (RFC 7644 3.4.2.2: a JSON string). */
const quoted = (value: string): string => JSON.stringify(value);

/** How many match: `n`, or more than `n` when `more`; undefined when not known. */
export interface Total {
  readonly n: number;
  readonly more: boolean;
}

export interface ListPage {
  readonly resources: readonly Resource[];
  readonly total: Total | undefined;
  readonly next: string | undefined;
  readonly previous: string | undefined;
  /** The order the page is in: CREATED or a sortBy the console offers (descending as asked). */
  readonly orderedBy: string;
  /** The 1-based position of the page's first row in the list. */
  readonly first: number;
  /** Groups only: each listed group's members, counted up to LIST_MEMBER_CAP (Total.more above it). */
  readonly memberCounts?: ReadonlyMap<string, Total>;
}

/**
 * Which users a list shows: '' as the team's reads show them (a team that hides deactivated
 * users lists the active ones, one that shows them lists both), or only the active ones, or only
 * the deactivated ones, in every team mode (DESIGN.md section 4: the console shows an admin what
 * SCIM clients of a hiding team do not see, so they can be found and reactivated).
 */
export type UserStatus = '' | 'active' | 'deactivated';

export const parseStatus = (value: string): UserStatus => {
  if (value === '' || value === 'active' || value === 'deactivated') return value;
  throw new ConsoleInputError('status is active or deactivated');
};

export interface DirectoryQuery {
  /**
   * Plain words, ignoring case and accents ("jose" finds José; text.ts searchFold): a user whose
   * userName, given name or family name starts with them, or whose externalId is exactly them.
   * Groups: displayName starts with them, or externalId is them. Every branch is an index range
   * at any size (migration 032's accent-folded columns; scim/word-search.ts). A user search
   * lists by the accent-folded userName unless another order is chosen: its page is then the first entries
   * of the userName range merged with the few name matches, or a short walk of the userName
   * order when names match many (repos/list/by-key-prefix.ts), where creation order would have to sort
   * every match of a common prefix. Anything else (emails, `co`, a given and a family name
   * together) takes a SCIM filter.
   */
  readonly q?: string;
  /** A SCIM filter, for those who know the grammar (the team's extension attributes too); wins over `q`. */
  readonly filter?: string;
  /** CREATED, a sort the console offers, or nothing (the list's default order). */
  readonly sortBy?: string;
  readonly descending?: boolean;
  readonly cursor?: string;
  /** Users only. */
  readonly status?: UserStatus;
  /** The 1-based position of the page's first row, carried by the page links (shown, never trusted for data). */
  readonly at?: number;
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

/** A query's SCIM filter, or else its plain words (`q`): at most one of them. */
function filterOf(query: DirectoryQuery): { filter?: string; words?: string } {
  if (query.filter !== undefined && query.filter.trim() !== '') return { filter: query.filter.trim() };
  const q = query.q?.trim();
  if (!q) return {};
  if (q.length > 200) throw new ConsoleInputError('the search is at most 200 characters');
  return { words: q };
}

/**
 * A plain-word user search as a SCIM filter would write it, case-insensitive but accent-sensitive
 * (RFC 7644): the shape of the console's search (scim/word-search.ts userWordSearch, which also
 * ignores accents) that a SCIM client can send, as the list planner's tests and benchmarks send it.
 */
export function userWords(q: string): string {
  return [`userName sw ${quoted(q)}`, `name.givenName sw ${quoted(q)}`, `name.familyName sw ${quoted(q)}`, `externalId eq ${quoted(q)}`].join(' or ');
}

/**
 * The context a console read sees users in: a team that hides deactivated users reads them as a
 * team that shows them does (never for a write: the team's own rules decide those).
 */
export const seeingDeactivated = (ctx: ScimContext): ScimContext =>
  hidesDeactivated(ctx) ? { ...ctx, team: { ...ctx.team, deactivated_users: 'visible' } } : ctx;

/** `filter` narrowed to one status (UserStatus), and the context that reads it (the users list and its CSV export). */
export function withStatus(ctx: ScimContext, filter: string | undefined, status: UserStatus): { ctx: ScimContext; filter: string | undefined } {
  const and = (test: string) => (filter === undefined ? test : `(${filter}) and ${test}`);
  if (status === 'deactivated') return { ctx: seeingDeactivated(ctx), filter: and('active eq false') };
  if (status === 'active' && !hidesDeactivated(ctx)) return { ctx, filter: and('active eq true') };
  return { ctx, filter };
}

const positionOf = (at: number | undefined): number => (at !== undefined && Number.isSafeInteger(at) && at >= 1 ? at : 1);

/**
 * How many a list holds: the page itself when it is the whole list, else counted up to
 * LIST_COUNT_CAP (the team's counters for an unfiltered list, scim/counts.ts).
 */
async function totalOf(ctx: ScimContext, resource: 'User' | 'Group', list: ListQuery, result: ListResult, first: number): Promise<Total> {
  if (result.totalResults !== undefined) return { n: result.totalResults, more: false };
  if (first === 1 && result.nextCursor === undefined) return { n: result.resources.length, more: false };
  // Unfiltered: the team's counters, exact at any size.
  const cap = list.filter === undefined && list.words === undefined && list.holds === undefined ? Number.MAX_SAFE_INTEGER - 1 : LIST_COUNT_CAP;
  const n = await countUpTo(ctx, resource, list, cap);
  return n > cap ? { n: cap, more: true } : { n, more: false };
}

/** The list query of a users page of `count` (searchUsers), the context it reads in, and its order. */
function usersList(base: ScimContext, query: DirectoryQuery, count: number): { ctx: ScimContext; list: ListQuery; orderedBy: string } {
  const words = filterOf(query);
  const { ctx, filter } = withStatus(base, words.filter, query.status ?? '');
  // The deactivated users are read in creation order, their partial index's (scan-cost.ts).
  const orderedBy = orderOf(query.sortBy, USER_SORTS, words.words !== undefined && query.status !== 'deactivated' ? 'userName' : CREATED);
  const parsed = parseListQuery(typesOf(ctx).User, {
    ...(filter !== undefined ? { filter } : {}),
    ...sortParams(orderedBy, query.descending),
    cursor: query.cursor ?? '',
    count: String(count),
    attributes: 'userName,name,displayName,emails,active,externalId,meta',
  });
  // Listed by userName: by the accent-folded one, so that José stands beside Jose and the
  // search's prefix is one range of the order (scim/word-search.ts).
  const list = words.words === undefined ? parsed : withWords(parsed, words.words, userWordSearch(words.words), orderedBy === 'userName' ? USER_SEARCH_ORDER : undefined);
  return { ctx, list, orderedBy };
}

/** The first `count` users a word search finds (a group's "users to add"), uncounted. */
export async function firstUsersFound(ctx: ScimContext, words: string, count: number): Promise<readonly Resource[]> {
  return (await listUsers(ctx, usersList(ctx, { q: words }, count).list)).resources;
}

/** One page of a team's users (RFC 9865 cursors: fast at any depth), with how many match. */
export async function searchUsers(base: ScimContext, query: DirectoryQuery): Promise<ListPage> {
  const { ctx, list, orderedBy } = usersList(base, query, PAGE_SIZE);
  const first = query.cursor ? positionOf(query.at) : 1;
  // A team with no deactivated user has nothing to list under that filter (its counters say so).
  if (query.status === 'deactivated' && (await teamCounts(ctx.storage.db, ctx.team.id)).deactivatedUsers === 0) {
    return { resources: [], total: { n: 0, more: false }, next: undefined, previous: undefined, orderedBy, first };
  }
  const result = await listUsers(ctx, list);
  const total = await totalOf(ctx, 'User', list, result, first);
  return { resources: result.resources, total, next: result.nextCursor, previous: result.previousCursor, orderedBy, first };
}

export async function searchGroups(ctx: ScimContext, query: DirectoryQuery): Promise<ListPage> {
  const { filter, words } = filterOf(query);
  const orderedBy = orderOf(query.sortBy, GROUP_SORTS, CREATED);
  const parsed = parseListQuery(typesOf(ctx).Group, {
    ...(filter !== undefined ? { filter } : {}),
    ...sortParams(orderedBy, query.descending),
    cursor: query.cursor ?? '',
    count: String(PAGE_SIZE),
    attributes: 'displayName,externalId,meta',
  });
  const list = words === undefined ? parsed : withWords(parsed, words, groupWordSearch(words));
  const first = query.cursor ? positionOf(query.at) : 1;
  const result = await listGroups(ctx, list);
  const total = await totalOf(ctx, 'Group', list, result, first);
  const ids = result.resources.map((r) => String(r.id));
  const counted = await memberCountsUpTo(ctx.storage.db, ctx.team.id, ids, hidesDeactivated(ctx), LIST_MEMBER_CAP);
  const memberCounts = new Map([...counted].map(([id, n]) => [id, n > LIST_MEMBER_CAP ? { n: LIST_MEMBER_CAP, more: true } : { n, more: false }]));
  return { resources: result.resources, total, next: result.nextCursor, previous: result.previousCursor, orderedBy, first, memberCounts };
}

export interface UserDetail {
  readonly resource: Resource;
  readonly history: readonly AuditEntry[];
  /** The team's User resource type (its extensions, for the page's sections). */
  readonly type: ResourceTypeDef;
}

/** A user as the console shows it: deactivated ones too, in every team mode. */
export async function userDetail(ctx: ScimContext, id: string): Promise<UserDetail> {
  const found = await getUser(seeingDeactivated(ctx), id);
  const history = await auditLog(ctx, { resourceId: id, limit: 50 });
  return { resource: found.resource, history: history.entries, type: typesOf(ctx).User };
}

export interface MemberEntry {
  readonly id: string;
  readonly userName: string;
  readonly joined: string;
}

export interface GroupDetail {
  readonly resource: Resource;
  readonly type: ResourceTypeDef;
  readonly members: readonly MemberEntry[];
  /** The member search's words (a prefix of the userName), as given. */
  readonly memberSearch: string;
  /** The 1-based page of members shown, and how many members (matching the search) there are. */
  readonly page: number;
  readonly total: Total;
  readonly history: readonly AuditEntry[];
}

/** Pages of members a group page reaches by number: COUNT_CAP members' worth (a search finds the others). */
export const MAX_MEMBER_PAGE = COUNT_CAP / PAGE_SIZE;

/**
 * A group (without its members) and one page of its members by page number: in join order, or,
 * for a search, those whose userName starts with `search` (case and accents ignored) by userName;
 * counted up to COUNT_CAP.
 */
export async function groupDetail(ctx: ScimContext, id: string, options: { search?: string; page?: string } = {}): Promise<GroupDetail> {
  const found = await getGroup(ctx, id, parseProjection(typesOf(ctx).Group, { excludedAttributes: 'members' }));
  const search = (options.search ?? '').trim();
  if (search.length > 200) throw new ConsoleInputError('the search is at most 200 characters');
  const page = options.page === undefined || options.page === '' ? 1 : Number(options.page);
  if (!Number.isSafeInteger(page) || page < 1 || page > MAX_MEMBER_PAGE) throw new ConsoleInputError(`the page is a number from 1 to ${formatCount(MAX_MEMBER_PAGE)}; search for the members further on`);
  const { rows, total } = await memberPage(ctx.storage.db, ctx.storage.hooks, ctx.team.id, id, {
    onlyActive: hidesDeactivated(ctx),
    ...(search ? { prefix: searchFold(search) } : {}),
    offset: (page - 1) * PAGE_SIZE,
    limit: PAGE_SIZE,
    cap: COUNT_CAP,
  });
  const history = await auditLog(ctx, { resourceId: id, limit: 20 });
  return {
    resource: found.resource,
    type: typesOf(ctx).Group,
    members: rows.map((m) => ({ id: m.user_id, userName: m.user_name, joined: m.created_at })),
    memberSearch: search,
    page,
    total: total > COUNT_CAP ? { n: COUNT_CAP, more: true } : { n: total, more: false },
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
export async function teamClients(ctx: ScimContext): Promise<{ id: string; name: string; bound: boolean; liveTokens: number; connectionId: string | null }[]> {
  return clientsWithTokens(ctx.storage.db, ctx.team.id, ctx.clock.now().toISOString());
}

/** The signed-in admin changes its own password (12+ characters): its other sessions end. */
export async function changeOwnPassword(ctx: ScimContext, userId: string, password: string): Promise<void> {
  await patchUser(ctx, userId, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'password', value: password }] });
}

export const consoleActor = (userId: string): Actor => ({ via: 'console', clientId: null, userId });
