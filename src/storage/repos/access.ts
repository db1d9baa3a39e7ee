/**
 * Effective access in SQL (issue 31): what a user holds directly (`user_grants`, the provider's
 * `roles` / `entitlements`) plus what the groups it belongs to are mapped to (`access_mappings`
 * through `group_members`), and the reverse, who holds one entry.
 *
 * "Who holds this entry" is read page by page in user id order without sorting the holders: each
 * source of the entry (each stored `type` its direct grants were sent with, each mapped group) is
 * one arm that reads its holders past the cursor from an index already ordered by user id
 * (`user_grants_pk` (team, kind, value, type, user_id), `group_members_pk` (group_id, user_id)),
 * joined to `users` by key for active and not deleted (the cursor bound repeated on `users.id`,
 * which PostgreSQL does not carry over a join). The engine merges the arms in user id order and
 * stops after `limit` distinct users (`DialectHooks.mergeUserIds`), so the first page of a
 * 100,000-member mapped group reads about `limit` index entries, not 100,000, and no page brings
 * more than a few times `limit` rows into JavaScript, however many groups are mapped (the plans are
 * in docs/PERFORMANCE.md). Ids are 20 characters of [A-Z0-9] (src/ids.ts), which every engine
 * and collation orders as JavaScript compares them.
 *
 * Storage knows no SCIM: which entry a request means (a catalog entitlement's type, a type sent
 * without a catalog) is decided by the domain (src/access/effective.ts) and arrives as `HeldEntry`.
 */
import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import type { DialectHooks } from '../dialect.ts';
import type { Executor, UserGrantsTable } from '../types.ts';

export type GrantKind = UserGrantsTable['kind'];

/** One entry as storage matches it: direct grants of `value` (with the stored `type` `directType`, or any), mappings (of type key `mappedTypeKey`, or any). */
export interface HeldEntry {
  readonly kind: GrantKind;
  readonly value: string;
  /** Only direct grants stored with exactly this `type`; any type when absent. */
  readonly directType?: string;
  /** Only mappings of this type key; any when absent. */
  readonly mappedTypeKey?: string;
}

/** A user's direct grant, as stored. */
export interface DirectGrant {
  readonly kind: GrantKind;
  readonly value: string;
  readonly type: string;
}

/** What one of a user's groups is mapped to. */
export interface MappedGrant {
  readonly kind: GrantKind;
  readonly value: string;
  readonly typeKey: string;
  readonly groupId: string;
  readonly groupName: string;
}

/** A user's direct grants (`user_grants_user`). */
export async function directGrantsOf(ex: Executor, teamId: string, userId: string): Promise<DirectGrant[]> {
  return ex.selectFrom('user_grants').select(['kind', 'value', 'type']).where('user_id', '=', userId).where('team_id', '=', teamId).execute();
}

/** What the user's groups map to, with each group (`group_members_user`, then `access_mappings_group`). */
export async function mappedGrantsOf(ex: Executor, teamId: string, userId: string): Promise<MappedGrant[]> {
  // CROSS JOIN: SQLite reads the user's memberships first, whatever its statistics say.
  const rows = await ex
    .selectFrom('group_members as m')
    .crossJoin('access_mappings as am')
    .crossJoin('groups as g')
    .select(['am.kind', 'am.value', 'am.type_key', 'm.group_id', 'g.display_name'])
    .whereRef('am.group_id', '=', 'm.group_id')
    .whereRef('g.id', '=', 'm.group_id')
    .where('m.user_id', '=', userId)
    .where('am.team_id', '=', teamId)
    .where('g.team_id', '=', teamId)
    .execute();
  return rows.map((r) => ({ kind: r.kind, value: r.value, typeKey: r.type_key, groupId: r.group_id, groupName: r.display_name }));
}

/** A group mapped to an entry. */
export interface MappedGroup {
  readonly id: string;
  readonly displayName: string;
}

/** The groups of the team mapped to `entry`, by id (`access_mappings_pk`). */
export async function groupsMappedTo(ex: Executor, teamId: string, entry: HeldEntry): Promise<MappedGroup[]> {
  let q = ex
    .selectFrom('access_mappings as am')
    .innerJoin('groups as g', 'g.id', 'am.group_id')
    .select(['am.group_id as id', 'g.display_name as displayName'])
    .where('am.team_id', '=', teamId)
    .where('am.kind', '=', entry.kind)
    .where('am.value', '=', entry.value)
    .where('g.team_id', '=', teamId);
  if (entry.mappedTypeKey !== undefined) q = q.where('am.type_key', '=', entry.mappedTypeKey);
  return q.orderBy('am.group_id').execute();
}

/** The most stored types of an entry's direct grants read one arm each; more are read as one sorted arm. */
export const TYPE_ARMS = 16;

/**
 * The distinct stored `type`s of the entry's direct grants (a loose index scan of
 * `user_grants_pk`: one probe per type), at most TYPE_ARMS + 1.
 */
