/**
 * Groups rows and their membership rows. Membership is one row per (group, user): adding a
 * member touches one row whatever the group's size, and concurrent adds of different members
 * never conflict. Version bumps are single UPDATE statements (no read-modify-write).
 */
import { sql } from 'kysely';
import { inChunks } from '../../batches.ts';
import type { Expression, SqlBool } from 'kysely';
import { defineChain, runChain } from '../chain.ts';
import type { DialectHooks } from '../dialect.ts';
import { defineLookup, defineStatement, defineWrite, hot } from '../statements.ts';
import type { Db, EventsTable, Executor, GroupMembersTable, GroupsTable, Tx, UsersTable } from '../types.ts';
import { AUDIT_COLUMNS, auditInsert } from './audit.ts';
import type { AuditRow } from './audit.ts';
import { eventInsert } from './events.ts';
import { teamCounts } from './counters.ts';
import { rowCount } from './list-order.ts';
import { listRows } from './paging.ts';
import type { ListPage, ListWindow } from './list/window.ts';

export type GroupRow = GroupsTable;

/** A member as a group's read shows it; `created_at` is when the user joined, the first key of the members' order. */
export type MemberRow = Readonly<Pick<GroupMembersTable, 'group_id' | 'user_id' | 'created_at'> & Pick<UsersTable, 'user_name'>>;

const GROUP_COLUMNS = [
  'id', 'team_id', 'display_name', 'display_name_key', 'display_name_search', 'external_id', 'active', 'data', 'version', 'created_at', 'updated_at',
] as const satisfies readonly (keyof GroupRow)[];

// The statements of every group request, compiled once (statements.ts).
const GROUP_BY_ID = defineLookup<{ teamId: string; id: string }, GroupRow>('groupById', ['teamId', 'id'], (db, p) =>
  db.selectFrom('groups').selectAll().where('team_id', '=', p.teamId).where('id', '=', p.id),
);

const UPDATE_GROUP = defineStatement<GroupRow & { expectedVersion: number }, unknown>('updateGroup', [...GROUP_COLUMNS, 'expectedVersion'], (db, p) => {
  const { id, team_id, created_at, expectedVersion, ...changes } = p;
  return db.updateTable('groups').set(changes).where('id', '=', id).where('team_id', '=', team_id).where('version', '=', expectedVersion);
});

/** The group's version bumped and its lastModified set; on PostgreSQL the row stays locked until the statement's transaction ends. */
const bumpGroup = (db: Db, p: { teamId: string; groupId: string; at: string }) =>
  db
    .updateTable('groups')
    .set((eb) => ({ version: eb('version', '+', 1), updated_at: p.at }))
    .where('id', '=', p.groupId)
    .where('team_id', '=', p.teamId);

const TOUCH_GROUP = defineStatement<{ teamId: string; groupId: string; at: string }, GroupRow>('touchGroup', ['teamId', 'groupId', 'at'], (db, p) => bumpGroup(db, p).returningAll());

/** One member of one group, changed at `at`. */
interface MemberParams {
  readonly teamId: string;
  readonly groupId: string;
  readonly userId: string;
  readonly at: string;
}

// One member added, its look-up in the insert: the user id is the team's user of that id, NULL
// when there is none, which the column's NOT NULL refuses (`isUnknownMember`). A write whose
// outcome nobody reads, so on PostgreSQL it goes with the write's audit row, event and COMMIT.
const addTeamUserAsMemberQuery = (db: Db, p: MemberParams) =>
  db
    .insertInto('group_members')
    .values((eb) => ({
      team_id: p.teamId,
      group_id: p.groupId,
      user_id: eb.selectFrom('users').select('users.id').where('users.team_id', '=', p.teamId).where('users.id', '=', p.userId),
      created_at: p.at,
      // The member's folded userName (migration 034); '' beside the NULL user id of no user.
      user_name_search: eb.fn.coalesce(eb.selectFrom('users').select('users.user_name_search').where('users.team_id', '=', p.teamId).where('users.id', '=', p.userId), sql.lit('')),
    }))
    .onConflict((oc) => oc.columns(['group_id', 'user_id']).doNothing());

