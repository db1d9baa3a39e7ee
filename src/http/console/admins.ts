/**
 * The console's Admins page (issue 30, items 3 and 5): the team's admins and the applications
 * holding tokens for it; adding an admin, making a password link, removing an admin and revoking
 * an application's tokens, resetting another admin's second factors, each a CSRF-protected POST
 * answered by a redirect (post/redirect/get); the destructive three (remove, revoke, reset) only
 * from their confirmation page, which says what ends
 * and how much. A password link is a secret shown once: the POST hands it to the redirected page
 * through handoff.ts (a signed, HttpOnly, SameSite=Strict cookie scoped to this page, bound to
 * the admin, 60 seconds), so a reload shows it no more and makes nothing.
 *
 * The link itself opens /console/password?token=... for someone with no session: a form for the
 * new password, posted with the token in the body. Handlers parse, call console/admins.ts, and
 * render console/admins-views.ts; no SQL here.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { addAdmin, AdminConsoleError, applicationGrants, factorResetOf, resetAdminFactors, issuePasswordLink, LINK_GONE, passwordLinkTarget, PASSWORD_PATH, removalOf, removeAdmin, revokeApplication, setPasswordWithLink, teamAdmins, teamApplications } from '../../console/admins.ts';
import { ADMINS_PATH, adminsBody, passwordLinkPage, removeAdminConfirmBody, resetFactorsConfirmBody, revokeApplicationConfirmBody } from '../../console/admins-views.ts';
import { factorsText } from '../../oauth/factors.ts';
import type { LinkShown } from '../../console/admins-views.ts';
import * as views from '../../console/views.ts';
import { scimErrorOf } from '../../scim/errors.ts';
import { unstorableText } from '../../text.ts';
import { handOnce, takeOnce } from './handoff.ts';
import { field } from './kit.ts';
import type { ConsoleKit } from './kit.ts';

const LINK_COOKIE = 'rollcall_console_password_link';

const DONE: Record<string, string> = {
  removed: 'Admin removed: they are signed out everywhere, and their tokens and password links no longer work.',
  revoked: "The application's tokens for this team are revoked on every server; it must be authorized again.",
  'factors-reset': 'Second factors reset: the admin is signed out everywhere and signs in again with their password (setting up a factor first if this team requires one).',
};

type IdRequest = FastifyRequest<{ Params: { id: string } }>;

/** A refusal of the admin's own making (bad input, the rules): shown on the page; anything else goes on. */
function refusal(error: unknown): { status: number; message: string } | undefined {
  if (error instanceof AdminConsoleError) return { status: error.status, message: error.message };
  const known = scimErrorOf(error);
  if (known && known.status >= 400 && known.status < 500) return { status: known.status, message: known.message };
  return undefined;
}

