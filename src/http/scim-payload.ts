/**
 * The bytes of a SCIM response: its media type from the client's Accept, and its body without a
 * charset parameter, streamed when it holds arrays read while it is sent.
 */
import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { jsonBody } from '../scim/json-stream.ts';

const SCIM_JSON = 'application/scim+json';

/** Responses are scim+json unless the client's Accept asks only for application/json. */
export function responseType(request: FastifyRequest): string {
  const accept = request.headers.accept;
  if (!accept) return SCIM_JSON;
  const types = accept.split(',').map((t) => t.split(';')[0]?.trim().toLowerCase());
  return types.includes('application/json') && !types.some((t) => t === SCIM_JSON || t === '*/*' || t === 'application/*')
    ? 'application/json'
    : SCIM_JSON;
}

/**
 * A response body as bytes: Fastify appends `; charset=utf-8` to any JSON media type sent as a
 * string, and Microsoft's SCIM validator rejects a charset parameter (DESIGN.md section 4).
 */
export const scimBody = (body: unknown): Buffer => Buffer.from(JSON.stringify(body));

/**
 * A resource or list body as bytes, or as a stream when it holds arrays read while it is sent
 * (a big group's members, scim/json-stream.ts); a stream gets no charset either. Should a read
 * fail once bytes are out, Fastify destroys the connection: the client sees a truncated body,
 * never a complete one.
 */
export function scimPayload(body: unknown): Buffer | Readable {
  const payload = jsonBody(body);
  return 'bytes' in payload ? payload.bytes : Readable.from(payload.pieces);
}
