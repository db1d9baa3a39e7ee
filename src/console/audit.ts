/**
 * The console's audit log (issue 30 item 4): a team's audit rows newest first, filtered by actor
 * (a userName, a connection's name, an id, or how they came in), action, resource and a date range, paged by (at, id)
 * seek, each row told as a story (audit-story.ts). The names a page shows are read for the whole
 * page at once: one query per kind (users, groups, clients, tokens, connections, setup links), never one per
 * row, so a page costs the same at any directory size. The same entries make a user's and a
 * group's history and the audit CSV export. No SQL and no HTML here.
 */
import { setupLinkRecipients } from '../storage/repos/setup-links.ts';
import { connectionByName, connectionNames } from '../oauth/connections.ts';
import type { ScimContext } from '../scim/context.ts';
import { clientNamesByIds, groupNamesByIds, tokenNamesByIds, userIdByName, userNamesByIds } from '../storage/repos/audit-names.ts';
import { filteredAuditEvents } from '../storage/repos/console.ts';
import type { AuditFilter } from '../storage/repos/console.ts';
import { namedMembersOf, parseJson, storyOf } from './audit-story.ts';
import type { ActorJson, AuditEntry, PageNames, RawAudit } from './audit-story.ts';
import { ConsoleInputError } from './input-error.ts';

export type { AuditEntry } from './audit-story.ts';

export const AUDIT_PAGE_SIZE = 50;

/** The actions an admin may filter by (the filter's suggestions; any action name is accepted). */
export const AUDIT_ACTIONS = [
  'create', 'replace', 'patch', 'members', 'deactivate', 'activate', 'delete', 'sign_in', 'sign_in_failed', 'token_issued', 'token_revoked', 'grant_revoked',
  'client_created', 'client_updated', 'client_deleted', 'team_updated', 'password_changed', 'subscription_created', 'subscription_replayed', 'subscription_deleted',
  'schema_added', 'schema_removed', 'connection_created', 'connection_renamed', 'connection_deleted', 'exported',
] as const;

export interface AuditQuery {
  /** cli, console, scim, oauth; a user, client or connection id; a userName or a connection's name. */
  readonly actor?: string;
  readonly action?: string;
  readonly resourceId?: string;
  /** A date (YYYY-MM-DD, the whole UTC day) or a date and time (YYYY-MM-DDTHH:MM, UTC). */
  readonly from?: string;
  readonly to?: string;
  /** The page position: the last row shown, `<at>_<id>`. */
  readonly before?: string;
  readonly limit?: number;
}

export interface AuditPage {
  readonly entries: AuditEntry[];
  readonly next: string | undefined;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,3})?)?Z?$/;

/**
 * A date picker's value as an instant: a date alone is the start of that UTC day (`from`) or its
 * last millisecond (`to`); a datetime-local value is read as UTC. Anything else, or a day no
 * calendar has (2026-02-30), is the admin's error, said plainly.
 */
export function dateBound(value: string | undefined, label: 'From' | 'To'): string | undefined {
  const text = value?.trim() ?? '';
  if (text === '') return undefined;
  const date = DATE.exec(text);
  const time = DATE_TIME.exec(text);
  const day = date ? text : time?.[1];
  const at = day === undefined ? Number.NaN : Date.parse(`${day}T00:00:00.000Z`);
  if (day === undefined || Number.isNaN(at) || new Date(at).toISOString().slice(0, 10) !== day) {
    throw new ConsoleInputError(`${label} is not a date: pick one, or write it as 2026-01-31 (or 2026-01-31T09:30, UTC)`);
  }
  if (date) return label === 'From' ? new Date(at).toISOString() : new Date(at + 86_400_000 - 1).toISOString();
  const [hours, minutes, seconds] = [Number(time![2]), Number(time![3]), Number(time![4] ?? 0)];
  if (hours > 23 || minutes > 59 || seconds > 59) throw new ConsoleInputError(`${label} has no such time of day: write it as 2026-01-31T09:30`);
  return new Date(at + ((hours * 60 + minutes) * 60 + seconds) * 1000).toISOString();
}

