/**
 * A BulkRequest body (RFC 7644 3.7) checked before any operation runs: the message schema, the
 * `Operations` array within maxOperations (3.7.4: 413 naming the limit), each operation's method,
 * path, bulkId (required on POST, unique among the request's POSTs: 3.7.2), data (required on
 * POST, PUT and PATCH) and version, and `failOnErrors`. A malformed request is refused whole
 * with a 400 naming the operation's index, so nothing runs on a request the client got wrong.
 * Attribute names are matched case-insensitively (RFC 7643 2.1).
 */
import { badRequest, ScimError } from '../errors.ts';
import type { WriteMethod } from '../dispatch.ts';

export const BULK_REQUEST = 'urn:ietf:params:scim:api:messages:2.0:BulkRequest';
export const BULK_RESPONSE = 'urn:ietf:params:scim:api:messages:2.0:BulkResponse';
export const BULK_MAX_OPERATIONS = 1_000;
/** The Bulk endpoint's path under the SCIM base (RFC 7644 3.7). */
export const BULK_PATH = '/Bulk';
export const BULK_MAX_PAYLOAD = 4 * 1024 * 1024;

/** One operation as the client sent it, checked. */
export interface BulkOperation {
  /** Its position in the request's `Operations` (0-based). */
  readonly index: number;
  readonly method: WriteMethod;
  readonly path: string;
  readonly bulkId?: string;
  readonly data?: unknown;
  readonly version?: string;
}

export interface ParsedBulk {
  readonly failOnErrors?: number;
  readonly operations: readonly BulkOperation[];
}

const METHODS: readonly WriteMethod[] = ['POST', 'PUT', 'PATCH', 'DELETE'];

/** The value of `name` in `object`, whatever the case of its key. */
function field(object: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(object, name)) return object[name];
  const lower = name.toLowerCase();
  for (const key of Object.keys(object)) if (key.toLowerCase() === lower) return object[key];
  return undefined;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The error a request with more than maxOperations operations gets (RFC 7644 3.7.4). */
export const tooManyOperations = (count: number): ScimError =>
  new ScimError(413, `The bulk request has ${count} operations, over this server's maxOperations of ${BULK_MAX_OPERATIONS}; split it into several requests`);

/** The error a body over maxPayloadSize gets (RFC 7644 3.7.4). */
export const payloadTooLarge = (): ScimError =>
  new ScimError(413, `The bulk request body is larger than this server's maxPayloadSize of ${BULK_MAX_PAYLOAD} bytes; split it into several requests`);

function parseOperation(raw: unknown, index: number): BulkOperation {
  const at = `Operations[${index}]`;
  if (!isObject(raw)) throw badRequest('invalidSyntax', `${at} must be an object with method, path and (for POST, PUT and PATCH) data`);
  const method = field(raw, 'method');
  if (method === undefined) throw badRequest('invalidSyntax', `${at} has no method`);
  const upper = typeof method === 'string' ? method.toUpperCase() : undefined;
  const known = METHODS.find((m) => m === upper);
  if (!known) throw badRequest('invalidValue', `${at}.method must be one of POST, PUT, PATCH or DELETE`);
  const path = field(raw, 'path');
  if (path === undefined) throw badRequest('invalidSyntax', `${at} has no path`);
  if (typeof path !== 'string' || !path.startsWith('/') || path.length < 2) {
    throw badRequest('invalidValue', `${at}.path must be a path under the SCIM base such as /Users or /Groups/{id}`);
  }
  if (path.includes('?')) throw badRequest('invalidValue', `${at}.path must not carry a query`);
  const bulkId = field(raw, 'bulkId');
  if (bulkId !== undefined && (typeof bulkId !== 'string' || bulkId === '')) throw badRequest('invalidValue', `${at}.bulkId must be a non-empty string`);
  if (known === 'POST' && bulkId === undefined) throw badRequest('invalidSyntax', `${at} is a POST and has no bulkId (RFC 7644 3.7: required when method is POST)`);
  const data = field(raw, 'data');
  if (known !== 'DELETE' && data === undefined) throw badRequest('invalidSyntax', `${at} is a ${known} and has no data`);
  if (data !== undefined && !isObject(data)) throw badRequest('invalidSyntax', `${at}.data must be an object`);
  const version = field(raw, 'version');
  if (version !== undefined && typeof version !== 'string') throw badRequest('invalidValue', `${at}.version must be a string (an ETag such as W/"3")`);
  return {
    index,
    method: known,
    path,
    ...(bulkId !== undefined ? { bulkId: bulkId as string } : {}),
    ...(data !== undefined && known !== 'DELETE' ? { data } : {}),
    ...(version !== undefined ? { version } : {}),
  };
}

/** Checks a BulkRequest body; throws the 400 or 413 the whole request gets. */
export function parseBulk(body: unknown): ParsedBulk {
  if (!isObject(body)) throw badRequest('invalidSyntax', 'A bulk request body must be a BulkRequest object');
  const schemas = field(body, 'schemas');
  // URNs compare in any case (RFC 7643 2.1), as a PatchOp's do.
  if (!Array.isArray(schemas) || !schemas.some((s) => typeof s === 'string' && s.toLowerCase() === BULK_REQUEST.toLowerCase())) {
    throw badRequest('invalidSyntax', `A bulk request's schemas must contain ${BULK_REQUEST}`);
  }
  const operations = field(body, 'Operations');
  if (!Array.isArray(operations)) throw badRequest('invalidSyntax', 'A bulk request needs Operations, an array of operations');
  if (operations.length > BULK_MAX_OPERATIONS) throw tooManyOperations(operations.length);
  const failOnErrors = field(body, 'failOnErrors');
  if (failOnErrors !== undefined && (typeof failOnErrors !== 'number' || !Number.isInteger(failOnErrors) || failOnErrors < 1)) {
    throw badRequest('invalidValue', 'failOnErrors must be an integer of 1 or more: the number of errors after which the rest of the operations are not run');
  }
  const parsed = operations.map((raw, index) => parseOperation(raw, index));
  const posts = new Map<string, number>();
  for (const op of parsed) {
    if (op.method !== 'POST' || op.bulkId === undefined) continue;
    const earlier = posts.get(op.bulkId);
    if (earlier !== undefined) {
      throw badRequest('invalidValue', `Operations[${op.index}].bulkId "${op.bulkId}" is already used by Operations[${earlier}]; a bulkId must be unique within a bulk request`);
    }
    posts.set(op.bulkId, op.index);
  }
  return { ...(failOnErrors !== undefined ? { failOnErrors: failOnErrors as number } : {}), operations: parsed };
}
