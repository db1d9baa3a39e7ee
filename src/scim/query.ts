/**
 * Parses the query of a list or search request (RFC 7644 sections 3.4.2 and 3.4.3): filter,
 * sortBy, sortOrder, startIndex, count, attributes, excludedAttributes. Paging follows the RFC:
 * startIndex below 1 means 1, a negative count means 0, count is capped at MAX_COUNT.
 */
import { badRequest } from './errors.ts';
import type { AttrPath, Filter } from './filter/ast.ts';
import { bindFilter } from './filter/bind.ts';
import { parseFilter } from './filter/parse.ts';
import { parseAttrPath, parseAttributeList } from './path.ts';
import { checkProjection } from './project.ts';
import type { Projection } from './project.ts';
import { resolvePath } from './schema/registry.ts';
import type { ResourceTypeDef } from './schema/types.ts';

export const DEFAULT_COUNT = 100;
export const MAX_COUNT = 1000;

export interface ListQuery {
  readonly filter?: Filter;
  readonly sortBy?: AttrPath;
  readonly descending: boolean;
  readonly startIndex: number;
  readonly count: number;
  readonly projection: Projection;
}

/** Raw parameters, from a query string or a SearchRequest body. */
export interface RawListParams {
  readonly filter?: unknown;
  readonly sortBy?: unknown;
  readonly sortOrder?: unknown;
  readonly startIndex?: unknown;
  readonly count?: unknown;
  readonly attributes?: unknown;
  readonly excludedAttributes?: unknown;
}

function integerParam(name: string, raw: unknown): number | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n)) throw badRequest('invalidValue', `${name} must be an integer`);
  return n;
}

function stringParam(name: string, raw: unknown): string | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  if (Array.isArray(raw)) {
    // A SearchRequest carries attributes as an array of strings (RFC 7644 3.4.3).
    if (raw.every((x) => typeof x === 'string')) return raw.join(',');
    throw badRequest('invalidValue', `${name} must be a string`);
  }
  if (typeof raw !== 'string') throw badRequest('invalidValue', `${name} must be a string`);
  return raw;
}

export function parseProjection(rt: ResourceTypeDef, raw: Pick<RawListParams, 'attributes' | 'excludedAttributes'>): Projection {
  const attributes = stringParam('attributes', raw.attributes);
  const excluded = stringParam('excludedAttributes', raw.excludedAttributes);
  const projection: Projection = {
    ...(attributes !== undefined ? { attributes: parseAttributeList(attributes) } : {}),
    ...(excluded !== undefined ? { excludedAttributes: parseAttributeList(excluded) } : {}),
  };
  checkProjection(rt, projection);
  return projection;
}

export function parseListQuery(rt: ResourceTypeDef, raw: RawListParams): ListQuery {
  const filterText = stringParam('filter', raw.filter);
  const filter = filterText !== undefined ? bindFilter(rt, parseFilter(filterText)) : undefined;
  const sortText = stringParam('sortBy', raw.sortBy);
  const sortBy: AttrPath | undefined = sortText !== undefined ? parseAttrPath(sortText, 'invalidValue') : undefined;
  if (sortBy !== undefined) resolvePath(rt, sortBy, 'invalidValue');
  const order = stringParam('sortOrder', raw.sortOrder);
  if (order !== undefined && !/^(ascending|descending)$/i.test(order)) {
    throw badRequest('invalidValue', 'sortOrder must be "ascending" or "descending"');
  }
  const startIndex = Math.max(1, integerParam('startIndex', raw.startIndex) ?? 1);
  const count = Math.min(MAX_COUNT, Math.max(0, integerParam('count', raw.count) ?? DEFAULT_COUNT));
  return {
    ...(filter !== undefined ? { filter } : {}),
    ...(sortBy !== undefined ? { sortBy } : {}),
    descending: order !== undefined && order.toLowerCase() === 'descending',
    startIndex,
    count,
    projection: parseProjection(rt, raw),
  };
}
