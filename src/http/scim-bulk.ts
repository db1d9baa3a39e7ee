/**
 * `POST /Bulk` (RFC 7644 3.7) under both SCIM prefixes: the body may reach maxPayloadSize
 * (4 MiB, the route's own body limit; every other SCIM route keeps 1 MiB), the request is
 * checked and planned whole before any operation runs (400, or 413 over maxOperations), the
 * team takes one of its `bulk.concurrent` places (429 with Retry-After when it holds them all),
 * and the engine (scim/bulk/) runs the operations. The scope check of the plugin already asks a
 * POST for `write`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BULK_MAX_PAYLOAD, BULK_PATH, enterBulk, payloadTooLarge, planBulk, runBulk } from '../scim/bulk/index.ts';
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
    // The socket is silent while the operations run, yet the server is working for the client:
    // the connection's idle timeout is lifted for the Bulk's duration, or a Bulk longer than it
    // would commit its operations and lose the response listing them (RFC 7644 3.7.3). Node's
    // requestTimeout and headersTimeout stop counting once the request has been read whole.
    // A client that disconnects mid-Bulk does not stop it: the request it sent asked for every
    // operation, and running all of them leaves the same directory whenever the connection drops
    // (stopping would leave a prefix that depends on network timing, and a response lost after
    // the last operation is possible anyway). The team's Bulk place stays taken until the end, so
    // disconnecting does not get round `bulk.concurrent`.
    // (An injected request's stand-in socket has no timers.)
    const raw = request.raw.socket as typeof request.raw.socket | null;
    const socket = raw && typeof raw.setTimeout === 'function' ? raw : null;
    const idle = socket?.timeout;
    socket?.setTimeout(0);
    try {
      const response = await runBulk(ctx, plan, undefined, {
        unexpected: (error, step) => request.log.error({ err: error, operation: step.index }, 'bulk operation failed'),
      });
      if (idle !== undefined && socket && !socket.destroyed) socket.setTimeout(idle);
      return reply.code(200).header('content-type', responseType(request)).send(scimPayload(response));
    } finally {
      if (idle !== undefined && socket && !socket.destroyed && socket.timeout === 0) socket.setTimeout(idle);
      release();
    }
  });
}
