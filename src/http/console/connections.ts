/**
 * The console's Connections pages (issue 30, item 1; DESIGN.md section 9): the team's
 * connections with their tokens and clients; adding, renaming and deleting one (deleting after a
 * confirmation that says what stops working); issuing a connection's token with
 * post/redirect/get (the secret handed to one GET in a short-lived cookie, handoff.ts, so a
 * reload issues nothing and shows it gone); revoking a token after a confirmation; and the SCIM
 * request log, filtered by status and connection. Handlers parse the form, call one function of
 * oauth/connections.ts, oauth/provisioning.ts or console/*.ts, and render a view.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import * as cv from '../../console/connection-views.ts';
import { teamClients } from '../../console/directory.ts';
import { RequestLogFilterError, requestLogEntries } from '../../console/request-log.ts';
import * as views from '../../console/views.ts';
import { ConnectionError, connectionById, createConnection, deleteConnection, listConnections, renameConnection } from '../../oauth/connections.ts';
import type { ConnectionView } from '../../oauth/connections.ts';
import { issueProvisioningToken, parseLifetime, ProvisioningTokenError, provisioningTokens, revokeProvisioningToken } from '../../oauth/provisioning.ts';
import { ScimError } from '../../scim/errors.ts';
import { handOnce, takeOnce } from './handoff.ts';
import { field } from './kit.ts';
import type { ConsoleKit } from './kit.ts';

/** The cookie that hands a new token from its POST to the GET that shows it once. */
const NEW_TOKEN_COOKIE = 'rollcall_new_token';