const ADD_TEAM_USER_AS_MEMBER = defineWrite<MemberParams>('addTeamUserAsMember', ['teamId', 'groupId', 'userId', 'at'], addTeamUserAsMemberQuery);

const removeMemberQuery = (db: Db, p: { groupId: string; userId: string }) =>
  db.deleteFrom('group_members').where('group_id', '=', p.groupId).where('user_id', '=', p.userId);

const REMOVE_MEMBER = defineStatement<{ groupId: string; userId: string }, unknown>('removeMember', ['groupId', 'userId'], removeMemberQuery);

/** The event of a group write whose version, externalId and document come from the row it bumps. */
export type BumpedEvent = Omit<EventsTable, 'seq' | 'version' | 'external_id' | 'data'>;

/** What a lone member's addition or removal records: its audit row and its event (events/feed.ts recordGroupBump). */
export interface BumpRecord {
  readonly audit: AuditRow;
  readonly event: BumpedEvent;
}

const BUMPED_EVENT_COLUMNS = ['team_id', 'at', 'type', 'resource_type', 'resource_id', 'changed', 'actor', 'txn', 'members'] as const satisfies readonly (keyof BumpedEvent)[];

/** A lone member's change with its record, flat (a statement's parameters are named values): `audit_<column>`, `event_<column>`. */
type LoneMemberParams = MemberParams & { [K in (typeof AUDIT_COLUMNS)[number] as `audit_${K}`]: AuditRow[K] } & { [K in (typeof BUMPED_EVENT_COLUMNS)[number] as `event_${K}`]: BumpedEvent[K] };

/** The audit row and the event of a lone member's change, from its parameters. */
const auditOf = (p: LoneMemberParams): AuditRow => Object.fromEntries(AUDIT_COLUMNS.map((c) => [c, p[`audit_${c}`]])) as unknown as AuditRow;
const eventOf = (p: LoneMemberParams): BumpedEvent => Object.fromEntries(BUMPED_EVENT_COLUMNS.map((c) => [c, p[`event_${c}`]])) as unknown as BumpedEvent;

/**
 * A lone member's change (chain.ts; on PostgreSQL one sole statement): the group's new version,
 * the membership's insert or delete (`member`), the audit row and the event with the version,
 * externalId and document of the bumped row. Every step after the bump reads its row, so when the
 * team has no such group nothing at all is written.
 */
const loneMemberChain = (name: string, member: 'add' | 'remove') =>
  defineChain<LoneMemberParams, { version: number }>(
    name,
    ['teamId', 'groupId', 'userId', 'at', ...AUDIT_COLUMNS.map((c) => `audit_${c}` as const), ...BUMPED_EVENT_COLUMNS.map((c) => `event_${c}` as const)],
    [
      { name: 'touchGroup', as: 'g', returns: ['version', 'external_id', 'data'], build: bumpGroup },
      member === 'add' ? { name: 'addTeamUserAsMember', after: 'g', build: addTeamUserAsMemberQuery } : { name: 'removeMember', after: 'g', build: removeMemberQuery },
      { name: 'insertAuditEvent', after: 'g', build: (db, p) => auditInsert(db, auditOf(p)) },
      {
        name: 'appendEvent',
        after: 'g',
        build: (db, p, hooks) =>
          eventInsert(db, { ...eventOf(p), version: sql.ref<number>('g.version'), external_id: sql.ref<string | null>('g.external_id'), data: sql.ref<string>('g.data') }, hooks)
            .returning('version'),
      },
    ],
    { sole: true },
  );

const ADD_LONE_MEMBER = loneMemberChain('addLoneMember', 'add');
const REMOVE_LONE_MEMBER = loneMemberChain('removeLoneMember', 'remove');

const GROUPS_OF_USER = defineStatement<{ teamId: string; userId: string }, { user_id: string; group_id: string; display_name: string }>(
  'groupsOfUser',
  ['teamId', 'userId'],
  (db, p) =>
    db
      .selectFrom('group_members as m')
      .innerJoin('groups as g', 'g.id', 'm.group_id')
      .select(['m.user_id', 'm.group_id', 'g.display_name'])
      .where('m.team_id', '=', p.teamId)
      .where('m.user_id', '=', p.userId)
      .orderBy('g.display_name_key')
      .orderBy('g.id'),
);

