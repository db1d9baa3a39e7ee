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
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ListPage, Position, Seek } from '../storage/repos/list/window.ts';
import type { ScimContext } from './context.ts';
import { issueCursor, readCursor } from './cursor.ts';
import { TURN_CHARS } from './json-stream.ts';
import type { ListQuery } from './query.ts';
import type { ListResult, Resource } from './representation.ts';
import type { ResourceTypeDef } from './schema/types.ts';

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
  serialized?: readonly string[],
): ListResult {
  const texts = serialized ? { serialized } : {};
  if (!('seek' in window)) {
    if (page.total === undefined) throw new Error('an index page always knows its total');
    return { totalResults: page.total, startIndex: window.offset + 1, resources, ...texts };
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
    ...texts,
  };
}

/** Bytes of resource JSON one list page holds at most (its first resource always fits). */
export const PAGE_BYTE_BUDGET = 4 * 1024 * 1024;

/** Rows read per query while a page fills: at most 50 x 256 KiB of documents in hand at once. */
export const PAGE_SLICE = 50;

type PageWindow = { offset: number; resumeAfter?: Position } | { seek: Seek };

/** Reads `limit` rows from `window`; `countTotal: false` on index slices (the total is counted once, here). */
export type SliceReader<R> = (window: PageWindow & { countTotal?: boolean }, limit: number) => Promise<ListPage<R>>;

/**
 * A page of up to `limit` rows from `window`, read slice by slice and shaped as it goes, cut at
 * PAGE_BYTE_BUDGET bytes of resource JSON. Returns the page (rows, positions, total, more, as one
 * read would) and its resources.
 */
export async function budgetedPage<R>(
  window: PageWindow,
  limit: number,
  read: SliceReader<R>,
  shape: (rows: R[]) => Promise<Resource[]>,
): Promise<{ page: ListPage<R>; resources: Resource[]; serialized: string[] }> {
  if (limit === 0) return { page: await read(window, 0), resources: [], serialized: [] };
  const backward = 'seek' in window && window.seek.direction === 'before';
  const rows: R[] = [];
  const positions: Position[] = [];
  const resources: Resource[] = [];
  // Each resource's JSON, made to weigh it, kept so that the response need not make it again.
  const serialized: string[] = [];
  let bytes = 0;
  let sinceTurn = 0;
  let more = false;
  let ended = false;
  let at: PageWindow = window;
  for (;;) {
    const want = Math.min(PAGE_SLICE, limit - rows.length);
    const slice = await read('offset' in at ? { ...at, countTotal: false } : at, want);
    const shaped = await shape(slice.rows);
    // Rows sought backwards come before the ones in hand: take them nearest first.
    const order = [...shaped.keys()];
    if (backward) order.reverse();
    let cut = false;
    for (const i of order) {
      const text = JSON.stringify(shaped[i]);
      const size = Buffer.byteLength(text);
      if (resources.length > 0 && bytes + size > PAGE_BYTE_BUDGET) {
        cut = true;
        break;
      }
      bytes += size;
      const put = backward ? 'unshift' : 'push';
      rows[put](slice.rows[i]!);
      resources[put](shaped[i]!);
      serialized[put](text);
      const position = slice.positions[i];
      if (position) positions[put](position);
      // Weighing is serializing: by size, not by count, other requests get their turn.
      sinceTurn += text.length;
      if (sinceTurn >= TURN_CHARS) {
        sinceTurn = 0;
        await nextTurn();
      }
    }
    if (cut) {
      more = true;
      break;
    }
    if ('offset' in at) {
      if (slice.rows.length < want) ended = true;
      if (ended || rows.length >= limit) break;
      // The next slice seeks past this one's last row when the list is in creation order.
      const last = slice.positions[slice.positions.length - 1];
      at = { offset: at.offset + slice.rows.length, ...(last ? { resumeAfter: last } : {}) };
    } else {
      more = slice.more;
      if (!slice.more || rows.length >= limit) break;
      const from = backward ? positions[0] : positions[positions.length - 1];
      at = { seek: { direction: backward ? 'before' : 'after', ...(from ? { from } : {}) } };
    }
    // Another tenant's requests get their turn between slices.
    await nextTurn();
  }
  let total: number | undefined;
  if ('offset' in window) {
    // As repos/list-order.ts totalOf: a page that ran into the end of the list tells the total.
    total = ended && (window.offset === 0 || rows.length > 0) ? window.offset + rows.length : (await read(window, 0)).total;
  }
  return { page: { rows, positions, total, more }, resources, serialized };
}