async function directTypes(ex: Executor, teamId: string, entry: HeldEntry): Promise<string[]> {
  if (entry.directType !== undefined) return [entry.directType];
  const { rows } = await sql<{ type: string }>`
    with recursive t(type) as (
      select min(type) from user_grants where team_id = ${teamId} and kind = ${entry.kind} and value = ${entry.value}
      union all
      select (select min(g.type) from user_grants g where g.team_id = ${teamId} and g.kind = ${entry.kind} and g.value = ${entry.value} and g.type > t.type)
      from t where t.type is not null
    )
    select type from t where type is not null limit ${TYPE_ARMS + 1}`.execute(ex);
  return rows.map((r) => r.type);
}

/** Arms per statement: SQLite allows at most 500 terms in one compound SELECT. */
const ARMS_PER_STATEMENT = 200;

/**
 * An arm's user is active and not deleted. Not `u.team_id = ?`: SQLite may then read the users by
 * `users_team_created` (the whole team, per row) instead of by id; the team is checked once per
 * page instead (holdersPage).
 */
const ACTIVE = sql`u.active = 1 and u.deleted_at is null`;

const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The holders of `entry` with a user id after `after` ('' for the first page), active and not
 * deleted, in user id order, the first `limit`, each with every source it holds the entry
 * through ('' for direct, else the mapped group's id).
 *
 * Two steps, each bounded by `limit`, whatever the sources hold:
 * 1. The page's user ids: the sources' arms merged in SQL (`hooks.mergeUserIds`: a merge of the
 *    arms' index orders, distinct, stopping at `limit`), 200 arms per statement; the statements'
 *    answers (at most `limit` ids each, 6 statements for the 1,000 groups `access.mappings`
 *    allows) merged here.
 * 2. The sources of those users only: their direct grants of the entry (`user_grants_user`), and
 *    their memberships (`group_members_user`) in groups mapped to the entry (`access_mappings_pk`).
 * An entry whose direct grants carry more than TYPE_ARMS stored types reads them in one arm that
 * is not in user id order (the engine sorts the entry's direct grants past the cursor); every
 * other arm is an index range.
 */
export async function holdersPage(ex: Executor, hooks: DialectHooks, teamId: string, entry: HeldEntry, groups: readonly MappedGroup[], after: string, limit: number): Promise<{ userId: string; userName: string; sources: string[] }[]> {
  const types = await directTypes(ex, teamId, entry);
  const arms: RawBuilder<unknown>[] = [];
  const direct = (type: RawBuilder<unknown>) =>
    sql`select x.user_id from user_grants x join users u on u.id = x.user_id
      where x.team_id = ${teamId} and x.kind = ${entry.kind} and x.value = ${entry.value} ${type} and x.user_id > ${after} and u.id > ${after} and ${ACTIVE}`;
  if (types.length > TYPE_ARMS) arms.push(direct(sql``));
  else for (const type of types) arms.push(direct(sql`and x.type = ${type}`));
  for (const g of groups) {
    arms.push(sql`select m.user_id from group_members m join users u on u.id = m.user_id
      where m.group_id = ${g.id} and m.user_id > ${after} and u.id > ${after} and ${ACTIVE}`);
  }
  if (arms.length === 0) return [];
  const ids = new Set<string>();
  for (let i = 0; i < arms.length; i += ARMS_PER_STATEMENT) {
    const { rows } = await hooks.mergeUserIds(arms.slice(i, i + ARMS_PER_STATEMENT), limit).execute(ex);
    for (const r of rows) ids.add(r.user_id);
  }
  const page = [...ids].sort(byId).slice(0, limit);
  if (page.length === 0) return [];
  const users = await ex.selectFrom('users').select(['id', 'user_name']).where('id', 'in', page).where('team_id', '=', teamId).execute();
  const sources = new Map<string, string[]>(page.map((id) => [id, []]));
  let held = ex.selectFrom('user_grants').select('user_id').distinct().where('user_id', 'in', page).where('team_id', '=', teamId).where('kind', '=', entry.kind).where('value', '=', entry.value);
  if (entry.directType !== undefined) held = held.where('type', '=', entry.directType);
  for (const r of await held.execute()) sources.get(r.user_id)?.push('');
  if (groups.length > 0) {
    // The page's users' memberships (group_members_user), each probing the entry's mappings (access_mappings_pk).
    const mapped = new Set(groups.map((g) => g.id));
    let members = ex
      .selectFrom('group_members as m')
      .innerJoin('access_mappings as am', 'am.group_id', 'm.group_id')
      .select(['m.user_id', 'm.group_id'])
      .where('m.user_id', 'in', page)
      .where('am.team_id', '=', teamId)
      .where('am.kind', '=', entry.kind)
      .where('am.value', '=', entry.value);
    if (entry.mappedTypeKey !== undefined) members = members.where('am.type_key', '=', entry.mappedTypeKey);
    for (const r of await members.execute()) if (mapped.has(r.group_id)) sources.get(r.user_id)?.push(r.group_id);
  }
  const names = new Map(users.map((u) => [u.id, u.user_name]));
  // The arms' sources are the team's (its grants rows, its groups), so their users are; the team is checked here, once per page.
  return page.filter((id) => names.has(id)).map((id) => ({ userId: id, userName: names.get(id)!, sources: sources.get(id) ?? [] }));
}
