/**
 * The console's sign-in and sign-out (DESIGN.md section 9). Sign-in uses the OAuth accounts
 * (oauth/accounts.ts signIn: the same password hashes, the same per-account and per-address
 * limits, shared with the OAuth pages); a name whose password is right in several teams gets the
 * form again with a team choice. The session and its cookie are page-shell.ts's.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import * as views from '../../console/views.ts';
import { signIn } from '../../oauth/accounts.ts';
import { OAuthError } from '../../oauth/errors.ts';
import { unstorableText } from '../../text.ts';
import { field } from './kit.ts';
import type { ConsoleKit } from './kit.ts';

export function signInRoutes(app: FastifyInstance, { ctx, shell }: ConsoleKit): void {
  app.get('/console/sign-in', async (request, reply) =>
    shell.html(reply, 200, views.signInPage(reply.generateCsrf(), field(request.query, 'ended') ? 'Your password changed; sign in with the new one.' : undefined)),
  );

  // Counted per source address before the body or CSRF token is read, in the OAuth pages' limiter.
  const signinPerAddress = async (request: FastifyRequest) => ctx.limits.attempt('signinPerAddress', request.ip);

  app.post('/console/sign-in', { onRequest: signinPerAddress, preHandler: app.csrfProtection }, async (request, reply) => {
    const username = field(request.body, 'username');
    const password = field(request.body, 'password');
    const team = field(request.body, 'team');
    if (unstorableText(username) !== undefined || unstorableText(password) !== undefined) return shell.html(reply, 400, views.signInPage(reply.generateCsrf(), 'The form holds characters that are not valid text.'));
    try {
      const result = await signIn(ctx, username, password, { clientId: null, requestId: request.id, method: 'form', address: request.ip, ...(team ? { teamName: team } : {}) });
      if (result.kind === 'choose') return shell.html(reply, 200, views.signInPage(reply.generateCsrf(), undefined, username, result.teams));
      await shell.open(reply, result.user);
      return shell.seeOther(reply, '/console');
    } catch (error) {
      if (error instanceof OAuthError && error.error === 'invalid_grant') return shell.html(reply, 401, views.signInPage(reply.generateCsrf(), error.message, username));
      throw error;
    }
  });

  app.post('/console/sign-out', { preHandler: app.csrfProtection }, async (request, reply) => {
    await shell.end(request, reply);
    return shell.seeOther(reply, '/console/sign-in');
  });
}
