/**
 * The admin API's group mappings (issue 31 item 4), registered by admin-plugin.ts under
 * `/v2/admin` with its authentication, body parser and SCIM error handler:
 * `GET /Catalog/mappings[?group=ID]`, `POST /Catalog/mappings` (201 new, 200 already there),
 * `DELETE /Catalog/mappings?group=G&kind=role&value=V[&type=T]` (204). Routes parse, call one
 * function of src/access/mappings.ts, and reply.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { listMappings, mapGroup, unmapGroup } from '../access/mappings.ts';
import type { MappingChange, MappingDeps } from '../access/mappings.ts';
import type { Bearer } from '../oauth/tokens.ts';
import { ScimError } from '../scim/errors.ts';
import type { documented, RouteDoc } from './openapi/route-doc.ts';
import { mappingDocs } from './openapi/routes-other.ts';

/** What admin-plugin.ts lends these routes: its dependencies and its per-request team and actor. */
export interface AdminRouteKit {
  readonly deps: MappingDeps;
  readonly team: (request: FastifyRequest) => Bearer['team'];
  readonly change: (request: FastifyRequest) => MappingChange;
  readonly doc: (d: RouteDoc) => ReturnType<typeof documented>;
}

const JSON_TYPE = 'application/scim+json; charset=utf-8';

interface MappingQuery {
  group?: string;
  kind?: string;
  type?: string;
  value?: string;
}

export function registerMappingRoutes(app: FastifyInstance, { deps, team, change, doc }: AdminRouteKit): void {
  app.get<{ Querystring: MappingQuery }>('/Catalog/mappings', doc(mappingDocs.list), async (request, reply) => {
    const mappings = await listMappings(deps, team(request), request.query.group !== undefined ? { group: request.query.group } : {});
    return reply.header('content-type', JSON_TYPE).send({ mappings });
  });
  app.post('/Catalog/mappings', doc(mappingDocs.create), async (request, reply) => {
    const body = request.body;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new ScimError(400, 'The body must be {"group": ID, "kind": "role" | "entitlement", "value": V, "type"?: T}', 'invalidSyntax');
    const { mapping, created } = await mapGroup(deps, team(request), body as Record<string, unknown>, change(request));
    return reply.code(created ? 201 : 200).header('content-type', JSON_TYPE).send(mapping);
  });
  app.delete<{ Querystring: MappingQuery }>('/Catalog/mappings', doc(mappingDocs.remove), async (request, reply) => {
    await unmapGroup(deps, team(request), request.query, change(request));
    return reply.code(204).send();
  });
}
