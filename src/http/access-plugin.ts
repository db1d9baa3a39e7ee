/**
 * The effective-access surface under `/v2/access` (issue 31, DESIGN.md section 12): what the
 * application reads to decide what a user may do. `GET /users/:id` (a user's roles and
 * entitlements with their sources), `GET /roles/:value/users` and
 * `GET /entitlements/:type/:value/users` (who holds an entry, cursor-paged). A bearer token of
 * the team with the `read` scope, checked by the events surface's `requireBearer` (the same
 * bearer cache and answers as SCIM); errors in RFC 7644 3.12 bodies. Routes parse, call
 * src/access/effective.ts, and reply.
 */
import { bearerActor } from '../oauth/tokens.ts';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { accessOfUser, HOLDERS_COUNT_RULE, holdersOf, MAX_HOLDERS } from '../access/effective.ts';
import type { GrantRef } from '../access/effective.ts';
import type { Clock } from '../clock.ts';
import type { BearerCache } from '../oauth/bearer-cache.ts';
import type { PasswordHasher } from '../oauth/passwords.ts';
import type { ScimContext } from '../scim/context.ts';
import { badRequest, ScimError, scimErrorOf } from '../scim/errors.ts';
import type { TeamTypesCache } from '../scim/team-schemas.ts';
import type { Storage } from '../storage/connect.ts';
import { unstorableText } from '../text.ts';
import type { AccessLog } from './access-log.ts';
import { requireBearer } from './events-plugin.ts';
import { documented } from './openapi/route-doc.ts';
import type { RouteDoc } from './openapi/route-doc.ts';
import { accessDocs } from './openapi/routes-other.ts';
import { sendScimError } from './scim-plugin.ts';
import { scimBody } from './scim-payload.ts';

/** A declared route's options; a parameter that fails its schema is a SCIM 400 invalidValue. */
const doc = (d: RouteDoc) => documented(d, (message) => new ScimError(400, message, 'invalidValue'));

export interface AccessPluginOptions {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly baseUrl: string;
  /** Signs the holders' cursors (the SCIM lists' secret). */
  readonly cursorSecret: string;
  readonly passwords: PasswordHasher;
  readonly bearers: BearerCache;
  /** Each team's resource types, which carry its catalog. */
  readonly types: TeamTypesCache;
  readonly accessLog?: AccessLog;
}

/**
 * The page size from the query: a whole number of at least 1, any larger than MAX_HOLDERS (however
 * many digits) counting as MAX_HOLDERS; anything else a 400 saying so.
 */
function countOf(raw: unknown): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw)) throw badRequest('invalidValue', HOLDERS_COUNT_RULE);
  const count = Number(raw);
  if (count < 1) throw badRequest('invalidValue', HOLDERS_COUNT_RULE);
  return Math.min(count, MAX_HOLDERS);
}

export async function accessPlugin(app: FastifyInstance, options: AccessPluginOptions): Promise<void> {
  app.addHook('preValidation', async (request) => {
    if (unstorableText(request.params) !== undefined || unstorableText(request.query) !== undefined) {
      throw new ScimError(400, 'The URL holds text that is not valid Unicode or contains NUL characters', 'invalidValue');
    }
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = scimErrorOf(error);
    if (known) return sendScimError(request, reply, known);
    const status = error.statusCode;
    if (status !== undefined && status >= 400 && status < 500) return sendScimError(request, reply, new ScimError(status, error.message));
    request.log.error({ err: error }, 'unhandled error');
    return sendScimError(request, reply, new ScimError(500, 'Internal server error'));
  });
  app.setNotFoundHandler((request, reply) => sendScimError(request, reply, new ScimError(404, `No access endpoint ${request.method} ${request.url.split('?')[0]}`)));

  /** The request's context: the token's team (read scope) with its types, which carry the catalog. */
  const contextOf = async (request: FastifyRequest): Promise<ScimContext> => {
    const bearer = await requireBearer(options, request, 'read');
    return {
      storage: options.storage,
      clock: options.clock,
      baseUrl: options.baseUrl,
      team: bearer.team,
      actor: bearerActor(bearer),
      requestId: request.id,
      cursorSecret: options.cursorSecret,
      passwords: options.passwords,
      types: await options.types.typesOf(options.storage.db, bearer.team),
    };
  };
  const send = (reply: FastifyReply, body: unknown) => reply.code(200).header('content-type', 'application/json').send(scimBody(body));
  const holders = async (request: FastifyRequest, reply: FastifyReply, grant: GrantRef) => {
    const ctx = await contextOf(request);
    const query = request.query as { count?: unknown; cursor?: unknown };
    const count = countOf(query.count);
    const cursor = typeof query.cursor === 'string' ? query.cursor : undefined;
    return send(reply, await holdersOf(ctx, grant, { ...(count !== undefined ? { count } : {}), ...(cursor !== undefined ? { cursor } : {}) }));
  };

  app.get<{ Params: { id: string } }>('/users/:id', doc(accessDocs.user), async (request, reply) => send(reply, await accessOfUser(await contextOf(request), request.params.id)));
  app.get<{ Params: { value: string } }>('/roles/:value/users', doc(accessDocs.roleHolders), async (request, reply) =>
    holders(request, reply, { kind: 'role', value: request.params.value }),
  );
  app.get<{ Params: { type: string; value: string } }>('/entitlements/:type/:value/users', doc(accessDocs.entitlementHolders), async (request, reply) =>
    holders(request, reply, { kind: 'entitlement', type: request.params.type, value: request.params.value }),
  );
}