export function adminRoutes(app: FastifyInstance, kit: ConsoleKit, options: { cursorSecret: string }): void {
  const { ctx, signedIn, signed, shell } = kit;
  const post = { preHandler: [app.csrfProtection, signedIn] };
  const secure = kit.baseUrl.startsWith('https:');
  const scim = (request: FastifyRequest) => signed(request).scim;
  const selfId = (request: FastifyRequest) => signed(request).user.id;
  const show = (request: FastifyRequest, reply: FastifyReply, title: string, body: string, status = 200) => kit.show(request, reply, 'admins', title, body, status);

  async function page(request: FastifyRequest, reply: FastifyReply, extra: { shown?: LinkShown; error?: string; userName?: string } = {}, status = 200): Promise<FastifyReply> {
    const [admins, applications] = await Promise.all([teamAdmins(scim(request), selfId(request)), teamApplications(scim(request))]);
    const message = extra.error ? undefined : DONE[field(request.query, 'done')];
    const body = adminsBody(reply.generateCsrf(), { admins, applications, now: ctx.clock.now(), ...extra, ...(message ? { message } : {}) });
    return show(request, reply, 'Admins and applications', body, status);
  }

  /** Runs `work`; a refusal is the admins page with its reason (a missing admin or application: the error page). */
  async function guarded(request: FastifyRequest, reply: FastifyReply, work: () => Promise<FastifyReply>, userName?: string): Promise<FastifyReply> {
    try {
      return await work();
    } catch (error) {
      const refused = refusal(error);
      if (!refused) throw error;
      if (refused.status === 404) return show(request, reply, 'Not found', views.errorBody(refused.message), 404);
      return page(request, reply, { error: refused.message, ...(userName !== undefined ? { userName } : {}) }, refused.status);
    }
  }

  /** Hands a new link to the redirected page, shown there once. */
  const handLink = (request: FastifyRequest, reply: FastifyReply, shown: LinkShown) => {
    handOnce(reply, LINK_COOKIE, ADMINS_PATH, selfId(request), { i: shown.userId, n: shown.userName, l: shown.url, x: shown.expiresAt, r: shown.reason }, secure);
    return shell.seeOther(reply, ADMINS_PATH);
  };

  /** The link the POST handed over, if this admin's browser carries it; cleared. */
  function takeLink(request: FastifyRequest, reply: FastifyReply): LinkShown | undefined {
    const v = takeOnce(request, reply, LINK_COOKIE, ADMINS_PATH, selfId(request));
    if (!v || typeof v.i !== 'string' || typeof v.n !== 'string' || typeof v.l !== 'string' || typeof v.x !== 'string') return undefined;
    const reason = v.r === 'created' || v.r === 'promoted' ? v.r : 'link';
    return { userId: v.i, userName: v.n, url: v.l, expiresAt: v.x, reason };
  }

  app.get(ADMINS_PATH, { preHandler: signedIn }, async (request, reply) => {
    const shown = takeLink(request, reply);
    return page(request, reply, shown ? { shown } : {});
  });

  app.post(ADMINS_PATH, post, async (request, reply) => {
    const userName = field(request.body, 'userName');
    return guarded(request, reply, async () => {
      const added = await addAdmin(scim(request), userName);
      return handLink(request, reply, { ...added, reason: added.created ? 'created' : 'promoted' });
    }, userName);
  });

  app.post<{ Params: { id: string } }>(`${ADMINS_PATH}/:id/password-link`, post, async (request, reply) =>
    guarded(request, reply, async () => handLink(request, reply, { ...(await issuePasswordLink(scim(request), request.params.id)), reason: 'link' })),
  );

  app.get<{ Params: { id: string } }>(`${ADMINS_PATH}/:id/remove`, { preHandler: signedIn }, async (request: IdRequest, reply) =>
    guarded(request, reply, async () => {
      const removal = await removalOf(scim(request), selfId(request), request.params.id);
      return show(request, reply, `Remove ${removal.userName} as admin`, removeAdminConfirmBody(reply.generateCsrf(), { id: request.params.id, userName: removal.userName }, removal.othersWhoSignIn));
    }),
  );

  app.post<{ Params: { id: string } }>(`${ADMINS_PATH}/:id/remove`, post, async (request: IdRequest, reply) =>
    guarded(request, reply, async () => {
      await removeAdmin(scim(request), selfId(request), request.params.id);
      return shell.seeOther(reply, `${ADMINS_PATH}?done=removed`);
    }),
  );

  app.get<{ Params: { id: string } }>(`${ADMINS_PATH}/:id/reset-factors`, { preHandler: signedIn }, async (request: IdRequest, reply) =>
    guarded(request, reply, async () => {
      const reset = await factorResetOf(scim(request), selfId(request), request.params.id);
      const removes = factorsText({ passkeys: reset.factors.passkeys.length, totp: reset.factors.totp !== 'off', recoveryCodes: reset.factors.recoveryCodesLeft });
      return show(request, reply, `Reset the second factors of ${reset.userName}`, resetFactorsConfirmBody(reply.generateCsrf(), { id: request.params.id, userName: reset.userName }, removes, reset.required));
    }),
  );

  app.post<{ Params: { id: string } }>(`${ADMINS_PATH}/:id/reset-factors`, post, async (request: IdRequest, reply) =>
    guarded(request, reply, async () => {
      await resetAdminFactors(scim(request), selfId(request), request.params.id);
      return shell.seeOther(reply, `${ADMINS_PATH}?done=factors-reset`);
    }),
  );

  app.get<{ Params: { id: string } }>(`${ADMINS_PATH}/applications/:id/revoke`, { preHandler: signedIn }, async (request: IdRequest, reply) =>
    guarded(request, reply, async () => {
      const grants = await applicationGrants(scim(request), request.params.id);
      return show(request, reply, `Revoke the tokens of ${grants.name}`, revokeApplicationConfirmBody(reply.generateCsrf(), grants));
    }),
  );

  app.post<{ Params: { id: string } }>(`${ADMINS_PATH}/applications/:id/revoke`, post, async (request: IdRequest, reply) =>
    guarded(request, reply, async () => {
      await revokeApplication(scim(request), request.params.id);
      return shell.seeOther(reply, `${ADMINS_PATH}?done=revoked`);
    }),
  );

  // The page a password link opens, for someone without a session.
  const linkDeps = { storage: ctx.storage, clock: ctx.clock, passwords: ctx.passwords, baseUrl: kit.baseUrl, cursorSecret: options.cursorSecret };

  app.get(PASSWORD_PATH, async (request, reply) => {
    const token = field(request.query, 'token');
    const target = unstorableText(token) === undefined ? await passwordLinkTarget(linkDeps, token) : undefined;
    return shell.html(reply, target ? 200 : 410, passwordLinkPage(reply.generateCsrf(), token, target, { gone: LINK_GONE }));
  });

  app.post(PASSWORD_PATH, { preHandler: app.csrfProtection }, async (request, reply) => {
    const token = field(request.body, 'token');
    const password = field(request.body, 'password');
    if (unstorableText(token) !== undefined || unstorableText(password) !== undefined) {
      return shell.html(reply, 400, passwordLinkPage(reply.generateCsrf(), '', undefined, { gone: 'The form holds characters that are not valid text.' }));
    }
    const again = async (status: number, error: string) => {
      const target = await passwordLinkTarget(linkDeps, token);
      return shell.html(reply, target ? status : 410, passwordLinkPage(reply.generateCsrf(), token, target, { error, gone: LINK_GONE }));
    };
    if (password !== field(request.body, 'repeat')) return again(400, 'The two passwords differ: type the same password twice.');
    try {
      await setPasswordWithLink(linkDeps, token, password, request.id);
    } catch (error) {
      const refused = refusal(error);
      if (!refused) throw error;
      return again(refused.status, refused.message);
    }
    // Post/redirect/get: a reload of the next page sends nothing again.
    return shell.seeOther(reply, '/console/sign-in?ended=1');
  });
}
