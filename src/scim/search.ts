/**
 * Search at the server root (RFC 7644 3.4.2.1, 3.4.3): `GET /` and `POST /.search` across Users
 * and Groups, with filter, sortBy / sortOrder, index paging (startIndex, count) and attributes /
 * excludedAttributes. The decisions the RFC leaves to the server:
 * - An attribute one resource type does not define has no value there (RFC 7644 3.4.2.1: "a
 *   presence or equality filter for an undefined attribute evaluates to false"): the filter is
 *   reduced per type before it is compiled (`userName eq "x"` leaves no Group, `not (userName pr)`
 *   keeps every Group). A name no type defines is still a 400: a typo must not match nothing.
 * - sortBy on an attribute one type lacks sorts that type's resources as absent (last, both
 *   directions); without sortBy, Users come before Groups, each in its endpoint's order.
 * - Index paging spans both types as one list: totalResults counts both, startIndex counts into
 *   the combined order (one SQL UNION, repos/search.ts).
 * - Cursor paging (RFC 9865) is not offered here: a request with `cursor` is a 400 naming
 *   /Users and /Groups, which offer it.
 * - attributes / excludedAttributes apply per type; a name one type lacks is ignored there.
 * - A page stops at the lists' byte budget (paging.ts PAGE_BYTE_BUDGET): itemsPerPage says where
 *   the next page starts.
 * It owns these rules; it writes no SQL (repos/search.ts does).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { badRequest } from './errors.ts';
import type { AttrPath, Filter } from './filter/ast.ts';
import { bindFilter, bindSort } from './filter/bind.ts';
import { lowerFilter, lowerSort } from './filter/lower.ts';
import { parseFilter } from './filter/parse.ts';
import { TURN_CHARS } from './json-stream.ts';
import { PAGE_BYTE_BUDGET, PAGE_SLICE } from './paging.ts';
import type { ListResult } from './representation.ts';
import { parseAttrPath, parseAttributeList } from './path.ts';
import type { Projection } from './project.ts';
import { DEFAULT_COUNT, MAX_COUNT, integerParam, stringParam } from './query.ts';
import type { RawListParams } from './query.ts';
import type { Resource } from './representation.ts';
import { extensionForPath, lower, resolvePath } from './schema/registry.ts';
import type { ResourceTypeDef } from './schema/types.ts';
import { hidesDeactivated, lowering, typesOf } from './context.ts';
import type { ScimContext } from './context.ts';
import { renderGroupRows } from './groups.ts';
import { renderUserRows } from './users.ts';
import { groupsByIds, searchAcross, usersByIds } from '../storage/repos/search.ts';
import type { SearchBranch, SearchHit } from '../storage/repos/search.ts';
import type { Predicate } from '../storage/predicate.ts';
import { scanning } from './scans.ts';
import type { ScanPart } from './scans.ts';

const knows = (rt: ResourceTypeDef, path: AttrPath): boolean => {
  try {
    resolvePath(rt, path, 'invalidFilter');
    return true;
  } catch {
    return false;
  }
};

/** The filter as `rt` sees it: leaves on attributes it lacks are false, then simplified. */
function reduce(rt: ResourceTypeDef, filter: Filter, known: Set<Filter>): Filter | boolean {
  switch (filter.kind) {
    case 'compare':
    case 'present':
    case 'valuePath':
      if (!knows(rt, filter.path)) return false;
      known.add(filter);
      return filter;
    case 'not': {
      const inner = reduce(rt, filter.filter, known);
      return typeof inner === 'boolean' ? !inner : { kind: 'not', filter: inner };
    }
    case 'and':
    case 'or': {
      const left = reduce(rt, filter.left, known);
      const right = reduce(rt, filter.right, known);
      const absorbing = filter.kind === 'and' ? false : true;
      if (left === absorbing || right === absorbing) return absorbing;
      if (typeof left === 'boolean') return right;
      if (typeof right === 'boolean') return left;
      return { kind: filter.kind, left, right };
    }
  }
}

