/**
 * The Groups service: create, read, list, replace, patch and delete. Membership changes are row
 * inserts and deletes on `group_members` plus one atomic version bump of the group, so adding a
 * member costs the same in a group of ten or of 100,000, and concurrent membership PATCHes never
 * lose each other's work. Only changes to the group's own document (displayName, externalId,
 * active) go through the optimistic version check. A response that shows `members` reads them
 * in chunks and streams them (members.ts); one that does not never reads a membership row.
 */
import { changedAttributes } from '../audit/events.ts';
import { iso } from '../clock.ts';
import { recordGroupBump, recordRowWrite } from '../events/feed.ts';
import type { AuditNote, ChangeType, MembersDelta } from '../events/feed.ts';
import { newId } from '../ids.ts';
import {
  addMembers,
  addTeamUserAsMember,
  changeLoneMember,
  clearMembers,
  deleteGroup as deleteGroupRow,
  groupById,
  existingGroupIds,
  insertGroup,
  isUnknownMember,
  listGroups as listGroupRows,
  removeMembers,
  touchGroup,
  updateGroup,
} from '../storage/repos/groups.ts';
import type { GroupRow } from '../storage/repos/groups.ts';
import { addCounts } from '../storage/repos/counters.ts';
import { existingUserIds } from '../storage/repos/users.ts';
import type { Executor, Tx } from '../storage/types.ts';
import { columnsOf } from './columns.ts';
import { hidesDeactivated, lowering, typesOf } from './context.ts';
import type { ScimContext } from './context.ts';
import { badRequest, conflict, notFound, preconditionFailed } from './errors.ts';
import type { ScimError } from './errors.ts';
import { lowerFilter, lowerSort } from './filter/lower.ts';
import { unmapDeletedGroup } from './group-mappings.ts';
import { readMembersHeads, withMembersTail } from './members.ts';
import type { MembersHead } from './members.ts';
import { budgetedPage, listResult, pageWindow } from './paging.ts';
import { scanning } from './scans.ts';
import type { ListResult } from './representation.ts';
import { applyPatch, membersOnlyChange } from './patch.ts';
import type { MemberDelta } from './patch.ts';
import { projectResource, wantsAttribute } from './project.ts';
import type { Projection } from './project.ts';
import type { ListQuery } from './query.ts';
import { checkIfMatch, etagOf, groupResource } from './representation.ts';
import type { Resource } from './representation.ts';
import { commonAttributes } from './schema/common.ts';
import type { Preconditions, Versioned } from './users.ts';
import { claimExtensionValues, releaseExtensionValues } from './unique.ts';
import { validateResource, withoutHidden } from './validate.ts';
import type { ValidatedResource } from './validate.ts';
import { RetryWrite, runWrite } from './write.ts';
import { searchFold } from '../text.ts';
import { whereOf } from './query.ts';

const parseData = (ctx: ScimContext, row: GroupRow): Record<string, unknown> => ctx.storage.hooks.parseJson(row.data);

/** The group as the response shows it; `members` (read only when shown) stream past their head. */
function shape(ctx: ScimContext, row: GroupRow, head: MembersHead | undefined, projection: Projection): Resource {
  const rt = typesOf(ctx).Group;
  const resource = projectResource(rt, groupResource(rt, row, parseData(ctx, row), head?.rows, ctx.baseUrl), projection);
  return head ? withMembersTail(ctx, resource, row.id, head, projection) : resource;
}

/** `ex` reads the members' head (a write's transaction); the rest is read after it ends. */
async function render(ctx: ScimContext, ex: Executor, row: GroupRow, projection: Projection): Promise<Versioned> {
  const rt = typesOf(ctx).Group;
  const head = wantsAttribute(rt, projection, 'members') ? (await readMembersHeads(ctx, ex, [row.id])).get(row.id) : undefined;
  return { resource: shape(ctx, row, head, projection), etag: etagOf(row.version), id: row.id };
}

