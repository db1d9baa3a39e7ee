/**
 * A Group's `members` as responses show them, read from the membership rows a bounded chunk at
 * a time, never all at once (a group may have 100,000). The first chunk is read before the
 * response starts: in the caller's transaction for a write, so it shows what the write did, and
 * so that a database failure is an ordinary error answer. When the group may have more, the
 * rest becomes a StreamedArray whose chunks are read (keyset over membership time and user id,
 * outside any transaction, which has ended by then) while the body is written. Callers ask for
 * members only when the projection shows them (project.ts wantsAttribute), so a response
 * without members reads no membership row. The members' order is membership time, then user id.
 */
import { firstMembers, memberChunk } from '../storage/repos/groups.ts';
import type { MemberRow } from '../storage/repos/groups.ts';
import type { Executor } from '../storage/types.ts';
import { hidesDeactivated, typesOf } from './context.ts';
import type { ScimContext } from './context.ts';
import { StreamedArray } from './json-stream.ts';
import { projectResource } from './project.ts';
import type { Projection } from './project.ts';
import { memberValues } from './representation.ts';
import type { Resource } from './representation.ts';

/** Members read at most before a single group's response starts (its first chunk). */
export const MEMBER_CHUNK = 1000;

/**
 * Members read per query once the response has started: fewer, larger reads (on PostgreSQL each
 * is a round trip and a plan), still bounded in memory (this many member rows in hand at once);
 * serialized and sent MEMBER_CHUNK at a time, so the event loop turns after every MEMBER_CHUNK
 * members.
 */
export const MEMBER_STREAM_CHUNK = 5000;

/** Members read before a list response starts, shared by the groups of one slice of the page (paging.ts PAGE_SLICE). */
export const LIST_MEMBER_BUDGET = 10_000;

/** The members read so far of one group, and whether there may be more. */
export interface MembersHead {
  readonly rows: readonly MemberRow[];
  readonly more: boolean;
}

/**
 * The first members of each group: up to MEMBER_CHUNK for one group, an equal share of
 * LIST_MEMBER_BUDGET each for a slice of a page of groups (one query either way).
 */
export async function readMembersHeads(ctx: ScimContext, ex: Executor, groupIds: readonly string[]): Promise<Map<string, MembersHead>> {
  const onlyActive = hidesDeactivated(ctx);
  const heads = new Map<string, MembersHead>();
  if (groupIds.length === 0) return heads;
  const share = Math.max(1, Math.min(MEMBER_CHUNK, Math.floor(LIST_MEMBER_BUDGET / groupIds.length)));
  const rows =
    groupIds.length === 1
      ? await memberChunk(ex, ctx.team.id, groupIds[0]!, onlyActive, share)
      : await firstMembers(ex, ctx.team.id, groupIds, onlyActive, share);
  const byGroup = new Map<string, MemberRow[]>(groupIds.map((id) => [id, []]));
  for (const row of rows) byGroup.get(row.group_id)?.push(row);
  for (const [id, list] of byGroup) heads.set(id, { rows: list, more: list.length === share });
  return heads;
}

/** The members after `head`, chunk by chunk, from the database (not from a transaction). */
async function* restOf(ctx: ScimContext, groupId: string, head: MembersHead): AsyncGenerator<MemberRow[]> {
  const onlyActive = hidesDeactivated(ctx);
  let last: MemberRow | undefined = head.rows[head.rows.length - 1];
  while (last) {
    const chunk: MemberRow[] = await memberChunk(ctx.storage.db, ctx.team.id, groupId, onlyActive, MEMBER_STREAM_CHUNK, last);
    // Handed on MEMBER_CHUNK at a time: the stream lets other requests run before each (json-stream.ts).
    for (let i = 0; i < chunk.length; i += MEMBER_CHUNK) yield chunk.slice(i, i + MEMBER_CHUNK);
    last = chunk.length === MEMBER_STREAM_CHUNK ? chunk[chunk.length - 1] : undefined;
  }
}

/** Members as the projection shows them (sub-attribute selection applies to each). */
const shown = (ctx: ScimContext, rows: readonly MemberRow[], projection: Projection): unknown[] =>
  (projectResource(typesOf(ctx).Group, { members: memberValues(rows, ctx.baseUrl) }, projection).members as unknown[] | undefined) ?? [];

/**
 * `resource` (a projected Group whose `members` hold the head) with the rest of the members to
 * come: its `members` become a StreamedArray, in place, so the fields keep their order.
 */
export function withMembersTail(ctx: ScimContext, resource: Resource, groupId: string, head: MembersHead, projection: Projection): Resource {
  const members = resource.members;
  if (!head.more || !Array.isArray(members)) return resource;
  resource.members = new StreamedArray(members, async function* () {
    for await (const chunk of restOf(ctx, groupId, head)) yield shown(ctx, chunk, projection);
  });
  return resource;
}