export async function insertGroup(ex: Executor, row: GroupRow): Promise<void> {
  await ex.insertInto('groups').values(row).execute();
}

export async function groupById(ex: Executor, teamId: string, id: string): Promise<GroupRow | undefined> {
  return hot(ex).first(ex, GROUP_BY_ID, { teamId, id });
}

/** The team's groups among `ids`, in no particular order. */
export async function groupsByIds(ex: Executor, teamId: string, ids: readonly string[]): Promise<GroupRow[]> {
  // Looked up by primary key, the team checked on the rows (see existingUserIds).
  const rows: GroupRow[] = [];
  await inChunks(ids, 500, async (chunk) => {
    for (const row of await ex.selectFrom('groups').selectAll().where('id', 'in', chunk).execute()) if (row.team_id === teamId) rows.push(row);
  });
  return rows;
}

/** The ids among `ids` that are groups of the team (a member refused: was it a nested group?). */
export async function existingGroupIds(ex: Executor, teamId: string, ids: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await ex.selectFrom('groups').select('id').where('team_id', '=', teamId).where('id', 'in', ids.slice(i, i + 500)).execute();
    for (const r of rows) found.add(r.id);
  }
  return found;
}

export async function updateGroup(ex: Executor, row: GroupRow, expectedVersion: number): Promise<boolean> {
  return (await hot(ex).run(ex, UPDATE_GROUP, { ...row, expectedVersion })) === 1;
}

/**
 * Bumps version and lastModified atomically (on PostgreSQL the row stays locked to the end of the
 * caller's transaction); answers the row as it is now, or undefined if there is none.
 */
export async function touchGroup(ex: Executor, teamId: string, id: string, at: string): Promise<GroupRow | undefined> {
  return hot(ex).first(ex, TOUCH_GROUP, { teamId, groupId: id, at });
}

/**
 * A lone member added to or removed from a group (a PATCH of the members alone that adds or
 * removes one: what identity providers send most), recorded: the group's version bumped, the
 * membership inserted if the member is a user of the team (otherwise the write is refused with
 * the error `isUnknownMember` tells) or deleted, and `record`'s audit row and event written with
 * the new version, the group's externalId and its document. Answers the new version, or
 * undefined, with nothing written, when the team has no such group. On PostgreSQL it is one sole
 * statement, which must be its transaction's first (see `defineSole`), so the group's row is
 * locked only while it runs.
 */
export async function changeLoneMember(trx: Tx, p: MemberParams, change: 'add' | 'remove', record: BumpRecord): Promise<number | undefined> {
  const params = { ...p } as Record<string, unknown>;
  for (const c of AUDIT_COLUMNS) params[`audit_${c}`] = record.audit[c];
  for (const c of BUMPED_EVENT_COLUMNS) params[`event_${c}`] = record.event[c];
  const row = await runChain(trx, change === 'add' ? ADD_LONE_MEMBER : REMOVE_LONE_MEMBER, params as unknown as LoneMemberParams);
  return row === undefined ? undefined : Number(row.version);
}