function rowFor(ctx: ScimContext, base: Pick<GroupRow, 'id' | 'team_id' | 'created_at'>, validated: ValidatedResource, version: number): GroupRow {
  const rt = typesOf(ctx).Group;
  const document = { ...validated.document };
  if (document.active === undefined) document.active = true;
  const columns = columnsOf(rt, document, commonAttributes);
  return {
    id: base.id,
    team_id: base.team_id,
    display_name: String(columns.display_name),
    display_name_key: String(columns.display_name_key),
    display_name_search: searchFold(String(columns.display_name)),
    external_id: columns.external_id as string | null,
    active: Number(columns.active),
    data: ctx.storage.hooks.toJson(document),
    version,
    created_at: base.created_at,
    // A new resource was last modified when it was created.
    updated_at: version === 1 ? base.created_at : iso(ctx.clock),
  };
}

const displayNameTaken = (name: string) => conflict(`a group named "${name}" already exists in this team`);

const unknownMembers = (ids: readonly string[]) =>
  badRequest('invalidValue', `unknown member${ids.length > 1 ? 's' : ''}: ${ids.slice(0, 10).join(', ')}`);

/**
 * Why members that are no user of the team are refused: a member that is a group of the team
 * asks for what is not supported (nested groups: members are Users only), anything else is an
 * unknown member. Both 400 invalidValue, naming them.
 */
async function refusedMembers(ctx: ScimContext, ex: Executor, missing: readonly string[]): Promise<ScimError> {
  const groups = [...(await existingGroupIds(ex, ctx.team.id, missing))];
  if (groups.length === 0) return unknownMembers(missing);
  return badRequest('invalidValue', `nested groups are not supported: members are Users, and ${groups.slice(0, 10).join(', ')} ${groups.length > 1 ? 'are Groups' : 'is a Group'}`);
}

async function assertMembersExist(ctx: ScimContext, ex: Executor, ids: readonly string[]): Promise<void> {
  const found = await existingUserIds(ex, ctx.team.id, ids);
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length > 0) throw await refusedMembers(ctx, ex, missing);
}

/** The audit event and the feed event (RFC 9967) of a write to a group, in the write's transaction. */
const write = (ctx: ScimContext, trx: Executor, note: AuditNote, type: ChangeType, row: GroupRow, changed: readonly string[], members?: MembersDelta): Promise<void> =>
  recordRowWrite(ctx, trx, note, type, 'Group', row, changed, members);

/** Member ids in an audit summary: the first hundred, and how many there were. */
const idList = (ids: readonly string[]) => (ids.length <= 100 ? ids : { first: ids.slice(0, 100), count: ids.length });

const membersDelta = (delta: MemberDelta): MembersDelta => ({
  ...(delta.clear ? { cleared: true } : {}),
  ...(delta.add.length > 0 ? { added: delta.add } : {}),
  ...(delta.remove.length > 0 ? { removed: delta.remove } : {}),
});

function memberSummary(delta: MemberDelta): Record<string, unknown> {
  return {
    ...(delta.clear ? { cleared: true } : {}),
    ...(delta.add.length > 0 ? { added: idList(delta.add) } : {}),
    ...(delta.remove.length > 0 ? { removed: idList(delta.remove) } : {}),
  };
}

/**
 * The one member a group write adds by itself (applyMembers), if any: it is looked up in its own
 * insert, which fails should it be no user of the team, on PostgreSQL at the commit.
 */
interface LoneMember {
  id?: string;
}

