/**
 * The authorization server's machine endpoints: POST /oauth/token, /oauth/revoke and
 * /oauth/introspect (form bodies, RFC 6749 3.2), and GET /.well-known/oauth-authorization-server.
 * Every answer carries `Cache-Control: no-store` and `Pragma: no-cache` (RFC 6749 5.1); every
 * failure is an RFC 6749 5.2 JSON body rendered by this plugin's own error handler; anything
 * unknown becomes a bland `server_error`. The token response has the contract's exact shape.
 * Failed requests to the three POST endpoints are counted per source address; an address over its
 * limit is refused before its request's body is read (429 `slow_down` with Retry-After).
 * Successful requests are not counted, so busy clients are never slowed down.
 */
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OAuthContext } from '../oauth/context.ts';
import { introspect, revoke, token } from '../oauth/endpoints.ts';
import type { EndpointRequest } from '../oauth/endpoints.ts';
import { OAuthError } from '../oauth/errors.ts';
import { serverMetadata } from '../oauth/metadata.ts';
import { scopeString } from '../oauth/scopes.ts';
import type { GrantedTokens } from '../oauth/tokens.ts';
import type { Metrics } from './metrics.ts';
import { documented } from './openapi/route-doc.ts';
import { addComponentSchemas } from './openapi/body-validation.ts';
import type { RouteDoc } from './openapi/route-doc.ts';
import { oauthDocs } from './openapi/routes-other.ts';

const doc = (d: RouteDoc) => documented(d, (message) => new OAuthError('invalid_request', message));

/** The contract's Content-Type for token responses, byte for byte (seed section 5.3). */
const TOKEN_CONTENT_TYPE = 'application/json;charset=UTF-8';

function sendJson(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply
    .code(status)
    .header('content-type', TOKEN_CONTENT_TYPE)
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .send(Buffer.from(JSON.stringify(body)));
}

/** The contract's token response (seed 5.3) plus the standard numeric expires_in (RFC 6749 5.1). */
export function tokenResponse(tokens: GrantedTokens): Record<string, unknown> {
  return {
    access_token: tokens.accessToken,
    token_type: 'bearer',
    ...(tokens.refreshToken !== undefined ? { refresh_token: tokens.refreshToken } : {}),
    Expires_in: String(tokens.expiresIn),
    expires_in: tokens.expiresIn,
    scope: scopeString(tokens.scope),
  };
}

function classify(error: FastifyError): OAuthError | undefined {
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return new OAuthError('invalid_request', 'Send the parameters as application/x-www-form-urlencoded');
  }
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new OAuthError('invalid_request', 'The request body is too large', 413);
  const status = error.statusCode;
  if (status !== undefined && status >= 400 && status < 500) return new OAuthError('invalid_request', error.message);
  return undefined;
}

const endpointRequest = (request: FastifyRequest): EndpointRequest => ({
  body: request.body,
  query: (request.query ?? {}) as Record<string, unknown>,
  authorization: request.headers.authorization,
  requestId: request.id,
  address: request.ip,
  log: request.log,
});

export async function oauthPlugin(app: FastifyInstance, options: { readonly context: OAuthContext; readonly metrics: Metrics }): Promise<void> {
  const ctx = options.context;
  // RFC 6749 3.2: the machine endpoints take form bodies only. Fastify's inherited JSON parser
  // would hand a JSON object to the grants as if it were a form, so every parser but the form
  // one is removed: any other Content-Type is an invalid_request and nothing is issued.
  app.removeAllContentTypeParsers();
  addComponentSchemas(app);
  await app.register(formbody, { bodyLimit: 64 * 1024 });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = error instanceof OAuthError ? error : classify(error);
    if (known) {
      for (const [k, v] of Object.entries(known.headers)) reply.header(k, v);
      return sendJson(reply, known.status, known.toBody());
    }
    request.log.error({ err: error }, 'unhandled error in the OAuth endpoints');
    return sendJson(reply, 500, { error: 'server_error', error_description: 'Internal server error' });
  });

  // Per source address: checked before the body is parsed (a flood of failures costs one counter
  // read per request, not a lookup), counted once a request has failed.
  // Failures that are not the caller's (the address's own refusal, a busy server) are not counted.
  const uncounted = new WeakSet<FastifyRequest>();
  const perAddress = {
    onRequest: async (request: FastifyRequest) => ctx.limits.assertAddressAllowed(request.ip),
    onError: async (request: FastifyRequest, _reply: FastifyReply, error: unknown) => {
      if (error instanceof OAuthError && !error.countsAgainstAddress) uncounted.add(request);
    },
    onResponse: async (request: FastifyRequest, reply: FastifyReply) => {
      if (reply.statusCode >= 400 && reply.statusCode < 500 && !uncounted.has(request)) await ctx.limits.addressFailed(request.ip);
    },
  };

  app.post('/oauth/token', { ...perAddress, ...doc(oauthDocs.token) }, async (request, reply) => {
    const body = request.body as Record<string, unknown> | undefined;
    const grantType = typeof body?.grant_type === 'string' ? body.grant_type : 'none';
    try {
      const tokens = await token(ctx, endpointRequest(request));
      options.metrics.grant(grantType, 'issued');
      return sendJson(reply, 200, tokenResponse(tokens));
    } catch (error) {
      options.metrics.grant(grantType, error instanceof OAuthError ? error.error : 'server_error');
      throw error;
    }
  });
  app.post('/oauth/revoke', { ...perAddress, ...doc(oauthDocs.revoke) }, async (request, reply) => {
    await revoke(ctx, endpointRequest(request));
    return sendJson(reply, 200, {});
  });
  app.post('/oauth/introspect', { ...perAddress, ...doc(oauthDocs.introspect) }, async (request, reply) => sendJson(reply, 200, await introspect(ctx, endpointRequest(request))));

  // RFC 6749 3.2: the token endpoint takes POST only.
  for (const path of ['/oauth/token', '/oauth/revoke', '/oauth/introspect']) {
    app.get(path, doc(oauthDocs.postOnly(path)), async (_request, reply) => {
      reply.header('allow', 'POST');
      return sendJson(reply, 405, { error: 'invalid_request', error_description: `${path} accepts POST only` });
    });
  }

  app.get('/.well-known/oauth-authorization-server', doc(oauthDocs.metadata), async (_request, reply) =>
    reply.code(200).header('content-type', 'application/json').header('cache-control', 'public, max-age=300').send(Buffer.from(JSON.stringify(serverMetadata(ctx.issuer, ctx.passwordGrant)))),
  );
}