export function connectionRoutes(app: FastifyInstance, kit: ConsoleKit): void {
  const { ctx, signedIn, signed, show } = kit;
  const post = { preHandler: [app.csrfProtection, signedIn] };
  const scimBase = `${kit.baseUrl}/v2/scim`;
  const secure = kit.baseUrl.startsWith('https:');
  const now = () => ctx.clock.now();

  async function connectionOf(request: FastifyRequest, id: string): Promise<ConnectionView> {
    const found = await connectionById(ctx.storage.db, signed(request).team.id, id, now().toISOString());
    if (!found) throw new ScimError(404, 'There is no such connection in this team.');
    return found;
  }

  async function list(request: FastifyRequest, reply: FastifyReply, notes: { message?: string; error?: string } = {}, status = 200) {
    const s = signed(request);
    const [connections, tokens, clients] = await Promise.all([listConnections(ctx.storage, s.team.id, now().toISOString()), provisioningTokens(ctx.storage, ctx.clock, s.team.id), teamClients(s.scim)]);
    return show(request, reply, 'connections', 'Connections', cv.connectionsListBody(reply.generateCsrf(), now(), connections, tokens, clients, notes.message, notes.error), status);
  }

  async function one(request: FastifyRequest, reply: FastifyReply, id: string, notes: { message?: string; error?: string } = {}, status = 200) {
    const s = signed(request);
    const connection = await connectionOf(request, id);
    const [tokens, clients] = await Promise.all([provisioningTokens(ctx.storage, ctx.clock, s.team.id, 500, connection.id), teamClients(s.scim)]);
    const own = clients.filter((c) => c.connectionId === connection.id);
    return show(request, reply, 'connections', connection.name, cv.connectionBody(reply.generateCsrf(), now(), scimBase, connection, tokens, own, notes.message, notes.error), status);
  }

  const NOTES: Record<string, string> = {
    revoked: 'The token is revoked: the next request with it gets a 401.',
    deleted: 'The connection is deleted: its tokens and clients no longer work.',
    renamed: 'The connection is renamed.',
    created: 'The connection is added. Issue its token below.',
  };
  const noteOf = (request: FastifyRequest) => NOTES[field(request.query, 'done')];

  app.get('/console/connections', { preHandler: signedIn }, async (request, reply) => list(request, reply, { ...(noteOf(request) ? { message: noteOf(request)! } : {}) }));

  app.post('/console/connections', post, async (request, reply) => {
    const s = signed(request);
    try {
      const created = await createConnection(ctx.storage, ctx.clock, { teamId: s.team.id, name: field(request.body, 'name'), provider: field(request.body, 'provider') || null, actor: s.scim.actor, requestId: request.id });
      return kit.shell.seeOther(reply, `${cv.connectionPath(created.id)}?done=created`);
    } catch (error) {
      if (error instanceof ConnectionError) return list(request, reply, { error: error.message }, error.status);
      throw error;
    }
  });

  app.get<{ Params: { id: string } }>('/console/connections/:id', { preHandler: signedIn }, async (request, reply) =>
    one(request, reply, request.params.id, { ...(noteOf(request) ? { message: noteOf(request)! } : {}) }),
  );

  app.post<{ Params: { id: string } }>('/console/connections/:id/rename', post, async (request, reply) => {
    const s = signed(request);
    try {
      await renameConnection(ctx.storage, ctx.clock, { teamId: s.team.id, id: request.params.id, name: field(request.body, 'name'), actor: s.scim.actor, requestId: request.id });
      return kit.shell.seeOther(reply, `${cv.connectionPath(request.params.id)}?done=renamed`);
    } catch (error) {
      if (error instanceof ConnectionError && error.status !== 404) return one(request, reply, request.params.id, { error: error.message }, error.status);
      if (error instanceof ConnectionError) throw new ScimError(404, error.message);
      throw error;
    }
  });

  app.get<{ Params: { id: string } }>('/console/connections/:id/delete', { preHandler: signedIn }, async (request, reply) => {
    const connection = await connectionOf(request, request.params.id);
    return show(request, reply, 'connections', `Delete ${connection.name}?`, cv.deleteConnectionBody(reply.generateCsrf(), connection));
  });

  app.post<{ Params: { id: string } }>('/console/connections/:id/delete', post, async (request, reply) => {
    const s = signed(request);
    try {
      await deleteConnection(ctx.storage, ctx.clock, { teamId: s.team.id, id: request.params.id, actor: s.scim.actor, requestId: request.id });
    } catch (error) {
      if (error instanceof ConnectionError) throw new ScimError(404, error.message);
      throw error;
    }
    return kit.shell.seeOther(reply, '/console/connections?done=deleted');
  });

  app.post<{ Params: { id: string } }>('/console/connections/:id/tokens', post, async (request, reply) => {
    const s = signed(request);
    const connection = await connectionOf(request, request.params.id);
    const chosen = field(request.body, 'scope') || 'provisioning';
    if (!Object.hasOwn(cv.CONNECTION_TOKEN_SCOPES, chosen)) return one(request, reply, connection.id, { error: 'Choose what the token is for: SCIM provisioning, a Shared Signals receiver, or both.' }, 400);
    const scope = cv.CONNECTION_TOKEN_SCOPES[chosen as keyof typeof cv.CONNECTION_TOKEN_SCOPES];
    try {
      const issued = await issueProvisioningToken(ctx.storage, ctx.clock, {
        teamId: s.team.id,
        connectionId: connection.id,
        name: field(request.body, 'name'),
        scope,
        ttlSeconds: parseLifetime(field(request.body, 'expiresIn') || '180d'),
        actor: s.scim.actor,
        requestId: request.id,
      });
      const shownAt = `${cv.connectionPath(connection.id)}/tokens/${encodeURIComponent(issued.id)}/issued`;
      handOnce(reply, NEW_TOKEN_COOKIE, shownAt, s.user.id, { id: issued.id, n: issued.name, t: issued.token, x: issued.expiresAt, s: issued.scope }, secure);
      return kit.shell.seeOther(reply, shownAt);
    } catch (error) {
      if (error instanceof ProvisioningTokenError) return one(request, reply, connection.id, { error: error.message }, 400);
      throw error;
    }
  });

  app.get<{ Params: { id: string; tokenId: string } }>('/console/connections/:id/tokens/:tokenId/issued', { preHandler: signedIn }, async (request, reply) => {
    const connection = await connectionOf(request, request.params.id);
    const shownAt = `${cv.connectionPath(connection.id)}/tokens/${encodeURIComponent(request.params.tokenId)}/issued`;
    const handed = takeOnce(request, reply, NEW_TOKEN_COOKIE, shownAt, signed(request).user.id);
    const issued =
      handed && handed.id === request.params.tokenId && typeof handed.t === 'string'
        ? { name: String(handed.n), token: handed.t, expiresAt: String(handed.x), scope: String(handed.s) }
        : undefined;
    return show(request, reply, 'connections', issued ? 'Token issued' : 'Token already shown', cv.tokenIssuedBody(scimBase, connection, issued, now()));
  });

  /** A token of the team by id (a connection's or an admin's own), or a 404. */
  async function tokenOf(request: FastifyRequest, id: string) {
    const token = (await provisioningTokens(ctx.storage, ctx.clock, signed(request).team.id)).find((t) => t.id === id);
    if (!token) throw new ScimError(404, 'There is no such token in this team.');
    return token;
  }
  const backOf = (token: { connectionId: string | null }) => (token.connectionId !== null ? cv.connectionPath(token.connectionId) : '/console/connections');

  app.get<{ Params: { id: string } }>('/console/connections/tokens/:id/revoke', { preHandler: signedIn }, async (request, reply) => {
    const token = await tokenOf(request, request.params.id);
    return show(request, reply, 'connections', `Revoke ${token.name}?`, cv.revokeTokenBody(reply.generateCsrf(), token, backOf(token)));
  });

  app.post<{ Params: { id: string } }>('/console/connections/tokens/:id/revoke', post, async (request, reply) => {
    const s = signed(request);
    const token = await tokenOf(request, request.params.id);
    try {
      await revokeProvisioningToken(ctx.storage, ctx.clock, { teamId: s.team.id, id: token.id, actor: s.scim.actor, requestId: request.id });
    } catch (error) {
      if (error instanceof ProvisioningTokenError) throw new ScimError(404, error.message);
      throw error;
    }
    return kit.shell.seeOther(reply, `${backOf(token)}?done=revoked`);
  });

  app.get('/console/requests', { preHandler: signedIn }, async (request, reply) => {
    const s = signed(request);
    const filters = { status: field(request.query, 'status'), connection: field(request.query, 'connection') };
    const [connections, tokens, clients] = await Promise.all([listConnections(ctx.storage, s.team.id, now().toISOString()), provisioningTokens(ctx.storage, ctx.clock, s.team.id), teamClients(s.scim)]);
    const choices: [string, string][] = [
      ...connections.map((c): [string, string] => [`connection:${c.id}`, `connection ${c.name}`]),
      ...tokens.map((t): [string, string] => [`token:${t.id}`, `token "${t.name}"${t.connectionName ? ` of ${t.connectionName}` : ''}`]),
      ...clients.map((c): [string, string] => [`client:${c.id}`, `client ${c.name}`]),
    ];
    try {
      const log = await requestLogEntries(ctx.storage, s.team.id, { ...filters, before: field(request.query, 'before') });
      return show(request, reply, 'requests', 'Request log', views.requestsBody(filters, choices, log.entries, log.next, undefined, now()));
    } catch (error) {
      if (error instanceof RequestLogFilterError) return show(request, reply, 'requests', 'Request log', views.requestsBody(filters, choices, [], null, error.message), 400);
      throw error;
    }
  });
}