function leaves(filter: Filter): Filter[] {
  if (filter.kind === 'and' || filter.kind === 'or') return [...leaves(filter.left), ...leaves(filter.right)];
  if (filter.kind === 'not') return leaves(filter.filter);
  return [filter];
}

const applies = (rt: ResourceTypeDef, path: AttrPath): boolean =>
  (path.sub === undefined && path.uri === undefined && lower(path.attr) === 'schemas') || extensionForPath(rt, path) !== undefined || knows(rt, path);

/** `attributes` or `excludedAttributes` for each type: the names it defines (unknown to all: 400). */
function projectionPaths(name: string, raw: unknown, TYPES: readonly ResourceTypeDef[]): Map<ResourceTypeDef, AttrPath[]> | undefined {
  const text = stringParam(name, raw);
  if (text === undefined) return undefined;
  const paths = parseAttributeList(text);
  const out = new Map<ResourceTypeDef, AttrPath[]>(TYPES.map((rt) => [rt, []]));
  for (const path of paths) {
    const owners = TYPES.filter((rt) => applies(rt, path));
    if (owners.length === 0) throw badRequest('invalidValue', `${name}: no resource type has an attribute "${[path.uri, path.attr].filter(Boolean).join(':')}${path.sub ? `.${path.sub}` : ''}"`);
    for (const rt of owners) out.get(rt)!.push(path);
  }
  return out;
}

const ID_ONLY: readonly AttrPath[] = [{ kind: 'attrPath', attr: 'id' }];

/** Hits of a page as the response shows them, in the hits' order (each type read in one query). */
async function renderHits(ctx: ScimContext, hits: readonly SearchHit[], projectionFor: (rt: ResourceTypeDef) => Projection): Promise<Resource[]> {
  const userRows = await usersByIds(ctx.storage.db, ctx.team.id, hits.filter((h) => h.type === 'User').map((h) => h.id));
  const groupRows = await groupsByIds(ctx.storage.db, ctx.team.id, hits.filter((h) => h.type === 'Group').map((h) => h.id));
  const rendered = new Map<string, Resource>();
  const userResources = await renderUserRows(ctx, userRows, projectionFor(typesOf(ctx).User));
  userRows.forEach((row, i) => rendered.set(`User/${row.id}`, userResources[i]!));
  const groupResources = await renderGroupRows(ctx, groupRows, projectionFor(typesOf(ctx).Group));
  groupRows.forEach((row, i) => rendered.set(`Group/${row.id}`, groupResources[i]!));
  // A resource deleted between the two reads is left out rather than failing the page.
  return hits.map((h) => rendered.get(`${h.type}/${h.id}`)).filter((r): r is Resource => r !== undefined);
}

