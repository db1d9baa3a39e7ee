/**
 * `POST /Bulk` (RFC 7644 3.7) under both SCIM prefixes: the body may reach maxPayloadSize
 * (4 MiB, the route's own body limit; every other SCIM route keeps 1 MiB), the request is
 * checked and planned whole before any operation runs (400, or 413 over maxOperations), the
 * team takes one of its `bulk.concurrent` places (429 with Retry-After when it holds them all),
 * and the engine (scim/bulk/) runs the operations. The scope check of the plugin already asks a
 * POST for `write`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BULK_MAX_PAYLOAD, enterBulk, payloadTooLarge, planBulk, runBulk } from '../scim/bulk/index.ts';
import type { ScimContext } from '../scim/context.ts';
import { ScimError } from '../scim/errors.ts';
import type { ScanGate } from '../scim/scan-gate.ts';
import { documented } from './openapi/route-doc.ts';
import { scimDocs } from './openapi/routes-scim.ts';
import { responseType, scimPayload } from './scim-payload.ts';

export interface BulkRouteOptions {
  readonly context: (request: FastifyRequest) => ScimContext;
  readonly bulks: ScanGate;
}

const BULK_PATH = '/Bulk';

/** The 413 a body over the Bulk route's limit gets: it names maxPayloadSize (RFC 7644 3.7.4); undefined on any other route. */
export function bulkBodyTooLarge(request: FastifyRequest): ScimError | undefined {
  const url = request.routeOptions.url;
  return request.method === 'POST' && url !== undefined && url.endsWith(BULK_PATH) ? payloadTooLarge() : undefined;
}

export function registerBulkRoute(app: FastifyInstance, options: BulkRouteOptions): void {
  const doc = documented(scimDocs.bulk, (message) => new ScimError(400, message, 'invalidValue'));
  app.post(BULK_PATH, { ...doc, bodyLimit: BULK_MAX_PAYLOAD }, async (request, reply) => {
    const ctx = options.context(request);
    const plan = planBulk(request.body);
    const release = enterBulk(options.bulks, ctx);
    try {
      const response = await runBulk(ctx, plan, undefined, {
        unexpected: (error, step) => request.log.error({ err: error, operation: step.index }, 'bulk operation failed'),
      });
      return reply.code(200).header('content-type', responseType(request)).send(scimPayload(response));
    } finally {
      release();
    }
  });
}