async function applyMembers(ctx: ScimContext, ex: Executor, groupId: string, delta: MemberDelta, at: string, lone: LoneMember): Promise<void> {
  // One member added (what identity providers send): no look-up first; its insert finds the
  // user or fails (runGroupWrite answers 400 naming it). A 400 rolls back the removals before
  // it with the rest of the write.
  const [one, ...more] = delta.add;
  const single = one !== undefined && more.length === 0;
  if (!single) await assertMembersExist(ctx, ex, delta.add);
  if (delta.clear) await clearMembers(ex, groupId, delta.add);
  else if (delta.remove.length > 0) await removeMembers(ex, groupId, delta.remove);
  if (single) {
    lone.id = one;
    await addTeamUserAsMember(ex, ctx.team.id, groupId, one, at);
  } else if (delta.add.length > 0) {
    await addMembers(ex, ctx.team.id, groupId, delta.add, at);
  }
}

/** runWrite for a group write: a lone member added who is no user of the team is 400 invalidValue naming it. */
async function runGroupWrite<T>(ctx: ScimContext, body: (trx: Tx, lone: LoneMember) => Promise<T>, onUnique?: () => Promise<ScimError>): Promise<T> {
  const lone: LoneMember = {};
  let refusedLone: ScimError | undefined;
  try {
    return await runWrite(
      ctx,
      (trx) => {
        lone.id = undefined;
        return body(trx, lone);
      },
      onUnique,
      (error) => (lone.id !== undefined && isUnknownMember(ctx.storage.hooks, error) ? (refusedLone = unknownMembers([lone.id])) : undefined),
    );
  } catch (error) {
    // The write is rolled back: whether the lone member was a group is read afterwards.
    if (error === refusedLone && lone.id !== undefined) throw await refusedMembers(ctx, ctx.storage.db, [lone.id]);
    throw error;
  }
}

export async function createGroup(ctx: ScimContext, body: unknown, projection: Projection = {}): Promise<Versioned> {
  const rt = typesOf(ctx).Group;
  const validated = validateResource(rt, body, 'create');
  const now = iso(ctx.clock);
  const row = rowFor(ctx, { id: newId(), team_id: ctx.team.id, created_at: now }, validated, 1);
  return runGroupWrite(ctx, async (trx, lone) => {
    await insertGroup(trx, row);
    await claimExtensionValues(ctx, trx, rt, row.id, validated.document);
    if (validated.members) await applyMembers(ctx, trx, row.id, { clear: false, add: validated.members, remove: [] }, now, lone);
    // The answer before the counters: on PostgreSQL the team's counter rows stay locked from
    // their bump to the commit, so nothing else may come between them.
    const rendered = await render(ctx, trx, row, projection);
    const note = { action: 'create', detail: { displayName: row.display_name, members: validated.members?.length ?? 0 } } as const;
    // Members given at creation are among its changed attributes, as they are for a put or a
    // patch: a `:notice` SET names them as the JSON feed shows them.
    const withMembers = validated.members !== undefined && validated.members.length > 0;
    await write(ctx, trx, note, 'create', row, [...Object.keys(validated.document), ...(withMembers ? ['members'] : [])].sort(), withMembers ? { added: validated.members } : undefined);
    await addCounts(trx, ctx.team.id, { groups: 1 });
    return rendered;
  }, async () => displayNameTaken(row.display_name));
}

export async function getGroup(ctx: ScimContext, id: string, projection: Projection = {}): Promise<Versioned> {
  const row = await groupById(ctx.storage.db, ctx.team.id, id);
  if (!row) throw notFound(`Group ${id} not found`);
  return render(ctx, ctx.storage.db, row, projection);
}