export async function searchRoot(ctx: ScimContext, raw: RawListParams): Promise<ListResult> {
  if (raw.cursor !== undefined && raw.cursor !== null) {
    throw badRequest('invalidValue', 'Cursor paging (RFC 9865) is not offered at the server root; page with startIndex and count, or search /Users or /Groups, which offer cursors');
  }
  const filterText = stringParam('filter', raw.filter);
  const filter = filterText !== undefined ? parseFilter(filterText) : undefined;
  const sortText = stringParam('sortBy', raw.sortBy);
  const sortBy = sortText !== undefined ? parseAttrPath(sortText, 'invalidValue') : undefined;
  const order = stringParam('sortOrder', raw.sortOrder);
  if (order !== undefined && !/^(ascending|descending)$/i.test(order)) throw badRequest('invalidValue', 'sortOrder must be "ascending" or "descending"');
  const descending = order !== undefined && order.toLowerCase() === 'descending';
  const startIndex = Math.max(1, integerParam('startIndex', raw.startIndex) ?? 1);
  const count = Math.min(MAX_COUNT, Math.max(0, integerParam('count', raw.count) ?? DEFAULT_COUNT));
  // The team's resource types, its extensions included.
  const userType = typesOf(ctx).User;
  const groupType = typesOf(ctx).Group;
  const TYPES = [userType, groupType];
  const attributes = projectionPaths('attributes', raw.attributes, TYPES);
  const excluded = projectionPaths('excludedAttributes', raw.excludedAttributes, TYPES);

  if (sortBy && !TYPES.some((rt) => knows(rt, sortBy))) throw badRequest('invalidValue', `sortBy: no resource type has an attribute "${sortText}"`);
  const known = new Set<Filter>();
  const branches = new Map<ResourceTypeDef, SearchBranch>();
  for (const rt of TYPES) {
    const reduced = filter ? reduce(rt, filter, known) : true;
    if (reduced === false) continue;
    branches.set(rt, {
      ...(reduced !== true ? { where: lowerFilter(bindFilter(rt, reduced), lowering(ctx)) } : {}),
      ...(sortBy && knows(rt, sortBy) ? { sort: lowerSort(bindSort(rt, sortBy)) } : {}),
    });
  }
  const unknown = filter ? leaves(filter).find((leaf) => !known.has(leaf)) : undefined;
  if (unknown && 'path' in unknown) throw badRequest('invalidFilter', `no resource type has an attribute "${unknown.path.attr}"`);

  const users = branches.get(userType);
  const groups = branches.get(groupType);
  const onlyActiveUsers = hidesDeactivated(ctx);
  const part = (table: 'users' | 'groups', branch: SearchBranch, onlyActive: boolean): ScanPart => ({
    table,
    ...(branch.where ? { where: branch.where } : {}),
    ...(sortBy && branch.sort ? { sort: branch.sort } : {}),
    onlyActive,
  });
  const parts = [...(users ? [part('users', users, onlyActiveUsers)] : []), ...(groups ? [part('groups', groups, false)] : [])];
  const guarded = (branch: SearchBranch, guard: (where: Predicate | undefined) => Predicate | undefined): SearchBranch => {
    const where = guard(branch.where);
    return where ? { ...branch, where } : branch;
  };
  // The filter's cost over both types, the team's scans and the statements' deadline (scans.ts).
  const { hits, total } = await scanning(ctx, parts, (read) =>
    read((ex, guard) =>
      searchAcross(ex, ctx.team.id, {
        ...(users ? { users: guarded(users, guard) } : {}),
        ...(groups ? { groups: guarded(groups, guard) } : {}),
        onlyActiveUsers,
        sorted: sortBy !== undefined,
        descending,
        offset: startIndex - 1,
        limit: count,
      }),
    ),
  );
  const projectionFor = (rt: ResourceTypeDef): Projection => {
    const include = attributes?.get(rt);
    const exclude = excluded?.get(rt);
    return {
      ...(include ? { attributes: include.length > 0 ? include : ID_ONLY } : {}),
      ...(exclude ? { excludedAttributes: exclude } : {}),
    };
  };
  // Shaped slice by slice within the page's byte budget, as the endpoints' lists are.
  // Each resource's JSON, made to weigh it, is kept so that the response need not make it again;
  // weighing is serializing, so the event loop turns by size too.
  const resources: Resource[] = [];
  const serialized: string[] = [];
  let bytes = 0;
  let sinceTurn = 0;
  for (let from = 0; from < hits.length; from += PAGE_SLICE) {
    if (from > 0) await nextTurn();
    const slice = hits.slice(from, from + PAGE_SLICE);
    for (const resource of await renderHits(ctx, slice, projectionFor)) {
      const text = JSON.stringify(resource);
      const size = Buffer.byteLength(text);
      if (resources.length > 0 && bytes + size > PAGE_BYTE_BUDGET) return { totalResults: total, startIndex, resources, serialized };
      bytes += size;
      resources.push(resource);
      serialized.push(text);
      sinceTurn += text.length;
      if (sinceTurn >= TURN_CHARS) {
        sinceTurn = 0;
        await nextTurn();
      }
    }
  }
  return { totalResults: total, startIndex, resources, serialized };
}
