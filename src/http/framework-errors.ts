/**
 * Failures the router meets before any plugin sees the request (a malformed percent-encoding, a
 * path segment longer than any id): answered in the shape of the protocol the path belongs to,
 * SCIM (RFC 7644 3.12) under /scim and /v2/scim and under /v2/access and /v2/admin (whose own
 * errors are SCIM-shaped too), OAuth (RFC 6749 5.2) under /oauth, and without echoing the path back.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ScimError } from '../scim/errors.ts';
import { sendScimError } from './scim-plugin.ts';

export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // These answers skip the app's onSend hooks: the same headers as every other answer.
  void reply.header('x-request-id', request.id).header('x-content-type-options', 'nosniff');
  const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
  const path = request.url.split('?')[0] ?? '';
  if (/^\/((v2\/)?scim|v2\/access|v2\/admin)(\/|$)/.test(path)) {
    // A path segment longer than any id names nothing that exists.
    sendScimError(request, reply, tooLong ? new ScimError(404, 'No such resource') : new ScimError(400, 'The URL is not valid (bad percent-encoding)', 'invalidSyntax'));
    return;
  }
  const body = path.startsWith('/oauth/')
    ? { error: 'invalid_request', error_description: 'The URL is not valid' }
    : { error: tooLong ? 'not_found' : 'bad_request', detail: 'The URL is not valid' };
  void reply.code(tooLong && !path.startsWith('/oauth/') ? 404 : 400).header('cache-control', 'no-store').send(body);
}
