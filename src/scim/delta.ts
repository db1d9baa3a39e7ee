/**
 * SCIM delta query on Users and Groups, after the IETF draft draft-sehgal-scim-delta-query (a
 * draft: its messages may still change; ServiceProviderConfig says so). What it owns:
 *
 * - the delta token (draft section 4.1 `nextDeltaToken`): a position in the team's change feed
 *   (DESIGN.md section 8), authenticated like an RFC 9865 cursor (an HMAC under the cursor key,
 *   bound to the team and the resource type) and written in base64url, so only RFC 3986
 *   unreserved characters. It is obtained on its own (`/.deltaToken`), or on the last page of a
 *   full scan asked with `deltaQuery`, where it is the feed's position before the scan's first
 *   page (carried in the scan's cursors), so a change made while the scan runs is never missed.
 * - a delta (draft section 5.2): the resources whose last change is in (since, upto], `upto`
 *   being the feed's end when the delta's first page is asked. Each such resource is reported
 *   once, at its last change in the range, in the order of those changes, as it is when its page
 *   is read: its current representation, or a tombstone (section 6.2.3: id, meta.resourceType,
 *   meta.isDeleted true) when it was deleted, or is a deactivated user its team hides. Pages
 *   follow each other by a cursor holding (since, upto, the last feed row examined); a page
 *   examines at most DELTA_WALK_ROWS rows of the feed, so it may hold fewer resources than
 *   `count` (none at all) and still be followed by a nextCursor; the last page
 *   carries `nextDeltaToken` = upto. A change committed after `upto` is in the next delta, so
 *   none is missed or reported twice in one delta, whichever instance serves which page.
 * - the draft's errors (section 6.3): `invalidValue` for a token that is not one this server
 *   issued for the query, `expiredDeltaToken` when the feed no longer holds every change after
 *   the token (events past the retention are pruned): the client starts again with a full scan.
 *
 * Only the SCIM change rows of the feed count (create, put, patch, delete, activate,
 * deactivate); Shared Signals and asynchronous responses are passed over. A delta takes one of the
 * team's scan places and its feed walk is held to the team's statement deadline (scans.ts).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { CHANGE_TYPES } from '../events/feed.ts';
import { lastChanges } from '../storage/repos/delta.ts';
import { firstKeptSeq, lastSeq } from '../storage/repos/events.ts';
import { groupsByIds } from '../storage/repos/groups.ts';
import { usersByIds } from '../storage/repos/users.ts';
import { typesOf } from './context.ts';
import type { ScimContext } from './context.ts';
import { badRequest } from './errors.ts';
import { renderGroupRows } from './groups.ts';
import type { Projection } from './project.ts';
import { DEFAULT_COUNT, MAX_COUNT } from './query.ts';
import type { RawListParams } from './query.ts';
import { locationOf } from './representation.ts';
import type { ListResult, Resource } from './representation.ts';
import { asScan } from './scans.ts';
import { holdsName, renderUserRows } from './users.ts';

export type DeltaKind = 'User' | 'Group';

/** A delta page or a full-scan page: the ListResponse's fields, with the token on the last page. */
export type DeltaResult = ListResult;

/** The draft's request parameters (query string or SearchRequest body), as they arrive. */
export interface DeltaParams extends RawListParams {
  readonly deltaQuery?: unknown;
  readonly deltaToken?: unknown;
}

/**
 * The feed rows one delta page examines at most (its seq window). A page of `count` changes ends
 * sooner; a range of superseded changes (one user changed many times) ends the page early, with
 * fewer resources than `count` and a cursor after the last row examined. It bounds the statement
 * on every engine, the event loop's hold on SQLite, where the statement deadline does not reach
 * the walk. It is well above MAX_COUNT, so a page fills unless most of the rows it examines are
 * superseded changes or rows of other kinds (the other resource type, Shared Signals).
 */
export const DELTA_WALK_ROWS = 5_000;

const MAC_BYTES = 16;

const mac = (secret: string, binding: string, payload: Buffer): Buffer =>
  createHmac('sha256', secret).update(binding).update('\n').update(payload).digest().subarray(0, MAC_BYTES);

function seal(secret: string, binding: string, value: unknown): string {
  const bytes = Buffer.from(JSON.stringify(value));
  return Buffer.concat([mac(secret, binding, bytes), bytes]).toString('base64url');
}