export async function listGroups(ctx: ScimContext, query: ListQuery): Promise<ListResult> {
  const rt = typesOf(ctx).Group;
  const window = pageWindow(ctx, rt, query);
  // Members a hidden-deactivation team cannot see do not count in filters either (lowering).
  const where = whereOf(ctx, query);
  const sort = query.words?.sort ?? (query.sortBy ? lowerSort(query.sortBy) : undefined);
  const options = { ...(sort ? { sort } : {}), descending: query.descending };
  // Read and shaped slice by slice within the page's byte budget (paging.ts budgetedPage), under
  // the filter's cost, the team's scans and the statements' deadline (scans.ts).
  const { page, resources, serialized } = await scanning(ctx, [{ table: 'groups', ...(where ? { where } : {}), ...(sort ? { sort } : {}), onlyActive: false }], (read) =>
    budgetedPage(
      window,
      query.count,
      (slice, limit) =>
        read((ex, guard) => {
          const guarded = guard(where);
          return listGroupRows(ex, ctx.team.id, { ...options, ...(guarded ? { where: guarded } : {}), limit, ...slice });
        }),
      (rows) => renderGroupRows(ctx, rows, query.projection),
    ),
  );
  return listResult(ctx, rt, query, window, page, resources, serialized);
}

/** Groups rows of a list or search page as the response shows them (members' heads read in one query). */
export async function renderGroupRows(ctx: ScimContext, rows: readonly GroupRow[], projection: Projection): Promise<Resource[]> {
  const rt = typesOf(ctx).Group;
  const heads = wantsAttribute(rt, projection, 'members') ? await readMembersHeads(ctx, ctx.storage.db, rows.map((r) => r.id)) : undefined;
  return rows.map((row) => shape(ctx, row, heads?.get(row.id), projection));
}

export async function replaceGroup(ctx: ScimContext, id: string, body: unknown, pre: Preconditions = {}, projection: Projection = {}): Promise<Versioned> {
  const rt = typesOf(ctx).Group;
  return runGroupWrite(ctx, async (trx, lone) => {
    const current = await groupById(trx, ctx.team.id, id);
    if (!current) throw notFound(`Group ${id} not found`);
    checkIfMatch(rt, current, pre.ifMatch);
    const validated = validateResource(rt, body, 'replace', parseData(ctx, current));
    const next = rowFor(ctx, current, validated, current.version + 1);
    if (!(await updateGroup(trx, next, current.version))) {
      if (pre.ifMatch !== undefined) throw preconditionFailed(`Group ${id} was changed by another request`);
      throw new RetryWrite();
    }
    await claimExtensionValues(ctx, trx, rt, id, validated.document);
    // PUT replaces everything: members omitted means no members (RFC 7644 3.5.1).
    await applyMembers(ctx, trx, id, { clear: true, add: validated.members ?? [], remove: [] }, next.updated_at, lone);
    const changed = changedAttributes(parseData(ctx, current), validated.document);
    const rendered = await render(ctx, trx, next, projection);
    const note = { action: 'replace', detail: { changed, members: validated.members?.length ?? 0 } } as const;
    await write(ctx, trx, note, 'put', next, [...changed, 'members'].sort(), { cleared: true, added: validated.members ?? [] });
    return rendered;
  }, async () => conflict('a group with that displayName already exists in this team'));
}

