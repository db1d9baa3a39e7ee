/**
 * Turns stored rows into full SCIM representations (before projection): schemas, id, meta with
 * location and weak version, the Group aliases, and the membership views (`groups` of a User,
 * `members` of a Group), and the ListResponse envelope. The contract's extra fields (Group
 * `value` / `display`, a group reference's `schemas`) are added here and nowhere else.
 */
import type { GroupRow, MemberRow } from '../storage/repos/groups.ts';
import type { UserRow } from '../storage/repos/users.ts';
import type { ResourceTypeDef } from './schema/types.ts';
import { preconditionFailed } from './errors.ts';
import { holdsStreamedArray, ItemArray, SerializedArray } from './json-stream.ts';
import { GROUP_SCHEMA, LIST_RESPONSE } from './schema/urns.ts';

export type Resource = Record<string, unknown>;

/** A list page as the ListResponse tells it (scim/paging.ts listResult builds it). */
export interface ListResult {
  /** Always on index pages; on cursor pages only when known for free (scim/paging.ts says when). */
  readonly totalResults?: number;
  /** Index paging only: the 1-based index of the first resource, as asked. */
  readonly startIndex?: number;
  /** Cursor paging only (RFC 9865 section 2). */
  readonly nextCursor?: string;
  readonly previousCursor?: string;
  /** The last page of a delta query or of a full scan asked with deltaQuery (scim/delta.ts). */
  readonly nextDeltaToken?: string;
  readonly resources: Resource[];
  /** `resources` serialized (JSON.stringify of each), when the page weighed them: sent as they are. */
  readonly serialized?: readonly string[];
}

export const etagOf = (version: number): string => `W/"${version}"`;

export const locationOf = (baseUrl: string, rt: ResourceTypeDef, id: string): string =>
  `${baseUrl}/v2/scim${rt.endpoint}/${id}`;

/** RFC 7644 3.14: an If-Match naming another version than the row's fails with 412. */
export function checkIfMatch(rt: ResourceTypeDef, row: { readonly id: string; readonly version: number }, ifMatch: string | undefined): void {
  if (ifMatch === undefined || ifMatch.trim() === '*') return;
  const tags = ifMatch.split(',').map((t) => t.trim());
  if (!tags.includes(etagOf(row.version))) {
    throw preconditionFailed(`${rt.name} ${row.id} has changed: its version is ${etagOf(row.version)}`);
  }
}

/** RFC 7643 3.1 `meta`, the same for every resource type. */
function metaOf(rt: ResourceTypeDef, row: { readonly id: string; readonly version: number; readonly created_at: string; readonly updated_at: string }, baseUrl: string): Resource {
  return {
    resourceType: rt.name,
    created: row.created_at,
    lastModified: row.updated_at,
    location: locationOf(baseUrl, rt, row.id),
    version: etagOf(row.version),
  };
}

/** The schema URNs a document uses: the core one, then each extension whose object is present. */
export function schemasOf(rt: ResourceTypeDef, document: Readonly<Record<string, unknown>>): string[] {
  const out = [rt.schema.id];
  for (const ext of rt.extensions) {
    if (document[ext.schema.id] !== undefined) out.push(ext.schema.id);
  }
  return out;
}

export interface GroupRef {
  readonly groupId: string;
  readonly displayName: string;
}

export function userResource(
  rt: ResourceTypeDef,
  row: UserRow,
  document: Readonly<Record<string, unknown>>,
  groups: readonly GroupRef[] | undefined,
  baseUrl: string,
): Resource {
  const { externalId, ...rest } = document;
  const resource: Resource = {
    schemas: schemasOf(rt, document),
    id: row.id,
    ...(externalId !== undefined ? { externalId } : {}),
    ...rest,
  };
  if (groups !== undefined) {
    resource.groups = groups.map((g) => ({
      value: g.groupId,
      $ref: `${baseUrl}/v2/scim/Groups/${g.groupId}`,
      display: g.displayName,
      type: 'direct',
      schemas: [GROUP_SCHEMA],
    }));
  }
  resource.meta = metaOf(rt, row, baseUrl);
  return resource;
}

/** A Group's `members` values (RFC 7643 4.2), the contract's `display` being the userName. */
export const memberValues = (members: readonly MemberRow[], baseUrl: string): Resource[] =>
  members.map((m) => ({
    value: m.user_id,
    $ref: `${baseUrl}/v2/scim/Users/${m.user_id}`,
    display: m.user_name,
    type: 'User',
  }));

export function groupResource(
  rt: ResourceTypeDef,
  row: GroupRow,
  document: Readonly<Record<string, unknown>>,
  members: readonly MemberRow[] | undefined,
  baseUrl: string,
): Resource {
  const { externalId, displayName, ...rest } = document;
  const resource: Resource = {
    schemas: schemasOf(rt, document),
    id: row.id,
    value: row.id,
    // The contract shows externalId as null on groups that have none.
    externalId: externalId ?? null,
    displayName: displayName ?? row.display_name,
    display: displayName ?? row.display_name,
    ...rest,
  };
  if (members !== undefined) resource.members = memberValues(members, baseUrl);
  resource.meta = metaOf(rt, row, baseUrl);
  return resource;
}

/**
 * RFC 7644 3.4.2 ListResponse. Index paging echoes startIndex; cursor paging (RFC 9865 section
 * 2) carries previousCursor / nextCursor instead, each only when there is such a page, and
 * totalResults only when it is known without counting (scim/paging.ts).
 */
export function listResponse(result: ListResult): Resource {
  return {
    schemas: [LIST_RESPONSE],
    ...(result.totalResults !== undefined ? { totalResults: result.totalResults } : {}),
    ...(result.startIndex !== undefined ? { startIndex: result.startIndex } : {}),
    itemsPerPage: result.resources.length,
    ...(result.previousCursor !== undefined ? { previousCursor: result.previousCursor } : {}),
    ...(result.nextCursor !== undefined ? { nextCursor: result.nextCursor } : {}),
    ...(result.nextDeltaToken !== undefined ? { nextDeltaToken: result.nextDeltaToken } : {}),
    Resources: resourcesOf(result),
  };
}

/**
 * A page's Resources as the body carries them, sent by size with the event loop turning in
 * between (scim/json-stream.ts): as already serialized when their texts are final, otherwise
 * serialized one at a time as they are sent.
 */
function resourcesOf(result: ListResult): unknown {
  const { resources, serialized } = result;
  if (serialized?.length === resources.length && !serialized.some(holdsStreamedArray)) return new SerializedArray(serialized);
  return resources.length > 1 ? new ItemArray(resources) : resources;
}
