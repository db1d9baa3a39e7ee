/**
 * The console's client page (DESIGN.md sections 9 and 11), for clients bound to the signed-in
 * admin's team only: the values an identity provider asks for, the secrets, adding one and
 * revoking one after a confirmation page. Handlers parse, call oauth/client-secret-admin.ts,
 * and render console/client-views.ts.
 *
 * A new secret is shown once by post/redirect/get: the POST adds it and hands it to the
 * redirected GET in a cookie that is signed, HttpOnly, SameSite=Strict, scoped to this client's
 * page, bound to the admin, and lives 60 seconds; the GET that shows the secret clears it. A
 * reload is then a plain GET (nothing added, the secret not shown again), and the secret is
 * never kept on the server, so the redirect may land on any instance.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { clientPageBody, clientPath, revokeConfirmBody } from '../../console/client-views.ts';
import * as views from '../../console/views.ts';
import type { NewSecretShown } from '../../console/client-views.ts';
import { addClientSecret, ClientSecretError, listClientSecrets, parseSecretDays, revokeClientSecret, secretLiveTokens, visibleClient } from '../../oauth/client-secret-admin.ts';
import type { ClientChanger } from '../../oauth/client-secret-admin.ts';
import { handOnce, takeOnce } from './handoff.ts';
import { field } from './kit.ts';
import type { ConsoleKit } from './kit.ts';

const NEW_SECRET_COOKIE = 'rollcall_console_new_secret';

type ClientRequest = FastifyRequest<{ Params: { id: string; secretId?: string } }>;

export function clientRoutes(app: FastifyInstance, kit: ConsoleKit): void {
  const { ctx, signedIn, signed, show } = kit;
  const post = { preHandler: [app.csrfProtection, signedIn] };
  const secure = kit.baseUrl.startsWith('https:');

  /** The signed-in admin acting on their team's clients. */
  const changer = (request: FastifyRequest): ClientChanger => {
    const s = signed(request);
    return { storage: ctx.storage, clock: ctx.clock, actor: s.scim.actor, requestId: request.id, teamId: s.team.id };
  };

  /** Runs `work`; a client or secret the admin may not see is the 404 page, a refusal the client page with its reason. */
  async function guarded(request: ClientRequest, reply: FastifyReply, work: () => Promise<FastifyReply>): Promise<FastifyReply> {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof ClientSecretError)) throw error;
      if (error.notFound) return show(request, reply, 'connections', 'Not found', views.errorBody(error.message), 404);
      return page(request, reply, { error: error.message }, 400);
    }
  }

  async function page(request: ClientRequest, reply: FastifyReply, extra: { shown?: NewSecretShown; message?: string; error?: string } = {}, status = 200): Promise<FastifyReply> {
    const who = changer(request);
    const client = await visibleClient(who, request.params.id);
    const secrets = await listClientSecrets(who, client.id);
    const body = clientPageBody(
      reply.generateCsrf(),
      {
        client: { id: client.id, name: client.name, tokenLifetime: client.token_lifetime ?? ctx.lifetimes.accessTokenTtl },
        secrets,
        tokenEndpoint: `${kit.baseUrl}/oauth/token`,
        scimBase: `${kit.baseUrl}/v2/scim`,
        now: ctx.clock.now().toISOString(),
      },
      extra.shown,
      extra.message,
      extra.error,
    );
    return show(request, reply, 'connections', `Client ${client.name}`, body, status);
  }

  /** The secret the POST handed over, if this admin's browser carries it for this client; cleared. */
  function takeNewSecret(request: ClientRequest, reply: FastifyReply): NewSecretShown | undefined {
    const value = takeOnce(request, reply, NEW_SECRET_COOKIE, clientPath(request.params.id), signed(request).user.id);
    if (value === undefined || value.c !== request.params.id) return undefined;
    if (typeof value.id !== 'string' || typeof value.n !== 'string' || typeof value.s !== 'string' || typeof value.x !== 'string') return undefined;
    return { id: value.id, name: value.n, secret: value.s, expiresAt: value.x };
  }

  app.get<{ Params: { id: string } }>('/console/connections/clients/:id', { preHandler: signedIn }, async (request, reply) =>
    guarded(request, reply, () => {
      const shown = takeNewSecret(request, reply);
      const message = field(request.query, 'revoked') ? 'The secret is revoked, with every token issued through it.' : undefined;
      return page(request, reply, { ...(shown ? { shown } : {}), ...(message ? { message } : {}) });
    }),
  );

  app.post<{ Params: { id: string } }>('/console/connections/clients/:id/secrets', post, async (request, reply) =>
    guarded(request, reply, async () => {
      const name = field(request.body, 'name');
      const added = await addClientSecret(changer(request), request.params.id, { ...(name !== '' ? { name } : {}), days: parseSecretDays(field(request.body, 'expiresIn')) });
      handOnce(reply, NEW_SECRET_COOKIE, clientPath(request.params.id), signed(request).user.id, { c: request.params.id, id: added.id, n: added.name, s: added.clientSecret, x: added.expiresAt }, secure);
      return kit.shell.seeOther(reply, clientPath(request.params.id));
    }),
  );

  app.get<{ Params: { id: string; secretId: string } }>('/console/connections/clients/:id/secrets/:secretId/revoke', { preHandler: signedIn }, async (request, reply) =>
    guarded(request, reply, async () => {
      const who = changer(request);
      const client = await visibleClient(who, request.params.id);
      const secret = (await listClientSecrets(who, client.id)).find((s) => s.id === request.params.secretId);
      if (!secret) throw new ClientSecretError('This client has no such secret, or it is already revoked.', true);
      const tokens = await secretLiveTokens(who, client.id, secret.id);
      return show(request, reply, 'connections', `Revoke a secret of ${client.name}`, revokeConfirmBody(reply.generateCsrf(), client.id, secret, tokens));
    }),
  );

  app.post<{ Params: { id: string; secretId: string } }>('/console/connections/clients/:id/secrets/:secretId/revoke', post, async (request, reply) =>
    guarded(request, reply, async () => {
      await revokeClientSecret(changer(request), request.params.id, request.params.secretId);
      return kit.shell.seeOther(reply, `${clientPath(request.params.id)}?revoked=1`);
    }),
  );
}
