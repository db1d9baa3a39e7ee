/**
 * Effective access (issue 31, DESIGN.md section 12): what a user may do is what the identity
 * provider assigned to it directly (its SCIM `roles` and `entitlements`, kept as `user_grants`)
 * plus what its groups are mapped to, each with where it came from. Read by the application at
 * `/v2/access` (http/access-plugin.ts) and by the `access` parameter of user lists
 * (scim/access-filter.ts; both lower an entry with scim/held-entry.ts `heldEntry`).
 *
 * Rules:
 * - Which grants hold an entry is scim/held-entry.ts's rule; a catalog entitlement shows the catalog's
 *   type, one outside it the type as stored (none when sent without).
 * - `display` is the catalog's displayName, else the `display` of the user's own element, else
 *   absent.
 * - A deactivated user holds nothing: not listed among holders; read by id, 404 where the team
 *   hides deactivated users, else `active: false` and empty lists. Deleted users are never seen.
 * - Holders are paged by user id with an opaque cursor bound to the team and the entry.
 */
import { issueCursor, readCursor } from '../scim/cursor.ts';
import type { ScimContext } from '../scim/context.ts';
import { typesOf } from '../scim/context.ts';
import { badRequest, notFound } from '../scim/errors.ts';
import { entitlementOf } from '../scim/schema/catalog.ts';
import type { Catalog } from '../scim/schema/catalog.ts';
import { heldEntry } from '../scim/held-entry.ts';
import type { GrantRef } from '../scim/held-entry.ts';
import { holdsName } from '../scim/users.ts';
import { directGrantsOf, groupsMappedTo, holdersPage, mappedGrantsOf } from '../storage/repos/access.ts';
import { userById } from '../storage/repos/users.ts';

export type { GrantRef };

/** Where a user's access came from: assigned directly, or a group it belongs to. */
export type Source = { readonly type: 'direct' } | { readonly type: 'group'; readonly value: string; readonly display: string };

export interface HeldRole {
  readonly value: string;
  readonly display?: string;
  readonly sources: Source[];
}

export interface HeldEntitlement {
  readonly type?: string;
  readonly value: string;
  readonly display?: string;
  readonly sources: Source[];
}

export interface UserAccess {
  readonly id: string;
  readonly userName: string;
  readonly active: boolean;
  readonly roles: HeldRole[];
  readonly entitlements: HeldEntitlement[];
}

export interface Holder {
  readonly id: string;
  readonly userName: string;
  readonly sources: Source[];
}

export interface HoldersPage {
  readonly users: Holder[];
  readonly nextCursor?: string;
}

export const DEFAULT_HOLDERS = 100;
export const MAX_HOLDERS = 1000;
/** What a holders page's `count` may be, said by every refusal of one (a larger count is capped, not refused). */
export const HOLDERS_COUNT_RULE = `count must be an integer of at least 1; above ${MAX_HOLDERS} counts as ${MAX_HOLDERS}`;

const EMPTY_CATALOG: Catalog = { schemas: 'okta', roles: [], types: [] };
const catalogOf = (ctx: ScimContext): Catalog => typesOf(ctx).catalog ?? EMPTY_CATALOG;

