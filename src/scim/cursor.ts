/**
 * RFC 9865 cursors as Rollcall issues them: a position in a list (the sort key's value, the
 * creation time and the id of a row), which way to read from it, and when it was issued,
 * authenticated by an HMAC over the position and the query it belongs to (team, resource type,
 * filter, sortBy, sortOrder). Nothing is stored per cursor, so a cursor costs the server nothing
 * and any instance sharing the master key (app.ts derives the cursor key from it) can read any
 * other's. The token is
 * base64url (RFC 9865 section 2: unreserved characters only): 16 bytes of MAC, then the JSON
 * position. A token that does not decode, was altered, or belongs to another query is
 * `invalidCursor`; an authentic one older than CURSOR_TIMEOUT_SECONDS is `expiredCursor`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Position, Seek, SortKey } from '../storage/repos/list/window.ts';
import { badRequest } from './errors.ts';

/** How long a cursor stays valid (RFC 9865 section 4 `cursorTimeout`), in seconds. */
export const CURSOR_TIMEOUT_SECONDS = 3600;

const MAC_BYTES = 16;

/** A cursor's content: where the next page starts, and which way it runs. */
export interface CursorState {
  readonly direction: Seek['direction'];
  readonly position: Position;
}

/** The wire form of the state: short keys, since the token travels in every page URL. */
interface Payload {
  readonly d: 'a' | 'b';
  readonly k?: SortKey;
  readonly c: string;
  readonly i: string;
  /** Issue time, milliseconds since the epoch. */
  readonly t: number;
}

const mac = (secret: string, binding: string, payload: Buffer): Buffer =>
  createHmac('sha256', secret).update(binding).update('\n').update(payload).digest().subarray(0, MAC_BYTES);

export function issueCursor(secret: string, binding: string, state: CursorState, issuedAt: Date): string {
  const { key, createdAt, id } = state.position;
  const payload: Payload = { d: state.direction === 'after' ? 'a' : 'b', ...(key !== undefined ? { k: key } : {}), c: createdAt, i: id, t: issuedAt.getTime() };
  const bytes = Buffer.from(JSON.stringify(payload));
  return Buffer.concat([mac(secret, binding, bytes), bytes]).toString('base64url');
}

const invalid = () =>
  badRequest('invalidCursor', 'The cursor is not one this server issued for this query; send an empty cursor for the first page, then nextCursor or previousCursor values unchanged, with the same filter, sortBy and sortOrder');

const isSortKey = (value: unknown): value is SortKey => value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));

function parsePayload(bytes: Buffer): Payload | undefined {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const p = value as Record<string, unknown>;
  if ((p.d !== 'a' && p.d !== 'b') || typeof p.c !== 'string' || typeof p.i !== 'string' || typeof p.t !== 'number') return undefined;
  if ('k' in p && !isSortKey(p.k)) return undefined;
  return p as unknown as Payload;
}

/**
 * The state of a cursor presented with the query `binding`, checked for authenticity first and
 * age second (so an altered issue time is invalid, never merely expired).
 */
export function readCursor(secret: string, binding: string, token: string, now: Date): CursorState {
  if (!/^[A-Za-z0-9_-]+$/.test(token)) throw invalid();
  const raw = Buffer.from(token, 'base64url');
  if (raw.length <= MAC_BYTES) throw invalid();
  const bytes = raw.subarray(MAC_BYTES);
  if (!timingSafeEqual(raw.subarray(0, MAC_BYTES), mac(secret, binding, bytes))) throw invalid();
  const payload = parsePayload(bytes);
  if (!payload) throw invalid();
  if (now.getTime() - payload.t > CURSOR_TIMEOUT_SECONDS * 1000) {
    throw badRequest('expiredCursor', `The cursor has expired: cursors are valid for ${CURSOR_TIMEOUT_SECONDS} seconds; start again with an empty cursor`);
  }
  return {
    direction: payload.d === 'a' ? 'after' : 'before',
    position: { ...(payload.k !== undefined ? { key: payload.k } : {}), createdAt: payload.c, id: payload.i },
  };
}