function unseal(secret: string, binding: string, token: string): unknown {
  if (!/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
  const raw = Buffer.from(token, 'base64url');
  if (raw.length <= MAC_BYTES) return undefined;
  const bytes = raw.subarray(MAC_BYTES);
  if (!timingSafeEqual(raw.subarray(0, MAC_BYTES), mac(secret, binding, bytes))) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

const isSeq = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

const tokenBinding = (ctx: ScimContext, kind: DeltaKind) => `delta-token\n${ctx.team.id}\n${kind}`;
const cursorBinding = (ctx: ScimContext, kind: DeltaKind) => `delta-cursor\n${ctx.team.id}\n${kind}`;
const scanBinding = (ctx: ScimContext, kind: DeltaKind) => `delta-scan\n${ctx.team.id}\n${kind}`;

const issueToken = (ctx: ScimContext, kind: DeltaKind, seq: number): string => seal(ctx.cursorSecret, tokenBinding(ctx, kind), { s: seq });

function readToken(ctx: ScimContext, kind: DeltaKind, token: string): number {
  const value = unseal(ctx.cursorSecret, tokenBinding(ctx, kind), token) as { s?: unknown } | undefined;
  if (!value || !isSeq(value.s)) {
    throw badRequest('invalidValue', `The deltaToken is not one this server issued for ${kind}s of this team: send a nextDeltaToken value unchanged, or start again with a full scan (deltaQuery without deltaToken)`);
  }
  return value.s;
}

/** Where a delta's next page starts: its range (since, upto] and the last change already reported. */
interface DeltaPosition {
  readonly since: number;
  readonly upto: number;
  readonly after: number;
}

const invalidCursor = () => badRequest('invalidCursor', 'The cursor is not one this server issued for this delta: send nextCursor unchanged with the same deltaToken');

function readDeltaCursor(ctx: ScimContext, kind: DeltaKind, cursor: string): DeltaPosition {
  const v = unseal(ctx.cursorSecret, cursorBinding(ctx, kind), cursor) as { s?: unknown; u?: unknown; a?: unknown } | undefined;
  if (!v || !isSeq(v.s) || !isSeq(v.u) || !isSeq(v.a) || v.s > v.a || v.a > v.u) throw invalidCursor();
  return { since: v.s, upto: v.u, after: v.a };
}

const expired = (kind: DeltaKind) =>
  badRequest('expiredDeltaToken', `The changes after this deltaToken are no longer kept (the change feed's retention): start again with a full scan of ${kind}s (deltaQuery without deltaToken)`);

/** A token for the changes from now on (the DESIGN's `GET /{Users,Groups}/.deltaToken`). */
export async function newDeltaToken(ctx: ScimContext, kind: DeltaKind): Promise<string> {
  return issueToken(ctx, kind, await lastSeq(ctx.storage.db, ctx.team.id));
}

const text = (name: string, value: unknown): string | undefined => {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw badRequest('invalidValue', `${name} must be a string`);
  return value;
};

/**
 * Whether the request asks for delta query: `deltaQuery` present (the draft's bare `?deltaQuery`,
 * or true); false or absent is an ordinary list, but a deltaToken then is refused (section 6.3).
 */
export function asksDelta(params: DeltaParams): boolean {
  const q = params.deltaQuery;
  const on = q === '' || q === true || (typeof q === 'string' && q.toLowerCase() === 'true');
  const off = q === undefined || q === false || (typeof q === 'string' && q.toLowerCase() === 'false');
  if (!on && !off) throw badRequest('invalidValue', 'deltaQuery must be true or false');
  if (!on && params.deltaToken !== undefined) throw badRequest('invalidValue', 'The deltaToken parameter must be accompanied by deltaQuery');
  return on;
}

function pageSize(raw: unknown): number {
  if (raw === undefined) return DEFAULT_COUNT;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d{1,10}$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n)) throw badRequest('invalidValue', 'count must be an integer');
  return Math.min(MAX_COUNT, Math.max(1, n));
}

/** What a delta cannot be combined with: it reports every change of the resource type, in feed order. */
function refuseListShaping(params: DeltaParams): void {
  for (const name of ['filter', 'sortBy', 'sortOrder', 'access'] as const) {
    if (params[name] !== undefined) throw badRequest('invalidValue', `${name} is not supported with deltaQuery: a delta reports every changed resource in the order of its changes`);
  }
}

/**
 * Answers a request that asks for delta query (asksDelta): with a deltaToken (or a delta's
 * cursor), a page of the delta; without, a page of a full scan run by `fullList` (the endpoint's
 * own list) with the token on its last page.
 */
export async function deltaQuery(
  ctx: ScimContext,
  kind: DeltaKind,
  params: DeltaParams,
  projection: Projection,
  fullList: (params: RawListParams) => Promise<ListResult>,
): Promise<DeltaResult> {
  refuseListShaping(params);
  const token = text('deltaToken', params.deltaToken);
  if (token === undefined) return fullScan(ctx, kind, params, fullList);
  if (params.startIndex !== undefined) throw badRequest('invalidValue', 'A delta pages by cursor: startIndex is not supported with deltaToken');
  const cursor = text('cursor', params.cursor);
  const since = readToken(ctx, kind, token);
  return deltaPage(ctx, kind, since, cursor === undefined || cursor === '' ? undefined : readDeltaCursor(ctx, kind, cursor), pageSize(params.count), projection);
}

