/**
 * The console's sign-in and sign-out (DESIGN.md section 9). Sign-in uses the OAuth accounts
 * (oauth/accounts.ts signIn: the same password hashes, the same per-account and per-address
 * limits, shared with the OAuth pages); a name whose password is right in several teams gets the
 * form again with a team choice. After the password, the second-factor rule (oauth/factors.ts):
 * an admin with a factor gets the second step (a code, a recovery code or a passkey) behind a
 * pending sign-in (second-factor.ts); an admin whose team requires a factor they lack is signed
 * in but sent to the Security page (kit.ts). "Use a passkey" signs in with a
 * discoverable credential, no password (oauth/passkeys.ts). The session and its cookie are
 * page-shell.ts's.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { verifyPage } from '../../console/factors-views.ts';
import * as views from '../../console/views.ts';
import { signIn } from '../../oauth/accounts.ts';
import { OAuthError } from '../../oauth/errors.ts';
import { factorsOf, FactorError, passCode, secondFactorStep } from '../../oauth/factors.ts';
import type { FactorContext } from '../../oauth/factors.ts';
import { passkeySignIn, signInOptions } from '../../oauth/passkeys.ts';
import type { RelyingParty } from '../../oauth/passkeys.ts';
import type { SignedIn } from '../../sessions.ts';
import { unstorableText } from '../../text.ts';
import { sendOptions } from '../second-factor.ts';
import type { FactorCookies } from '../second-factor.ts';
import { field } from './kit.ts';
import type { ConsoleKit } from './kit.ts';

/** What the console's sign-in and Security pages need for second factors. */
export interface ConsoleFactors {
  readonly factors: FactorContext;
  readonly rp: RelyingParty;
  readonly cookies: FactorCookies;
}

export function signInRoutes(app: FastifyInstance, { ctx, shell }: ConsoleKit, { factors, rp, cookies }: ConsoleFactors): void {
  app.get('/console/sign-in', async (request, reply) =>
    shell.html(reply, 200, views.signInPage(reply.generateCsrf(), field(request.query, 'ended') ? 'Your password changed; sign in with the new one.' : undefined)),
  );

  // Counted per source address before the body or CSRF token is read, in the OAuth pages' limiter.
  const signinPerAddress = async (request: FastifyRequest) => ctx.limits.attempt('signinPerAddress', request.ip);
  const signInPost = { onRequest: signinPerAddress, preHandler: app.csrfProtection };

  const verify = async (reply: FastifyReply, pending: SignedIn, error?: string, status = 200) => {
    const has = await factorsOf(ctx.storage.db, pending.user.id);
    return shell.html(reply, status, verifyPage({ csrf: reply.generateCsrf(), userName: pending.user.user_name, totp: has.totp === 'on', passkeys: has.passkeys.length > 0, ...(error ? { error } : {}) }));
  };

  app.post('/console/sign-in', signInPost, async (request, reply) => {
    const username = field(request.body, 'username');
    const password = field(request.body, 'password');
    const team = field(request.body, 'team');
    if (unstorableText(username) !== undefined || unstorableText(password) !== undefined) return shell.html(reply, 400, views.signInPage(reply.generateCsrf(), 'The form holds characters that are not valid text.'));
    try {
      const result = await signIn(ctx, username, password, { clientId: null, requestId: request.id, method: 'form', address: request.ip, ...(team ? { teamName: team } : {}) });
      if (result.kind === 'choose') return shell.html(reply, 200, views.signInPage(reply.generateCsrf(), undefined, username, result.teams));
      if ((await secondFactorStep(ctx.storage.db, result.user)) === 'verify') {
        await cookies.openPending(reply, result.user);
        return shell.seeOther(reply, '/console/sign-in/verify');
      }
      await shell.open(reply, result.user);
      return shell.seeOther(reply, '/console');
    } catch (error) {
      if (error instanceof OAuthError && error.error === 'invalid_grant') return shell.html(reply, 401, views.signInPage(reply.generateCsrf(), error.message, username));
      throw error;
    }
  });

  app.get('/console/sign-in/verify', async (request, reply) => {
    const pending = await cookies.resumePending(request);
    return pending ? verify(reply, pending) : shell.seeOther(reply, '/console/sign-in');
  });

  app.post('/console/sign-in/verify', signInPost, async (request, reply) => {
    const pending = await cookies.resumePending(request);
    if (!pending) return shell.html(reply, 401, views.signInPage(reply.generateCsrf(), 'Your sign-in took too long; sign in again.'));
    const code = field(request.body, 'code');
    if (unstorableText(code) !== undefined || !(await passCode(factors, pending.user, code, { address: request.ip, requestId: request.id, clientId: null }))) {
      return verify(reply, pending, 'That code is not right, or was used already.', 401);
    }
    await cookies.endPending(request, reply);
    await shell.open(reply, pending.user);
    return shell.seeOther(reply, '/console');
  });

  // A passkey: the first factor (no user yet), or the second step of a pending sign-in.
  app.post('/console/sign-in/passkey/options', signInPost, async (request, reply) => {
    const pending = field(request.body, 'step') === 'second' ? await cookies.resumePending(request) : undefined;
    const ceremony = await signInOptions(factors, rp, pending?.user);
    cookies.setChallenge(reply, ceremony.challenge);
    return sendOptions(reply, ceremony.options);
  });

  app.post('/console/sign-in/passkey', signInPost, async (request, reply) => {
    const challenge = cookies.takeChallenge(request, reply);
    try {
      const user = await passkeySignIn(factors, rp, { challenge, response: field(request.body, 'credential'), requestId: request.id, clientId: null });
      await cookies.endPending(request, reply);
      await shell.open(reply, user);
      return shell.seeOther(reply, '/console');
    } catch (error) {
      if (error instanceof FactorError) return shell.html(reply, error.status, views.signInPage(reply.generateCsrf(), error.message));
      throw error;
    }
  });

  app.post('/console/sign-out', { preHandler: app.csrfProtection }, async (request, reply) => {
    await shell.end(request, reply);
    return shell.seeOther(reply, '/console/sign-in');
  });
}
