/**
 * Paging of list and search responses, shared by the Users and Groups services. Index paging
 * (RFC 7644 3.4.2.4) becomes an offset and echoes startIndex. Cursor paging (RFC 9865) becomes
 * a keyset seek from the position a cursor carries, and the page's first and last rows become
 * previousCursor and nextCursor: nextCursor only when more rows follow, previousCursor only when
 * rows come before, neither when count is 0 (nothing to page through). A cursor is bound to the
 * team, the resource type and the query (cursor.ts), and read with the request's clock. It does
 * not write SQL: the repositories seek (storage/repos/paging.ts).
 *
 * totalResults: index pages always carry it (RFC 7644 3.4.2). Cursor pages carry it only when it
 * costs nothing: when the page is the whole result (no cursor either way), or when count=0 asks
 * for the total alone. Any other cursor page omits it, as RFC 9865 section 2 allows ("Service
 * providers implementing cursor pagination that are unable to estimate totalResults MAY choose
 * to omit the totalResults attribute"): counting the matches on every page would cost each page
 * a scan of the whole result (hundreds of milliseconds for a team of a million), which keyset
 * paging exists to avoid. nextCursor, not a count, tells a client whether to go on.
 */
import type { ListPage, Seek } from '../storage/repos/paging.ts';
import type { ScimContext } from './context.ts';
import { issueCursor, readCursor } from './cursor.ts';
import type { ListQuery } from './query.ts';
import type { Resource } from './representation.ts';
import type { ResourceTypeDef } from './schema/types.ts';

export interface ListResult {
  /** Always on index pages; on cursor pages only when known for free (see above). */
  readonly totalResults?: number;
  /** Index paging only: the 1-based index of the first resource, as asked. */
  readonly startIndex?: number;
  /** Cursor paging only (RFC 9865 section 2). */
  readonly nextCursor?: string;
  readonly previousCursor?: string;
  readonly resources: Resource[];
}

const bindingOf = (ctx: ScimContext, rt: ResourceTypeDef, query: ListQuery): string =>
  JSON.stringify(['rollcall cursor 1', ctx.team.id, rt.name, query.cursorBinding]);

/** Where the repository starts the page: an offset, or a seek (from the start for an empty cursor). */
export function pageWindow(ctx: ScimContext, rt: ResourceTypeDef, query: ListQuery): { offset: number } | { seek: Seek } {
  const { paging } = query;
  if (paging.method === 'index') return { offset: paging.startIndex - 1 };
  if (paging.cursor === '') return { seek: { direction: 'after' } };
  const state = readCursor(ctx.cursorSecret, bindingOf(ctx, rt, query), paging.cursor, ctx.clock.now());
  return { seek: { direction: state.direction, from: state.position } };
}

/** The ListResponse of a page: its resources and the paging fields of the method in use. */
export function listResult<R>(
  ctx: ScimContext,
  rt: ResourceTypeDef,
  query: ListQuery,
  window: { offset: number } | { seek: Seek },
  page: ListPage<R>,
  resources: Resource[],
): ListResult {
  if (!('seek' in window)) {
    if (page.total === undefined) throw new Error('an index page always knows its total');
    return { totalResults: page.total, startIndex: window.offset + 1, resources };
  }
  const first = page.positions[0];
  const last = page.positions[page.positions.length - 1];
  const forward = window.seek.direction === 'after';
  const now = ctx.clock.now();
  const binding = bindingOf(ctx, rt, query);
  // Reading forwards, rows lie behind the page when it started from a position; reading
  // backwards, rows lie ahead of it (the position it started from).
  const hasNext = forward ? page.more : true;
  const hasPrevious = forward ? window.seek.from !== undefined : page.more;
  // A forward page from the start with nothing after it holds every match.
  const whole = forward && window.seek.from === undefined && !page.more;
  const total = page.total ?? (whole ? resources.length : undefined);
  return {
    ...(total !== undefined ? { totalResults: total } : {}),
    ...(last && hasNext ? { nextCursor: issueCursor(ctx.cursorSecret, binding, { direction: 'after', position: last }, now) } : {}),
    ...(first && hasPrevious ? { previousCursor: issueCursor(ctx.cursorSecret, binding, { direction: 'before', position: first }, now) } : {}),
    resources,
  };
}
