/**
 * One SCIM write, named by method and path as a client would send it, run through the very
 * service functions the routes call (users.ts, groups.ts) and answered with what the route would
 * answer: status, id, location, version and representation. A Bulk operation (bulk/) and an
 * asynchronous request (src/async) both go through here, so neither can drift from the single
 * request. Nothing here knows HTTP: the path is parsed against the served paths below, and a path
 * no route serves throws the route's own 404 (a team's catalog endpoint: the route's 405).
 *
 * Each service ends in one runWrite transaction (write.ts); `onCommit` runs last inside it with
 * this module's WriteResult, converted from the service's raw transaction result, so whatever the
 * caller records there commits with the write or not at all.
 */
import type { Tx } from '../storage/types.ts';
import { catalogWriteRefusal } from './catalog-resources.ts';
import type { ScimContext } from './context.ts';
import { typesOf } from './context.ts';
import { notFound, ScimError } from './errors.ts';
import * as groups from './groups.ts';
import { parseProjection } from './query.ts';
import { etagOf, locationOf } from './representation.ts';
import * as users from './users.ts';
import type { Preconditions, Versioned } from './users.ts';

export type WriteMethod = 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface WriteOperation {
  readonly method: WriteMethod;
  /** Path under the SCIM base, e.g. "/Users", "/Users/ABC", "/Groups/XYZ", "/Users/ABC/activate" (PUT). */
  readonly path: string;
  readonly data?: unknown;
  /** If-Match: the ETag the client holds (W/"3"); a mismatch is 412. */
  readonly version?: string;
  /** The response's attributes / excludedAttributes (an async single write keeps its query). */
  readonly query?: Readonly<Record<string, string>>;
}

export interface WriteResult {
  readonly status: 200 | 201 | 204;
  readonly id?: string;
  /** meta.location (absolute URL) */
  readonly location?: string;
  /** the ETag, W/"n" */
  readonly version?: string;
  /** the representation the route would answer with (absent for 204) */
  readonly resource?: Record<string, unknown>;
}

/** The served write paths, as parsed from an operation. */
type Target =
  | { readonly kind: 'createUser' | 'createGroup' }
  | { readonly kind: 'replaceUser' | 'patchUser' | 'deleteUser' | 'activateUser' | 'replaceGroup' | 'patchGroup' | 'deleteGroup'; readonly id: string };

/** The path's segments, each percent-decoded as the router decodes a parameter; undefined when one cannot be. */
function segmentsOf(path: string): string[] | undefined {
  const bare = path.split('?')[0] ?? '';
  const parts = (bare.startsWith('/') ? bare.slice(1) : bare).split('/');
  try {
    return parts.map((p) => decodeURIComponent(p));
  } catch {
    return undefined;
  }
}

/** What the route table answers for `method path`: the served write, or the 405 / 404 the route throws. */
function targetOf(ctx: ScimContext, method: WriteMethod, path: string): Target {
  // One trailing slash is ignored, as the router's ignoreTrailingSlash does for the single routes.
  const segments = segmentsOf(path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);
  const refusal = (): ScimError =>
    (segments && segments.length <= 2 && segments[0] ? catalogWriteRefusal(ctx, segments[0]) : undefined) ??
    new ScimError(404, `No SCIM endpoint ${method} ${path.split('?')[0]}`);
  if (!segments || segments.some((s) => s === '')) throw refusal();
  const [endpoint, id, action] = segments;
  if (segments.length === 1) {
    if (method === 'POST' && endpoint === 'Users') return { kind: 'createUser' };
    if (method === 'POST' && endpoint === 'Groups') return { kind: 'createGroup' };
  } else if (segments.length === 2 && id !== undefined) {
    if (endpoint === 'Users' && method === 'PUT') return { kind: 'replaceUser', id };
    if (endpoint === 'Users' && method === 'PATCH') return { kind: 'patchUser', id };
    if (endpoint === 'Users' && method === 'DELETE') return { kind: 'deleteUser', id };
    if (endpoint === 'Groups' && method === 'PUT') return { kind: 'replaceGroup', id };
    if (endpoint === 'Groups' && method === 'PATCH') return { kind: 'patchGroup', id };
    if (endpoint === 'Groups' && method === 'DELETE') return { kind: 'deleteGroup', id };
  } else if (segments.length === 3 && id !== undefined && endpoint === 'Users' && action === 'activate' && method === 'PUT') {
    return { kind: 'activateUser', id };
  }
  throw refusal();
}

