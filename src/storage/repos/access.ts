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
 * which PostgreSQL does not carry over a join), and stops after `limit` rows. The arms are
 * one UNION ALL statement; the caller merges them (at most arms x limit rows), so the first page
 * of a 100,000-member mapped group reads about `limit` index entries, not 100,000 (the plans are
 * in docs/PERFORMANCE.md). Ids are 20 characters of [A-Z0-9] (src/ids.ts), which every engine
 * and collation orders as JavaScript compares them.
 *
 * Storage knows no SCIM: which entry a request means (a catalog entitlement's type, a type sent
 * without a catalog) is decided by the domain (src/access/effective.ts) and arrives as `HeldEntry`.
 */
import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
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

/** A holder row of one arm: the user, and the group it holds the entry through ('' for direct). */
export interface HolderRow {
  readonly user_id: string;
  readonly user_name: string;
  readonly source: string;
}

/** Arms per statement: SQLite allows at most 500 terms in one compound SELECT. */
const ARMS_PER_STATEMENT = 200;

const ACTIVE = sql`u.active = 1 and u.deleted_at is null`;

/**
 * The holders of `entry` with a user id after `after` ('' for the first page), active and not
 * deleted, in user id order: for each source the first `limit` of its holders, merged and
 * deduplicated here; the first `limit` users with every source among the rows read. A user
 * with an id past the last one returned may hold the entry through more sources than read; the
 * next page reads it again from there.
 */
export async function holdersPage(ex: Executor, teamId: string, entry: HeldEntry, groups: readonly MappedGroup[], after: string, limit: number): Promise<{ userId: string; userName: string; sources: string[] }[]> {
  const types = await directTypes(ex, teamId, entry);
  const arms: RawBuilder<HolderRow>[] = [];
  const direct = (type: RawBuilder<unknown>) =>
    sql<HolderRow>`select x.user_id, u.user_name, '' as source from user_grants x join users u on u.id = x.user_id
      where x.team_id = ${teamId} and x.kind = ${entry.kind} and x.value = ${entry.value} ${type} and x.user_id > ${after} and u.id > ${after} and u.team_id = ${teamId} and ${ACTIVE}
      order by x.user_id limit ${limit}`;
  if (types.length > TYPE_ARMS) arms.push(direct(sql``));
  else for (const type of types) arms.push(direct(sql`and x.type = ${type}`));
  for (const g of groups) {
    arms.push(sql<HolderRow>`select m.user_id, u.user_name, ${g.id} as source from group_members m join users u on u.id = m.user_id
      where m.group_id = ${g.id} and m.user_id > ${after} and u.id > ${after} and u.team_id = ${teamId} and ${ACTIVE}
      order by m.user_id limit ${limit}`);
  }
  const rows: HolderRow[] = [];
  for (let i = 0; i < arms.length; i += ARMS_PER_STATEMENT) {
    const chunk = arms.slice(i, i + ARMS_PER_STATEMENT).map((arm, j) => sql`select * from (${arm}) ${sql.raw(`a${j}`)}`);
    const { rows: read } = await sql<HolderRow>`${sql.join(chunk, sql` union all `)}`.execute(ex);
    rows.push(...read);
  }
  const byUser = new Map<string, { userId: string; userName: string; sources: string[] }>();
  for (const r of rows) {
    const found = byUser.get(r.user_id);
    if (found) {
      if (!found.sources.includes(r.source)) found.sources.push(r.source);
    } else byUser.set(r.user_id, { userId: r.user_id, userName: r.user_name, sources: [r.source] });
  }
  return [...byUser.values()].sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0)).slice(0, limit);
}
