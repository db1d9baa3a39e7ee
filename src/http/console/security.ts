/**
 * The console's Security page (/console/security, issue 30 item 7): the signed-in admin's own
 * second factors. Register a passkey (the WebAuthn ceremony: options from here, the challenge in
 * this browser's cookie, single use, CHALLENGE_SECONDS), remove one; set up an authenticator app
 * (its secret and otpauth:// URI shown until a code confirms it), remove it; make new recovery
 * codes, shown once by post/redirect/get (handoff.ts). Also the Settings page's switch that
 * requires a second factor of every admin of the team. Handlers parse, call one function of
 * oauth/factors.ts or oauth/passkeys.ts, and reply; every change is audited there.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { securityBody } from '../../console/factors-views.ts';
import { beginTotp, confirmTotp, factorsOf, FactorError, newRecoveryCodes, pendingTotp, removeTotp, setTeamRequirement } from '../../oauth/factors.ts';
import type { FactorChange } from '../../oauth/factors.ts';
import { registerPasskey, registrationOptions, removePasskey } from '../../oauth/passkeys.ts';
import { sendOptions } from '../second-factor.ts';
import { handOnce, takeOnce } from './handoff.ts';
import { field } from './kit.ts';
import type { ConsoleKit } from './kit.ts';
import type { ConsoleFactors } from './sign-in.ts';

const PAGE = '/console/security';
const CODES_COOKIE = 'rollcall_console_codes';

/** The confirmations a redirect back to the page may carry. */
const DONE: Record<string, string> = {
  'passkey-added': 'Passkey added.',
  'passkey-removed': 'Passkey removed.',
  'totp-on': 'The authenticator app is set up.',
  'totp-off': 'The authenticator app was removed.',
};

export function securityRoutes(app: FastifyInstance, kit: ConsoleKit, { factors, rp, cookies }: ConsoleFactors): void {
  const { shell, signedIn, signed, show } = kit;
  const post = { preHandler: [app.csrfProtection, signedIn] };
  const secure = kit.baseUrl.startsWith('https:');
  const changeOf = (request: FastifyRequest): FactorChange => {
    const s = signed(request);
    return { user: s.user, actor: s.scim.actor, requestId: request.id };
  };

  const page = async (request: FastifyRequest, reply: FastifyReply, shown: { message?: string; error?: string; codes?: readonly string[] } = {}, status = 200) => {
    const s = signed(request);
    const view = await factorsOf(kit.ctx.storage.db, s.user.id);
    const pending = view.totp === 'pending' ? await pendingTotp(factors, s.user, `Rollcall ${s.team.name}`) : undefined;
    const body = securityBody({ csrf: reply.generateCsrf(), factors: view, now: kit.ctx.clock.now(), teamRequires: s.team.require_second_factor === 1, ...(pending ? { pendingTotp: pending } : {}), ...shown });
    return show(request, reply, 'security', 'Security', body, status);
  };

  /** Runs a change; a refusal is shown on the page with its message. */
  const change = async (request: FastifyRequest, reply: FastifyReply, run: () => Promise<string | undefined>) => {
    try {
      const done = await run();
      return shell.seeOther(reply, done ? `${PAGE}?done=${done}` : PAGE);
    } catch (error) {
      if (error instanceof FactorError) return page(request, reply, { error: error.message }, error.status === 404 ? 404 : error.status === 409 ? 409 : 400);
      throw error;
    }
  };

  app.get(PAGE, { preHandler: signedIn }, async (request, reply) => {
    const handed = takeOnce(request, reply, CODES_COOKIE, PAGE, signed(request).user.id);
    const codes = typeof handed?.codes === 'string' ? handed.codes.split(' ') : undefined;
    const message = DONE[field(request.query, 'done')];
    return page(request, reply, { ...(message ? { message } : {}), ...(codes ? { codes } : {}) });
  });

  app.post(`${PAGE}/passkeys/options`, post, async (request, reply) => {
    const ceremony = await registrationOptions(factors, rp, signed(request).user);
    cookies.setChallenge(reply, ceremony.challenge);
    return sendOptions(reply, ceremony.options);
  });

  app.post(`${PAGE}/passkeys`, post, async (request, reply) => {
    const challenge = cookies.takeChallenge(request, reply);
    return change(request, reply, async () => {
      await registerPasskey(factors, rp, changeOf(request), { challenge, response: field(request.body, 'credential'), name: field(request.body, 'name') });
      return 'passkey-added';
    });
  });

  app.post<{ Params: { id: string } }>(`${PAGE}/passkeys/:id/remove`, post, async (request, reply) =>
    change(request, reply, async () => {
      await removePasskey(factors, changeOf(request), request.params.id);
      return 'passkey-removed';
    }),
  );

  app.post(`${PAGE}/totp`, post, async (request, reply) =>
    change(request, reply, async () => {
      await beginTotp(factors, signed(request).user);
      return undefined;
    }),
  );

  app.post(`${PAGE}/totp/confirm`, post, async (request, reply) =>
    change(request, reply, async () => {
      await confirmTotp(factors, changeOf(request), field(request.body, 'code'));
      return 'totp-on';
    }),
  );

  app.post(`${PAGE}/totp/remove`, post, async (request, reply) =>
    change(request, reply, async () => {
      await removeTotp(factors, changeOf(request));
      return 'totp-off';
    }),
  );

  app.post(`${PAGE}/recovery-codes`, post, async (request, reply) => {
    try {
      const codes = await newRecoveryCodes(factors, changeOf(request));
      handOnce(reply, CODES_COOKIE, PAGE, signed(request).user.id, { codes: codes.join(' ') }, secure);
      return shell.seeOther(reply, PAGE);
    } catch (error) {
      if (error instanceof FactorError) return page(request, reply, { error: error.message }, 409);
      throw error;
    }
  });

  app.post('/console/settings/second-factor', post, async (request, reply) => {
    const s = signed(request);
    try {
      await setTeamRequirement(factors, changeOf(request), s.team, field(request.body, 'required') === '1');
    } catch (error) {
      if (error instanceof FactorError) return page(request, reply, { error: error.message }, 409);
      throw error;
    }
    return shell.seeOther(reply, '/console/settings?saved=1');
  });
}