/** Answers the new ETag, and the resource only when a projection asked for one. */
export async function patchGroup(
  ctx: ScimContext,
  id: string,
  body: unknown,
  pre: Preconditions = {},
  projection?: Projection,
): Promise<{ etag: string; resource?: Versioned }> {
  const rt = typesOf(ctx).Group;
  // One member added or removed and nothing else (what identity providers send most), with no
  // precondition and no resource to answer: nothing of it depends on the stored group, which is
  // not read first.
  if (pre.ifMatch === undefined && projection === undefined) {
    const lone = loneMemberChange(membersOnlyChange(rt, body));
    if (lone) return changeOneMember(ctx, id, lone);
  }
  return runGroupWrite(ctx, async (trx, lone) => {
    const now = iso(ctx.clock);
    // The group's new version taken first, in the statement that reads the group (one round trip;
    // on PostgreSQL the row stays locked to the commit, so nothing changes it under this write).
    // A failed precondition or a bad request rolls the bump back with the rest.
    const touched = await touchGroup(trx, ctx.team.id, id, now);
    if (!touched) throw notFound(`Group ${id} not found`);
    const version = touched.version;
    // As stored before this write, but for lastModified (already this write's; nothing here reads it).
    const current: GroupRow = { ...touched, version: version - 1 };
    checkIfMatch(rt, current, pre.ifMatch);
    const original = parseData(ctx, current);
    const visible = withoutHidden(rt, original);
    const patched = applyPatch(rt, visible, body);
    let row: GroupRow = touched;
    if (JSON.stringify(patched.document) !== JSON.stringify(visible)) {
      const validated = validateResource(rt, patched.document, 'patch', original);
      row = rowFor(ctx, current, validated, version);
      // The version is this write's already: the update keeps it (the row is this write's to change).
      if (!(await updateGroup(trx, row, version))) throw new RetryWrite();
      await claimExtensionValues(ctx, trx, rt, id, validated.document);
    }
    if (patched.members) await applyMembers(ctx, trx, id, patched.members, now, lone);
    const changed = changedAttributes(original, parseData(ctx, row));
    const resource = projection ? await render(ctx, trx, row, projection) : undefined;
    const note: AuditNote = {
      action: changed.length > 0 ? 'patch' : 'members',
      detail: { ...(changed.length > 0 ? { changed } : {}), ...(patched.members ? memberSummary(patched.members) : {}) },
    };
    await write(ctx, trx, note, 'patch', row, patched.members ? [...changed, 'members'].sort() : changed, patched.members ? membersDelta(patched.members) : undefined);
    const etag = etagOf(version);
    return resource ? { etag, resource } : { etag };
  }, async () => conflict('a group with that displayName already exists in this team'));
}

/** A member delta that adds or removes exactly one member and does nothing else. */
interface LoneChange {
  readonly delta: MemberDelta;
  readonly member: string;
  readonly change: 'add' | 'remove';
}

function loneMemberChange(delta: MemberDelta | undefined): LoneChange | undefined {
  if (!delta || delta.clear) return undefined;
  const [one, ...more] = [...delta.add, ...delta.remove];
  if (one === undefined || more.length > 0) return undefined;
  return { delta, member: one, change: delta.add.length === 1 ? 'add' : 'remove' };
}

/** patchGroup's lone member: the group's version, the membership, the audit row and the event written together (repos/groups.ts changeLoneMember). */
async function changeOneMember(ctx: ScimContext, id: string, { delta, member, change }: LoneChange): Promise<{ etag: string }> {
  const version = await runGroupWrite(ctx, (trx, lone) => {
    if (change === 'add') lone.id = member;
    const record = recordGroupBump(ctx, { action: 'members', detail: memberSummary(delta) }, 'patch', id, ['members'], membersDelta(delta));
    return changeLoneMember(trx, { teamId: ctx.team.id, groupId: id, userId: member, at: iso(ctx.clock) }, change, record);
  });
  if (version === undefined) throw notFound(`Group ${id} not found`);
  return { etag: etagOf(version) };
}

export async function deleteGroup(ctx: ScimContext, id: string, pre: Preconditions = {}): Promise<void> {
  const rt = typesOf(ctx).Group;
  await runWrite(ctx, async (trx) => {
    const current = await groupById(trx, ctx.team.id, id);
    if (!current) throw notFound(`Group ${id} not found`);
    checkIfMatch(rt, current, pre.ifMatch);
    // A concurrent delete won (PostgreSQL): the group is gone, and its count with it.
    if (!(await deleteGroupRow(trx, ctx.team.id, id))) throw notFound(`Group ${id} not found`);
    await releaseExtensionValues(ctx, trx, rt, id);
    await unmapDeletedGroup(ctx, trx, id);
    await write(ctx, trx, { action: 'delete', detail: { displayName: current.display_name } }, 'delete', { ...current, version: current.version + 1 }, []);
    await addCounts(trx, ctx.team.id, { groups: -1 });
  });
}
