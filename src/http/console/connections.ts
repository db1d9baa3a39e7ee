/**
 * The console's connections (DESIGN.md section 9): the provisioning tokens and OAuth clients of
 * the team, issuing and revoking a token (a token is shown once, when issued), and the SCIM
 * request log filtered by status and connection. Handlers parse the form, call one function of
 * oauth/provisioning.ts or console/*.ts, and render console/views.ts.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { teamClients } from '../../console/directory.ts';
import { RequestLogFilterError, requestLogEntries } from '../../console/request-log.ts';
import * as views from '../../console/views.ts';
import { issueProvisioningToken, parseLifetime, ProvisioningTokenError, provisioningTokens, revokeProvisioningToken } from '../../oauth/provisioning.ts';
import { field } from './kit.ts';
import type { ConsoleKit } from './kit.ts';

interface Shown {
  readonly issued?: views.IssuedShown;
  readonly message?: string;
  readonly error?: string;
}

export function connectionRoutes(app: FastifyInstance, kit: ConsoleKit): void {
  const { ctx, signedIn, signed, show } = kit;
  const post = { preHandler: [app.csrfProtection, signedIn] };
  const scimBase = `${kit.baseUrl}/v2/scim`;
  /** The team's tokens and clients, both what the connections page lists and what the request log filters by. */
  const connectionsOf = (request: FastifyRequest) => Promise.all([provisioningTokens(ctx.storage, ctx.clock, signed(request).team.id), teamClients(signed(request).scim)]);

  async function connections(request: FastifyRequest, reply: FastifyReply, extra: Shown = {}, status = 200) {
    const [tokens, clients] = await connectionsOf(request);
    return show(request, reply, 'connections', 'Connections', views.connectionsBody(reply.generateCsrf(), scimBase, tokens, clients, extra.issued, extra.message, extra.error), status);
  }

  app.get('/console/connections', { preHandler: signedIn }, async (request, reply) =>
    connections(request, reply, field(request.query, 'revoked') ? { message: 'The token is revoked: the next request with it gets a 401.' } : {}),
  );

  app.post('/console/connections/tokens', post, async (request, reply) => {
    const s = signed(request);
    const chosen = field(request.body, 'scope') || 'provisioning';
    if (!Object.hasOwn(views.TOKEN_SCOPES, chosen)) return connections(request, reply, { error: 'Choose what the token is for: SCIM provisioning, a Shared Signals receiver, or both.' }, 400);
    const scope = views.TOKEN_SCOPES[chosen as keyof typeof views.TOKEN_SCOPES];
    try {
      const issued = await issueProvisioningToken(ctx.storage, ctx.clock, {
        teamId: s.team.id,
        userId: s.user.id,
        name: field(request.body, 'name'),
        scope,
        ttlSeconds: parseLifetime(field(request.body, 'expiresIn') || '180d'),
        actor: s.scim.actor,
        requestId: request.id,
      });
      return connections(request, reply, { issued: { name: issued.name, token: issued.token, expiresAt: issued.expiresAt, scope } });
    } catch (error) {
      if (error instanceof ProvisioningTokenError) return connections(request, reply, { error: error.message }, 400);
      throw error;
    }
  });

  app.post<{ Params: { id: string } }>('/console/connections/tokens/:id/revoke', post, async (request, reply) => {
    const s = signed(request);
    try {
      await revokeProvisioningToken(ctx.storage, ctx.clock, { teamId: s.team.id, id: request.params.id, actor: s.scim.actor, requestId: request.id });
    } catch (error) {
      if (error instanceof ProvisioningTokenError) return connections(request, reply, { error: error.message }, 404);
      throw error;
    }
    return kit.shell.seeOther(reply, '/console/connections?revoked=1');
  });

  app.get('/console/requests', { preHandler: signedIn }, async (request, reply) => {
    const filters = { status: field(request.query, 'status'), connection: field(request.query, 'connection') };
    const [tokens, clients] = await connectionsOf(request);
    const choices: [string, string][] = [...tokens.map((t): [string, string] => [`token:${t.id}`, `token "${t.name}"`]), ...clients.map((c): [string, string] => [`client:${c.id}`, `client ${c.name}`])];
    try {
      const log = await requestLogEntries(ctx.storage, signed(request).team.id, { ...filters, before: field(request.query, 'before') });
      return show(request, reply, 'requests', 'Request log', views.requestsBody(filters, choices, log.entries, log.next));
    } catch (error) {
      if (error instanceof RequestLogFilterError) return show(request, reply, 'requests', 'Request log', views.requestsBody(filters, choices, [], null, error.message), 400);
      throw error;
    }
  });
}
