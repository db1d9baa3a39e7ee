/**
 * GET /v2/openapi.json: the document generator.ts builds from the collected routes. Built on
 * the first request (every route is registered by then) and kept; with a valid bearer token of a
 * team (any scope) the answer is that team's document (its schema extensions), kept per version
 * of the team's types; an invalid token is a 401 in the SCIM error shape; no token, the base
 * document. Answers carry a strong ETag (304 on If-None-Match).
 */
import { createHash } from 'node:crypto';
import type { FastifyError, FastifyInstance } from 'fastify';
import type { BearerCache } from '../../oauth/bearer-cache.ts';
import type { TeamTypes } from '../../scim/schema/extensions.ts';
import { CORE_TYPES } from '../../scim/schema/extensions.ts';
import { ScimError, scimErrorOf } from '../../scim/errors.ts';
import type { TeamTypesCache } from '../../scim/team-schemas.ts';
import type { Storage } from '../../storage/connect.ts';
import { bearerToken, sendScimError } from '../scim-plugin.ts';
import { buildDocument } from './generator.ts';
import type { CollectedRoute } from './generator.ts';
import { errors, jsonAnswer } from './responses.ts';
import { documented } from './route-doc.ts';

export interface OpenApiOptions {
  readonly routes: readonly CollectedRoute[];
  readonly baseUrl: string;
  readonly version: string;
  readonly storage: Storage;
  readonly bearers: BearerCache;
  readonly types: TeamTypesCache;
}

interface Rendered {
  readonly bytes: Buffer;
  readonly etag: string;
}

export async function openapiPlugin(app: FastifyInstance, options: OpenApiOptions): Promise<void> {
  const rendered = new WeakMap<TeamTypes, Rendered>();
  const render = (types: TeamTypes): Rendered => {
    let found = rendered.get(types);
    if (!found) {
      const bytes = Buffer.from(JSON.stringify(buildDocument(options.routes, options, types)));
      found = { bytes, etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"` };
      rendered.set(types, found);
    }
    return found;
  };

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = scimErrorOf(error);
    if (known) return sendScimError(request, reply, known);
    request.log.error({ err: error }, 'unhandled error');
    return sendScimError(request, reply, new ScimError(500, 'Internal server error'));
  });

  const doc = documented(
    {
      summary: 'This OpenAPI document',
      description: 'With a team\'s access token (any scope), the document includes that team\'s schema extensions.',
      tags: ['Documentation'],
      operationId: 'getOpenApiDocument',
      security: [{}, { oauth2: [] }, { bearerToken: [] }],
      responses: {
        '200': jsonAnswer('The OpenAPI 3.1 document.', { type: 'object', required: ['openapi', 'paths'] }, ['application/json']),
        '304': { description: 'Not modified (If-None-Match).' },
        ...errors('scim', [401, 500]),
      },
      errors: 'scim',
    },
    (message) => new ScimError(400, message, 'invalidValue'),
  );

  app.get('/v2/openapi.json', doc, async (request, reply) => {
    const token = bearerToken(request.headers.authorization);
    let types = CORE_TYPES;
    if (token !== undefined) {
      const bearer = await options.bearers.verify(token);
      if (!bearer) {
        throw new ScimError(401, 'The access token is invalid, expired or revoked', undefined, { 'www-authenticate': 'Bearer realm="rollcall", error="invalid_token"' });
      }
      types = await options.types.typesOf(options.storage.db, bearer.team);
    }
    const { bytes, etag } = render(types);
    reply.header('etag', etag).header('vary', 'authorization');
    reply.header('cache-control', token === undefined ? 'public, max-age=300' : 'private, max-age=60');
    const held = request.headers['if-none-match'];
    if (typeof held === 'string' && held.split(',').some((t) => t.trim() === etag)) return reply.code(304).send();
    return reply.code(200).header('content-type', 'application/json; charset=utf-8').send(bytes);
  });
}