/** The storage filter of a query, or the admin's error. */
async function filterOf(ctx: ScimContext, query: AuditQuery, limit: number): Promise<AuditFilter> {
  const filter: { -readonly [K in keyof AuditFilter]: AuditFilter[K] } = { limit };
  const actor = query.actor?.trim();
  if (actor) {
    if (/^(cli|console|scim|oauth)$/.test(actor)) filter.via = actor;
    else if (/^[A-Z0-9]{1,40}$/.test(actor)) filter.actorId = actor;
    else if (actor.length <= 256) {
      const userId = await userIdByName(ctx.storage.db, ctx.team.id, actor.toLowerCase());
      const connection = userId === undefined ? await connectionByName(ctx.storage.db, ctx.team.id, actor) : undefined;
      if (userId !== undefined) filter.actorId = userId;
      else if (connection !== undefined) filter.connectionId = connection.id;
      else throw new ConsoleInputError(`actor: no user or connection of this team is named "${actor}" (or give cli, console, scim, oauth, or an id)`);
    } else throw new ConsoleInputError('actor is a userName, a connection name, an id, or cli, console, scim or oauth');
  }
  const action = query.action?.trim();
  if (action) {
    if (!/^[a-z_]{1,40}$/.test(action)) throw new ConsoleInputError('action is a name such as create, patch or token_issued');
    filter.action = action;
  }
  const resource = query.resourceId?.trim();
  if (resource) filter.resourceId = resource.slice(0, 300);
  const from = dateBound(query.from, 'From');
  const to = dateBound(query.to, 'To');
  if (from !== undefined && to !== undefined && from > to) throw new ConsoleInputError(`From (${query.from}) is after To (${query.to}): no event can be in between`);
  if (from !== undefined) filter.from = from;
  if (to !== undefined) filter.to = to;
  if (query.before) {
    const match = /^(\d{4}-\d\d-\d\dT[\d:.]+Z)_([A-Z0-9]{1,40})$/.exec(query.before);
    if (!match) throw new ConsoleInputError('the page position is not valid');
    filter.before = { at: match[1]!, id: match[2]! };
  }
  return filter;
}

const EMPTY_NAMES: PageNames = { users: new Map(), groups: new Map(), clients: new Map(), tokens: new Map(), connections: new Map(), setupLinks: new Map() };

/** The names a page of rows points at: one query per kind, for the whole page. */
export async function pageNames(ctx: ScimContext, rows: readonly RawAudit[]): Promise<PageNames> {
  if (rows.length === 0) return EMPTY_NAMES;
  const users = new Set<string>();
  const groups = new Set<string>();
  const clients = new Set<string>();
  const tokens = new Set<string>();
  const connections = new Set<string>();
  const links = new Set<string>();
  for (const row of rows) {
    const actor = parseJson<ActorJson>(row.actor, {});
    if (typeof actor.setupLinkId === 'string') links.add(actor.setupLinkId);
    if (row.resource_type === 'SetupLink' && row.resource_id !== null) links.add(row.resource_id);
    if (typeof actor.userId === 'string') users.add(actor.userId);
    if (typeof actor.clientId === 'string') clients.add(actor.clientId);
    const through = row.actor_connection_id ?? actor.connectionId;
    if (typeof through === 'string') connections.add(through);
    if (row.resource_id !== null) {
      if (row.resource_type === 'User') users.add(row.resource_id);
      else if (row.resource_type === 'Group') groups.add(row.resource_id);
      else if (row.resource_type === 'Client') clients.add(row.resource_id);
      else if (row.resource_type === 'Token') tokens.add(row.resource_id);
      else if (row.resource_type === 'Connection') connections.add(row.resource_id);
    }
    const detail = parseJson<Record<string, unknown>>(row.detail, {});
    for (const id of namedMembersOf(detail)) users.add(id);
    if (typeof detail.userId === 'string') users.add(detail.userId);
    if (typeof detail.connectionId === 'string') connections.add(detail.connectionId);
    if ((row.action === 'access_mapped' || row.action === 'access_unmapped') && typeof detail.group === 'string') groups.add(detail.group);
  }
  const ex = ctx.storage.db;
  const [u, g, c, t, named, l] = await Promise.all([
    userNamesByIds(ex, ctx.team.id, [...users]),
    groupNamesByIds(ex, ctx.team.id, [...groups]),
    clientNamesByIds(ex, [...clients]),
    tokenNamesByIds(ex, ctx.team.id, [...tokens]),
    connections.size > 0 ? connectionNames(ex, ctx.team.id, [...connections].slice(0, 5000)) : new Map<string, string>(),
    setupLinkRecipients(ex, ctx.team.id, [...links].slice(0, 5000)),
  ]);
  return {
    users: new Map(u.map((r) => [r.id, r.user_name])),
    groups: new Map(g.map((r) => [r.id, r.display_name])),
    clients: new Map(c.map((r) => [r.id, { name: r.name, ownTeam: r.team_id === ctx.team.id }])),
    tokens: new Map(t.map((r) => [r.id, r.name])),
    connections: named,
    setupLinks: new Map(l.map((r) => [r.id, r.recipient])),
  };
}

/** One page of the audit log, newest first, told as stories. */
export async function auditLog(ctx: ScimContext, query: AuditQuery): Promise<AuditPage> {
  const limit = Math.min(Math.max(query.limit ?? AUDIT_PAGE_SIZE, 1), 200);
  const rows = await filteredAuditEvents(ctx.storage.db, ctx.team.id, await filterOf(ctx, query, limit + 1));
  const page = rows.slice(0, limit);
  const names = await pageNames(ctx, page);
  const last = page.at(-1);
  return { entries: page.map((row) => storyOf(row, names)), next: rows.length > limit && last ? `${last.at}_${last.id}` : undefined };
}