/** The `display` of the user's own element of `attribute` holding `value`, if any. */
function elementDisplay(data: Record<string, unknown>, attribute: 'roles' | 'entitlements', value: string): string | undefined {
  const elements = data[attribute];
  if (!Array.isArray(elements)) return undefined;
  for (const e of elements) {
    if (e !== null && typeof e === 'object' && (e as Record<string, unknown>).value === value && typeof (e as Record<string, unknown>).display === 'string') return (e as Record<string, string>).display;
  }
  return undefined;
}

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The user's effective access with its sources (GET /v2/access/users/{id}). */
export async function accessOfUser(ctx: ScimContext, id: string): Promise<UserAccess> {
  const db = ctx.storage.db;
  const row = await userById(db, ctx.team.id, id);
  if (!row || !holdsName(ctx.team.deactivated_users, row)) throw notFound(`User ${id} not found`);
  if (row.active !== 1) return { id: row.id, userName: row.user_name, active: false, roles: [], entitlements: [] };
  const [direct, mapped] = await Promise.all([directGrantsOf(db, ctx.team.id, id), mappedGrantsOf(db, ctx.team.id, id)]);
  const catalog = catalogOf(ctx);
  const data = ctx.storage.hooks.parseJson(row.data) as Record<string, unknown>;
  const roles = new Map<string, { value: string; direct: boolean; groups: Map<string, string> }>();
  const entitlements = new Map<string, { type: string | undefined; value: string; direct: boolean; groups: Map<string, string> }>();
  const role = (value: string) => {
    let held = roles.get(value);
    if (!held) roles.set(value, (held = { value, direct: false, groups: new Map() }));
    return held;
  };
  const entitlement = (type: string | undefined, value: string) => {
    const key = JSON.stringify([type ?? null, value]);
    let held = entitlements.get(key);
    if (!held) entitlements.set(key, (held = { type, value, direct: false, groups: new Map() }));
    return held;
  };
  const typeNamed = (typeKey: string) => catalog.types.find((t) => t.name.toLowerCase() === typeKey)?.name ?? (typeKey === '' ? undefined : typeKey);
  for (const g of direct) {
    if (g.kind === 'role') role(g.value).direct = true;
    else entitlement(entitlementOf(catalog, g.value)?.type.name ?? (g.type === '' ? undefined : g.type), g.value).direct = true;
  }
  for (const m of mapped) {
    const held = m.kind === 'role' ? role(m.value) : entitlement(entitlementOf(catalog, m.value)?.type.name ?? typeNamed(m.typeKey), m.value);
    held.groups.set(m.groupId, m.groupName);
  }
  const sources = (held: { direct: boolean; groups: Map<string, string> }): Source[] => [
    ...(held.direct ? [{ type: 'direct' as const }] : []),
    ...[...held.groups].sort(([a], [b]) => byCodePoint(a, b)).map(([value, display]) => ({ type: 'group' as const, value, display })),
  ];
  const roleNames = new Map(catalog.roles.map((r) => [r.value, r.displayName]));
  return {
    id: row.id,
    userName: row.user_name,
    active: true,
    roles: [...roles.values()].sort((a, b) => byCodePoint(a.value, b.value)).map((held) => {
      const display = roleNames.get(held.value) ?? elementDisplay(data, 'roles', held.value);
      return { value: held.value, ...(display !== undefined ? { display } : {}), sources: sources(held) };
    }),
    entitlements: [...entitlements.values()]
      .sort((a, b) => byCodePoint(a.type ?? '', b.type ?? '') || byCodePoint(a.value, b.value))
      .map((held) => {
        const display = entitlementOf(catalog, held.value)?.entry.displayName ?? elementDisplay(data, 'entitlements', held.value);
        return { ...(held.type !== undefined ? { type: held.type } : {}), value: held.value, ...(display !== undefined ? { display } : {}), sources: sources(held) };
      }),
  };
}

/** What a holders cursor is bound to: the team and the entry as asked. */
const bindingOf = (ctx: ScimContext, grant: GrantRef): string => `access-holders\n${JSON.stringify([ctx.team.id, grant.kind, grant.kind === 'entitlement' ? grant.type : null, grant.value])}`;

/**
 * The active users holding `grant`, by user id, `page.count` (default 100, at most 1000) after
 * `page.cursor` (GET /v2/access/roles/{value}/users and .../entitlements/{type}/{value}/users).
 */
export async function holdersOf(ctx: ScimContext, grant: GrantRef, page: { readonly count?: number; readonly cursor?: string }): Promise<HoldersPage> {
  const count = page.count ?? DEFAULT_HOLDERS;
  if (!Number.isSafeInteger(count) || count < 1) throw badRequest('invalidValue', HOLDERS_COUNT_RULE);
  const limit = Math.min(count, MAX_HOLDERS);
  const binding = bindingOf(ctx, grant);
  const after = page.cursor === undefined || page.cursor === '' ? '' : readCursor(ctx.cursorSecret, binding, page.cursor, ctx.clock.now()).position.id;
  const entry = heldEntry(typesOf(ctx).catalog, grant);
  if (!entry) return { users: [] };
  const db = ctx.storage.db;
  const groups = await groupsMappedTo(db, ctx.team.id, entry);
  const names = new Map(groups.map((g) => [g.id, g.displayName]));
  const rows = await holdersPage(db, ctx.storage.hooks, ctx.team.id, entry, groups, after, limit + 1);
  const users = rows.slice(0, limit).map((r) => ({
    id: r.userId,
    userName: r.userName,
    sources: [
      ...(r.sources.includes('') ? [{ type: 'direct' as const }] : []),
      ...r.sources.filter((s) => s !== '').sort(byCodePoint).map((g) => ({ type: 'group' as const, value: g, display: names.get(g) ?? g })),
    ],
  }));
  const last = users.at(-1);
  return rows.length > limit && last ? { users, nextCursor: issueCursor(ctx.cursorSecret, binding, { direction: 'after', position: { createdAt: '', id: last.id } }, ctx.clock.now()) } : { users };
}
