/**
 * Parses the query of a list or search request (RFC 7644 sections 3.4.2 and 3.4.3): filter,
 * sortBy, sortOrder, startIndex, cursor, count, attributes, excludedAttributes. Two paging
 * methods: index (RFC 7644 3.4.2.4, the default: startIndex below 1 means 1) and cursor (RFC
 * 9865: `cursor` present, empty for the first page); a request naming both is refused. For
 * both, a negative count means 0 and count is capped at MAX_COUNT (the advertised
 * maxPageSize). The cursor itself is read by the service, which knows the secret and the clock.
 */
import { badRequest } from './errors.ts';
import { bindFilter, bindSort } from './filter/bind.ts';
import type { BoundFilter, BoundSort } from './filter/bind.ts';
import { parseFilter } from './filter/parse.ts';
import { parseAttrPath, parseAttributeList } from './path.ts';
import { checkProjection } from './project.ts';
import type { Projection } from './project.ts';
import type { ResourceTypeDef } from './schema/types.ts';
import type { OrderKey, Predicate } from '../storage/predicate.ts';
import type { ScimContext } from './context.ts';
import { lowering } from './context.ts';
import { lowerFilter } from './filter/lower.ts';

export const DEFAULT_COUNT = 100;
export const MAX_COUNT = 1000;

/** Which paging method a request asked for, and where its page starts. */
export type Paging =
  | { readonly method: 'index'; readonly startIndex: number }
  /** `cursor` is the token as sent: '' asks for the first page. */
  | { readonly method: 'cursor'; readonly cursor: string };

export interface ListQuery {
  /** Bound once here; lowered to storage's words by the service (filter/lower.ts). */
  readonly filter?: BoundFilter;
  readonly sortBy?: BoundSort;
  readonly descending: boolean;
  readonly paging: Paging;
  readonly count: number;
  readonly projection: Projection;
  /**
   * What a cursor is bound to (RFC 9865 section 2: later pages repeat the query): the filter
   * and sortBy as written, and the direction. Paging and projection parameters may change.
   */
  readonly cursorBinding: string;
  /** The `access` parameter of user lists, lowered (scim/access-filter.ts): ANDed with the filter. */
  readonly holds?: Predicate;
  /**
   * The console's word search (scim/word-search.ts), never a request parameter: ANDed with the
   * filter; its `sort`, when given, lists the page instead of sortBy's key.
   */
  readonly words?: { readonly where: Predicate; readonly sort?: OrderKey };
}

/** Raw parameters, from a query string or a SearchRequest body. */
export interface RawListParams {
  readonly filter?: unknown;
  readonly sortBy?: unknown;
  readonly sortOrder?: unknown;
  readonly startIndex?: unknown;
  readonly cursor?: unknown;
  readonly count?: unknown;
  readonly attributes?: unknown;
  readonly excludedAttributes?: unknown;
  /** User lists: `role:VALUE` or `entitlement:TYPE:VALUE` (scim/access-filter.ts). */
  readonly access?: unknown;
}

export function integerParam(name: string, raw: unknown): number | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n)) throw badRequest('invalidValue', `${name} must be an integer`);
  return n;
}

export function stringParam(name: string, raw: unknown): string | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (Array.isArray(raw)) {
    // A SearchRequest carries attributes as an array of strings (RFC 7644 3.4.3).
    if (raw.every((x) => typeof x === 'string')) return raw.join(',');
    throw badRequest('invalidValue', `${name} must be a string`);
  }
  if (typeof raw !== 'string') throw badRequest('invalidValue', `${name} must be a string`);
  return raw;
}

/** What a request without attributes / excludedAttributes asks for (the common case): the defaults. */
const NO_PROJECTION: Projection = Object.freeze({});

export function parseProjection(rt: ResourceTypeDef, raw: Pick<RawListParams, 'attributes' | 'excludedAttributes'>): Projection {
  const attributes = stringParam('attributes', raw.attributes);
  const excluded = stringParam('excludedAttributes', raw.excludedAttributes);
  if (attributes === undefined && excluded === undefined) return NO_PROJECTION;
  const projection: Projection = {
    ...(attributes !== undefined ? { attributes: parseAttributeList(attributes) } : {}),
    ...(excluded !== undefined ? { excludedAttributes: parseAttributeList(excluded) } : {}),
  };
  checkProjection(rt, projection);
  return projection;
}

/**
 * RFC 9865 section 2.3: clients choose the method with `startIndex` (index) or `cursor` (even
 * empty: cursor), so a request carrying both names two methods and is refused rather than
 * guessed at. Neither means index paging, the advertised default.
 */
function parsePaging(raw: RawListParams): Paging {
  const startIndex = integerParam('startIndex', raw.startIndex);
  if (raw.cursor === undefined || raw.cursor === null) return { method: 'index', startIndex: Math.max(1, startIndex ?? 1) };
  if (typeof raw.cursor !== 'string') throw badRequest('invalidCursor', 'cursor must be a string: empty for the first page, then a nextCursor or previousCursor value');
  if (startIndex !== undefined) {
    throw badRequest('invalidValue', 'startIndex (index paging) and cursor (cursor paging, RFC 9865) cannot be used together; send one of them');
  }
  return { method: 'cursor', cursor: raw.cursor };
}

export function parseListQuery(rt: ResourceTypeDef, raw: RawListParams): ListQuery {
  const filterText = stringParam('filter', raw.filter);
  const filter = filterText !== undefined ? bindFilter(rt, parseFilter(filterText)) : undefined;
  const sortText = stringParam('sortBy', raw.sortBy);
  const sortBy = sortText !== undefined ? bindSort(rt, parseAttrPath(sortText, 'invalidValue')) : undefined;
  const order = stringParam('sortOrder', raw.sortOrder);
  if (order !== undefined && !/^(ascending|descending)$/i.test(order)) {
    throw badRequest('invalidValue', 'sortOrder must be "ascending" or "descending"');
  }
  const descending = order !== undefined && order.toLowerCase() === 'descending';
  const count = Math.min(MAX_COUNT, Math.max(0, integerParam('count', raw.count) ?? DEFAULT_COUNT));
  return {
    ...(filter !== undefined ? { filter } : {}),
    ...(sortBy !== undefined ? { sortBy } : {}),
    descending,
    paging: parsePaging(raw),
    count,
    projection: parseProjection(rt, raw),
    cursorBinding: JSON.stringify([filterText ?? null, sortText ?? null, descending]),
  };
}

const and = (left: Predicate | undefined, right: Predicate | undefined): Predicate | undefined =>
  left && right ? { kind: 'and', left, right } : (left ?? right);

/** Storage's test of a list query: its filter lowered, ANDed with its `access` (`holds`) and its words. */
export const whereOf = (ctx: ScimContext, query: Pick<ListQuery, 'filter' | 'holds' | 'words'>): Predicate | undefined =>
  and(and(query.filter ? lowerFilter(query.filter, lowering(ctx)) : undefined, query.holds), query.words?.where);