async function deltaPage(ctx: ScimContext, kind: DeltaKind, since: number, at: DeltaPosition | undefined, count: number, projection: Projection): Promise<DeltaResult> {
  if (at && at.since !== since) throw invalidCursor();
  const db = ctx.storage.db;
  let position = at;
  if (!position) {
    // The delta's end: the feed's end now (what is committed numbered first, on PostgreSQL).
    const upto = await lastSeq(db, ctx.team.id);
    // A token past the feed's end was not issued by this database's feed (a restored copy's).
    if (since > upto) throw badRequest('invalidValue', `The deltaToken is ahead of this server's change feed: start again with a full scan of ${kind}s (deltaQuery without deltaToken)`);
    position = { since, upto, after: since };
  }
  const { after, upto } = position;
  // The rows this page may examine: the next `deltaWalkRows` of the team's feed at most, so a range
  // of superseded changes is crossed over several pages, each a bounded statement.
  const through = Math.min(upto, after + (ctx.deltaWalkRows ?? DELTA_WALK_ROWS));
  const changes = await asScan(ctx, (read) => read((ex) => lastChanges(ex, ctx.team.id, kind, CHANGE_TYPES, after, through, upto, count)));
  // Pruning takes the oldest events first and seqs have no gaps: if the feed still holds the seq
  // after the page's start now, nothing the page read was missing when it was read.
  const firstKept = await firstKeptSeq(db, ctx.team.id);
  if (after < upto && (firstKept === undefined || firstKept > after + 1)) throw expired(kind);
  const resources = await currentStates(ctx, kind, changes.map((c) => c.id), projection);
  // A full page stops at its last change; a short one examined every row up to `through`, which
  // ends the delta when it is `upto`, and is resumed after otherwise (possibly with no resources).
  const examined = changes.length === count ? changes.at(-1)!.seq : through;
  if (examined === upto) return { resources, nextDeltaToken: issueToken(ctx, kind, upto) };
  return { resources, nextCursor: seal(ctx.cursorSecret, cursorBinding(ctx, kind), { s: since, u: upto, a: examined }) };
}

/** The draft's tombstone (section 6.2.3.1): the id and meta with resourceType and isDeleted. */
function tombstone(ctx: ScimContext, kind: DeltaKind, id: string): Resource {
  const rt = typesOf(ctx)[kind];
  return { schemas: [rt.schema.id], id, meta: { resourceType: kind, isDeleted: true, location: locationOf(ctx.baseUrl, rt, id) } };
}

/** The resources `ids` name, in that order, as they are now: their representation, or a tombstone. */
async function currentStates(ctx: ScimContext, kind: DeltaKind, ids: readonly string[], projection: Projection): Promise<Resource[]> {
  const db = ctx.storage.db;
  const shown = new Map<string, Resource>();
  if (kind === 'User') {
    const rows = (await usersByIds(db, ctx.team.id, ids)).filter((row) => holdsName(ctx.team.deactivated_users, row));
    const rendered = await renderUserRows(ctx, rows, projection);
    rows.forEach((row, i) => shown.set(row.id, rendered[i]!));
  } else {
    const rows = await groupsByIds(db, ctx.team.id, ids);
    const rendered = await renderGroupRows(ctx, rows, projection);
    rows.forEach((row, i) => shown.set(row.id, rendered[i]!));
  }
  return ids.map((id) => shown.get(id) ?? tombstone(ctx, kind, id));
}

/**
 * A full scan asked with deltaQuery (draft section 5.1): the endpoint's list paged by cursor,
 * each cursor wrapped with the feed's position read before the first page, which the last page
 * gives as nextDeltaToken. A change made during the scan is then in the next delta too (reported
 * as it is then), never missed.
 */
async function fullScan(ctx: ScimContext, kind: DeltaKind, params: DeltaParams, fullList: (params: RawListParams) => Promise<ListResult>): Promise<DeltaResult> {
  if (params.startIndex !== undefined) throw badRequest('invalidValue', 'A full scan with deltaQuery pages by cursor: send cursor (empty for the first page) instead of startIndex');
  const outer = text('cursor', params.cursor);
  let start: number;
  let inner = '';
  if (outer === undefined || outer === '') {
    start = await lastSeq(ctx.storage.db, ctx.team.id);
  } else {
    const v = unseal(ctx.cursorSecret, scanBinding(ctx, kind), outer) as { s?: unknown; c?: unknown } | undefined;
    if (!v || !isSeq(v.s) || typeof v.c !== 'string') throw badRequest('invalidCursor', 'The cursor is not one this server issued for this scan: send nextCursor or previousCursor unchanged');
    start = v.s;
    inner = v.c;
  }
  const { deltaQuery: _q, deltaToken: _t, ...list } = params;
  const page = await fullList({ ...list, cursor: inner });
  const wrap = (c: string | undefined) => (c === undefined ? {} : { c: seal(ctx.cursorSecret, scanBinding(ctx, kind), { s: start, c }) });
  const next = wrap(page.nextCursor).c;
  const previous = wrap(page.previousCursor).c;
  const { nextCursor: _n, previousCursor: _p, ...rest } = page;
  return {
    ...rest,
    ...(previous !== undefined ? { previousCursor: previous } : {}),
    ...(next !== undefined ? { nextCursor: next } : { nextDeltaToken: issueToken(ctx, kind, start) }),
  };
}