const fromVersioned = (status: 200 | 201, v: Versioned): WriteResult => {
  const meta = v.resource.meta as { location?: unknown } | undefined;
  return {
    status,
    id: v.id,
    ...(typeof meta?.location === 'string' ? { location: meta.location } : {}),
    version: v.etag,
    resource: v.resource,
  };
};

/**
 * The route's answer from a service's raw transaction result (what runWrite's body returned):
 * users answer Versioned; a group PATCH `{etag, resource?}`, or on its lone-member path the new
 * version (undefined: no such group); a group DELETE nothing.
 */
function resultOf(ctx: ScimContext, target: Target, raw: unknown): WriteResult {
  switch (target.kind) {
    case 'createUser':
    case 'createGroup':
      return fromVersioned(201, raw as Versioned);
    case 'replaceUser':
    case 'patchUser':
    case 'activateUser':
    case 'replaceGroup':
      return fromVersioned(200, raw as Versioned);
    case 'deleteUser': {
      const v = raw as Versioned;
      return { status: 204, id: target.id, location: locationOf(ctx.baseUrl, typesOf(ctx).User, target.id), version: v.etag };
    }
    case 'deleteGroup':
      return { status: 204, id: target.id, location: locationOf(ctx.baseUrl, typesOf(ctx).Group, target.id) };
    case 'patchGroup': {
      const location = locationOf(ctx.baseUrl, typesOf(ctx).Group, target.id);
      if (raw === undefined) throw notFound(`Group ${target.id} not found`);
      if (typeof raw === 'number') return { status: 204, id: target.id, location, version: etagOf(raw) };
      const patched = raw as { etag: string; resource?: Versioned };
      if (patched.resource) return fromVersioned(200, patched.resource);
      return { status: 204, id: target.id, location, version: patched.etag };
    }
  }
}

/** Runs the service call the route would run for `target`. */
async function serve(ctx: ScimContext, target: Target, op: WriteOperation): Promise<void> {
  const query = op.query ?? {};
  const pre: Preconditions = op.version !== undefined ? { ifMatch: op.version } : {};
  const types = typesOf(ctx);
  switch (target.kind) {
    case 'createUser':
      await users.createUser(ctx, op.data, parseProjection(types.User, query));
      return;
    case 'replaceUser':
      await users.replaceUser(ctx, target.id, op.data, pre, parseProjection(types.User, query));
      return;
    case 'patchUser':
      await users.patchUser(ctx, target.id, op.data, pre, parseProjection(types.User, query));
      return;
    case 'deleteUser':
      await users.deleteUser(ctx, target.id, pre);
      return;
    case 'activateUser':
      await users.activateUser(ctx, target.id, pre, parseProjection(types.User, query));
      return;
    case 'createGroup':
      await groups.createGroup(ctx, op.data, parseProjection(types.Group, query));
      return;
    case 'replaceGroup':
      await groups.replaceGroup(ctx, target.id, op.data, pre, parseProjection(types.Group, query));
      return;
    case 'patchGroup': {
      // As the route: the resource is answered only when the query asked for attributes.
      const wantsBody = query.attributes !== undefined || query.excludedAttributes !== undefined;
      await groups.patchGroup(ctx, target.id, op.data, pre, wantsBody ? parseProjection(types.Group, query) : undefined);
      return;
    }
    case 'deleteGroup':
      await groups.deleteGroup(ctx, target.id, pre);
      return;
  }
}

/** Throws ScimError / OverBudget like the route. `onCommit` runs inside the write's transaction with the result. */
export async function runWriteOperation(
  ctx: ScimContext,
  op: WriteOperation,
  onCommit?: (trx: Tx, result: WriteResult) => Promise<void>,
): Promise<WriteResult> {
  const target = targetOf(ctx, op.method, op.path);
  const outer = ctx.onCommit;
  // The result of the attempt that committed: runWrite may run its body (and this hook) again
  // after a lost race, and only the last run's transaction commits.
  let committed: WriteResult | undefined;
  const hooked: ScimContext = {
    ...ctx,
    onCommit: async (trx, raw) => {
      const result = resultOf(ctx, target, raw);
      if (outer) await outer(trx, raw);
      if (onCommit) await onCommit(trx, result);
      committed = result;
    },
  };
  await serve(hooked, target, op);
  if (!committed) throw new Error(`dispatch: ${op.method} ${op.path} finished without a transaction`);
  return committed;
}