export async function deleteGroup(ex: Executor, teamId: string, id: string): Promise<boolean> {
  await ex.deleteFrom('group_members').where('group_id', '=', id).where('team_id', '=', teamId).execute();
  const result = await ex.deleteFrom('groups').where('id', '=', id).where('team_id', '=', teamId).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/** A page of the team's groups (repos/paging.ts `listRows`). */
export const listGroups = (ex: Executor, teamId: string, window: ListWindow): Promise<ListPage<GroupRow>> => listRows<GroupRow>(ex, 'groups', teamId, window);

/** Where a member stands in its group's list: membership time, then user id (RFC 7643 leaves the order open). */
export interface MemberPosition {
  readonly created_at: string;
  readonly user_id: string;
}

function memberRows(ex: Executor, teamId: string, onlyActive: boolean) {
  let query = ex
    .selectFrom('group_members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['m.group_id', 'm.user_id', 'u.user_name', 'm.created_at'])
    .where('m.team_id', '=', teamId)
    // A deleted user (DESIGN.md 4, visible teams) is in no group's member list.
    .where('u.deleted_at', 'is', null);
  if (onlyActive) query = query.where('u.active', '=', 1);
  return query;
}

/**
 * Up to `limit` members of one group in list order, after `after` when given (keyset over the
 * membership rows, served by the group_members (group_id, created_at, user_id) index): a
 * group of any size is read one bounded chunk at a time. Deactivated users left out when asked.
 */
export async function memberChunk(
  ex: Executor,
  teamId: string,
  groupId: string,
  onlyActive: boolean,
  limit: number,
  after?: MemberPosition,
): Promise<MemberRow[]> {
  let query = memberRows(ex, teamId, onlyActive).where('m.group_id', '=', groupId);
  // A row-value comparison, which both planners turn into a range of the index; the equivalent
  // `c > x or (c = x and id > y)` is not a range: SQLite would walk the group's rows from its
  // first to the position on every chunk, and reading a big group would cost the square of its size.
  if (after) query = query.where(sql<SqlBool>`((m.created_at, m.user_id) > (${after.created_at}, ${after.user_id}))`);
  return query.orderBy('m.created_at').orderBy('m.user_id').limit(rowCount(limit)).execute();
}

/**
 * The first `perGroup` members of each of the given groups, in one query (for a page of
 * groups): grouped by group id, each group's in list order. Memory is bounded by the page, not
 * by the size of its groups; a group that fills its share continues with memberChunk.
 */
export async function firstMembers(
  ex: Executor,
  teamId: string,
  groupIds: readonly string[],
  onlyActive: boolean,
  perGroup: number,
): Promise<MemberRow[]> {
  if (groupIds.length === 0) return [];
  const ranked = memberRows(ex, teamId, onlyActive)
    .select(sql<number>`row_number() over (partition by m.group_id order by m.created_at, m.user_id)`.as('rank'))
    .where('m.group_id', 'in', groupIds);
  return ex
    .selectFrom(ranked.as('r'))
    .select(['r.group_id', 'r.user_id', 'r.user_name', 'r.created_at'])
    .where('r.rank', '<=', perGroup)
    .orderBy('r.group_id')
    .orderBy('r.created_at')
    .orderBy('r.user_id')
    .execute();
}

/** The groups of the given users: (user_id, group_id, display_name). */
export async function groupsOfUsers(
  ex: Executor,
  teamId: string,
  userIds: readonly string[],
): Promise<{ user_id: string; group_id: string; display_name: string }[]> {
  if (userIds.length === 0) return [];
  if (userIds.length === 1) return hot(ex).all(ex, GROUPS_OF_USER, { teamId, userId: userIds[0]! });
  return ex
    .selectFrom('group_members as m')
    .innerJoin('groups as g', 'g.id', 'm.group_id')
    .select(['m.user_id', 'm.group_id', 'g.display_name'])
    .where('m.team_id', '=', teamId)
    .where('m.user_id', 'in', userIds)
    .orderBy('g.display_name_key')
    .orderBy('g.id')
    .execute();
}

/**
 * Adds one member, or nothing if it is one already. Should `userId` be no user of the team, the
 * write fails with an error `isUnknownMember` recognises: on SQLite here, on PostgreSQL at the
 * latest when its transaction commits (the insert waits for the transaction's other writes).
 */
export async function addTeamUserAsMember(ex: Executor, teamId: string, groupId: string, userId: string, at: string): Promise<void> {
  await hot(ex).write(ex, ADD_TEAM_USER_AS_MEMBER, { teamId, groupId, userId, at });
}

/** Whether `error` is `addTeamUserAsMember`'s refusal of a member who is no user of the team. */
export const isUnknownMember = (hooks: DialectHooks, error: unknown): boolean => hooks.notNullColumn(error) === 'group_members.user_id';

/** Membership rows per statement of a big write; the event loop turns between statements (batches.ts inChunks). */
const MEMBER_CHUNK = 500;

/**
 * Inserts membership rows for `userIds` (users of the team, as the caller checked), ignoring the
 * ones that exist (adds are idempotent), each with its user's folded userName read from the user
 * row (migration 034). The users are found by primary key alone: with `team_id = ?` beside `id IN
 * (...)` SQLite's planner would read the whole team from a team index.
 */
export async function addMembers(
  ex: Executor,
  teamId: string,
  groupId: string,
  userIds: readonly string[],
  at: string,
): Promise<void> {
  await inChunks(userIds, MEMBER_CHUNK, async (chunk) => {
    await ex
      .insertInto('group_members')
      .columns(['team_id', 'group_id', 'user_id', 'created_at', 'user_name_search'])
      .expression(
        ex
          .selectFrom('users as u')
          .select([sql.val(teamId).as('team_id'), sql.val(groupId).as('group_id'), 'u.id as user_id', sql.val(at).as('created_at'), 'u.user_name_search'])
          .where('u.id', 'in', chunk),
      )
      .onConflict((oc) => oc.columns(['group_id', 'user_id']).doNothing())
      .execute();
  });
}

/** A user's memberships take its new folded userName (a rename, in the rename's transaction; migration 034). */
export async function renameMemberships(ex: Executor, userId: string, userNameSearch: string): Promise<void> {
  await ex.updateTable('group_members').set({ user_name_search: userNameSearch }).where('user_id', '=', userId).execute();
}

export async function removeMembers(ex: Executor, groupId: string, userIds: readonly string[]): Promise<void> {
  if (userIds.length === 1) {
    await hot(ex).run(ex, REMOVE_MEMBER, { groupId, userId: userIds[0]! });
    return;
  }
  await inChunks(userIds, MEMBER_CHUNK, async (chunk) => {
    await ex.deleteFrom('group_members').where('group_id', '=', groupId).where('user_id', 'in', chunk).execute();
  });
}

/** Removes every member except `keep`. */
export async function clearMembers(ex: Executor, groupId: string, keep: readonly string[]): Promise<void> {
  let query = ex.deleteFrom('group_members').where('group_id', '=', groupId);
  if (keep.length > 0 && keep.length <= 10_000) query = query.where('user_id', 'not in', keep);
  await query.execute();
}

export type MembershipFilter = Expression<SqlBool>;

/** Up to this many hidden users (deleted, or deactivated in a team that hides them), a group's pages find them first. */
const FEW_HIDDEN_USERS = 10_000;
/** Up to this many hidden members, a group's member page leaves them out by id while it walks the membership index. */
const FEW_HIDDEN_MEMBERS = 500;

/**
 * The hidden members of each of `groupIds` (deleted users, and deactivated ones when `onlyActive`),
 * when the team's counters say its hidden users are few: found from the users' side (migration
 * 033's indexes), so that a group's members are counted and paged in the membership index without
 * reading each member's user row. Undefined when the team hides too many for that.
 */
async function hiddenMembers(ex: Executor, teamId: string, groupIds: readonly string[], onlyActive: boolean): Promise<Map<string, string[]> | undefined> {
  const counters = await teamCounts(ex, teamId);
  if (counters.usersDeleted + (onlyActive ? counters.usersDeactivated : 0) > FEW_HIDDEN_USERS) return undefined;
  const hidden = new Map<string, string[]>();
  const kinds = [...(counters.usersDeleted > 0 ? ['deleted' as const] : []), ...(onlyActive && counters.usersDeactivated > 0 ? ['deactivated' as const] : [])];
  for (const kind of kinds) {
    let query = ex.selectFrom('users as u').innerJoin('group_members as m', 'm.user_id', 'u.id').select(['m.group_id', 'm.user_id']).where('u.team_id', '=', teamId).where('m.group_id', 'in', groupIds);
    query = kind === 'deleted' ? query.where('u.deleted_at', 'is not', null) : query.where('u.active', '=', 0).where('u.deleted_at', 'is', null);
    for (const row of await query.execute()) hidden.set(row.group_id, [...(hidden.get(row.group_id) ?? []), row.user_id]);
  }
  return hidden;
}

/** A group's membership rows, read from its index alone. */
const membershipRows = (ex: Executor, teamId: string, groupId: string) =>
  ex.selectFrom('group_members as m').select(['m.user_id', 'm.created_at']).where('m.group_id', '=', groupId).where('m.team_id', '=', teamId);

/**
 * How many members each of `groupIds` has, each counted over at most `cap` + 1 membership rows
 * (a page of groups costs at most that many rows per group, whatever their size). Deactivated
 * users left out when asked, as the member lists leave them out. When the team's hidden users are
 * few (hiddenMembers), each group's membership rows are counted in its own index without reading
 * a user: the visible members are the rows less the hidden ones, and counting up to `cap` + 1 +
 * the hidden ones still says "more than `cap`" exactly when it is so.
 */
export async function memberCountsUpTo(ex: Executor, teamId: string, groupIds: readonly string[], onlyActive: boolean, cap: number): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (groupIds.length === 0) return counts;
  const hidden = await hiddenMembers(ex, teamId, groupIds, onlyActive);
  for (const groupId of groupIds) {
    const less = hidden === undefined ? 0 : (hidden.get(groupId)?.length ?? 0);
    const rows = hidden === undefined ? memberRows(ex, teamId, onlyActive).where('m.group_id', '=', groupId) : membershipRows(ex, teamId, groupId);
    const row = await ex.selectFrom(rows.limit(rowCount(cap + 1 + less)).as('t')).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
    counts.set(groupId, Number(row.n) - less);
  }
  return counts;
}

/**
 * One page of a group's members from `offset`, and how many there are, counted over at most
 * `cap` + 1 rows. Without `prefix`, in list order (join time, then user id). With `prefix` (the
 * console's member search, folded by text.ts searchFold), those whose accent-folded userName starts
 * with it, in that folded userName's order: one range of the group's `group_members_search` index
 * (migration 034), whatever the group's size and however many users of the team outside it share
 * the prefix.
 *
 * When the team's hidden users are few (hiddenMembers), the page and the count walk the
 * membership index alone, leaving the group's hidden members out by id, and only the page's
 * members' user rows are read; otherwise each member's user row is read to leave them out.
 */
export async function memberPage(
  ex: Executor,
  hooks: DialectHooks,
  teamId: string,
  groupId: string,
  options: { readonly onlyActive: boolean; readonly prefix?: string; readonly offset: number; readonly limit: number; readonly cap: number },
): Promise<{ rows: MemberRow[]; total: number }> {
  const { prefix } = options;
  // The page's order: by the folded userName for a search (its index's order), else by join time.
  const [key, tie] = [prefix ? hooks.ordered(sql.ref('m.user_name_search')) : sql.ref('m.created_at'), sql.ref('m.user_id')];
  const found = await hiddenMembers(ex, teamId, [groupId], options.onlyActive);
  const hidden = found?.get(groupId) ?? [];
  if (found !== undefined && hidden.length <= FEW_HIDDEN_MEMBERS) {
    let walk = membershipRows(ex, teamId, groupId);
    if (prefix) walk = walk.where(hooks.startsWith(sql.ref('m.user_name_search'), prefix));
    if (hidden.length > 0) walk = walk.where('m.user_id', 'not in', hidden);
    const ids = (await walk.orderBy(key).orderBy(tie).limit(rowCount(options.limit)).offset(rowCount(options.offset)).execute()).map((r) => r.user_id);
    const users = ids.length === 0 ? [] : await memberRows(ex, teamId, options.onlyActive).where('m.group_id', '=', groupId).where('m.user_id', 'in', ids).execute();
    const byId = new Map(users.map((u) => [u.user_id, u]));
    const counted = await ex.selectFrom(walk.limit(rowCount(options.cap + 1)).as('t')).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
    return { rows: ids.flatMap((id) => byId.get(id) ?? []), total: Number(counted.n) };
  }
  let base = memberRows(ex, teamId, options.onlyActive).where('m.group_id', '=', groupId);
  if (prefix) base = base.where(hooks.startsWith(sql.ref('m.user_name_search'), prefix));
  const rows = await base.orderBy(key).orderBy(tie).limit(rowCount(options.limit)).offset(rowCount(options.offset)).execute();
  const counted = await ex.selectFrom(base.limit(rowCount(options.cap + 1)).as('t')).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  return { rows, total: Number(counted.n) };
}
