/**
 * The connection wizard's routes (issue 30, item 6), in two places that share their handlers:
 *
 * - `/console/connect...` for a signed-in admin: choose a path, make the connection, paste the
 *   values, watch the Test state; and make, list and withdraw one-time setup links;
 * - `/console/setup/:link` (the landing: nothing changes until its button is pressed, so a mail
 *   scanner's GET does not use the link) and `/console/setup/wizard...` for the restricted
 *   session a used link opens: its own cookie (signed, HttpOnly, SameSite=Strict, on
 *   /console/setup only, holding a secret kept as a hash), which no other console page reads.
 *
 * A secret the wizard makes is shown once by post/redirect/get (handoff.ts). The Test state is a
 * page fragment the console script polls every second (`data-poll`), with a no-script link.
 * Handlers parse, call console/wizard.ts or console/setup-links.ts, and render
 * console/wizard-views.ts. No SQL here.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../../audit/events.ts';
import { makeSetupLink, parseLinkHours, resumeSetupSession, revokeSetupLink, SESSION_SECONDS, SetupLinkError, setupActor, setupLinkOf, setupLinks, inspectSetupLink, useSetupLink } from '../../console/setup-links.ts';
import { connectionSetup, ConnectionError, pasteSteps, pasteValues, setUpConnection, testState, WizardInputError } from '../../console/wizard.ts';
import type { MadeSecret } from '../../console/wizard.ts';
import { pathById } from '../../console/wizard-paths.ts';
import type { WizardPath } from '../../console/wizard-paths.ts';
import * as wv from '../../console/wizard-views.ts';
import type { WizardPlace } from '../../console/wizard-views.ts';
import * as views from '../../console/views.ts';
import { unstorableText } from '../../text.ts';
import { handOnce, takeOnce } from './handoff.ts';
import { field } from './kit.ts';
import type { ConsoleKit } from './kit.ts';

export const SETUP_COOKIE = 'rollcall_setup';
const SECRET_COOKIE = 'rollcall_wizard_secret';
const LINK_COOKIE = 'rollcall_wizard_link';
const ADMIN_BASE = '/console/connect';
const SETUP_BASE = '/console/setup/wizard';

/** Who runs the wizard: an admin, or a setup link's session; where, and how their pages are framed. */
interface Runner {
  readonly team: { readonly id: string; readonly name: string };
  readonly actor: Actor;
  readonly base: string;
  /** Whom a handed secret is bound to (handoff.ts). */
  readonly holder: string;
  readonly setupLinkId?: string;
  /** The one connection a setup session made, if it made one. */
  readonly setupConnectionId?: string | null;
  show(request: FastifyRequest, reply: FastifyReply, title: string, body: string, status?: number): FastifyReply;
}

const RUNNER = Symbol('wizard runner');
type WithRunner = FastifyRequest & { [RUNNER]?: Runner };
const runnerOf = (request: FastifyRequest): Runner => (request as WithRunner)[RUNNER]!;

type IdRequest = FastifyRequest<{ Params: { id: string } }>;

export function wizardRoutes(app: FastifyInstance, kit: ConsoleKit): void {
  const { ctx, shell } = kit;
  const secure = kit.baseUrl.startsWith('https:');
  const deps = { storage: ctx.storage, clock: ctx.clock, baseUrl: kit.baseUrl };
  const placeOf = (runner: Runner, reply: FastifyReply): WizardPlace => ({ base: runner.base, csrf: reply.generateCsrf(), setup: runner.setupLinkId !== undefined });

  /** The admin's runner, after kit.signedIn. */
  const asAdmin = async (request: FastifyRequest): Promise<void> => {
    const s = kit.signed(request);
    (request as WithRunner)[RUNNER] = {
      team: s.team,
      actor: s.scim.actor,
      base: ADMIN_BASE,
      holder: s.user.id,
      show: (req, reply, title, body, status = 200) => kit.show(req, reply, 'connect', title, body, status),
    };
  };
  const admin = { preHandler: [kit.signedIn, asAdmin] };
  const adminPost = { preHandler: [app.csrfProtection, kit.signedIn, asAdmin] };

  const setupShow = (teamName: string) => (_request: FastifyRequest, reply: FastifyReply, title: string, body: string, status = 200) => shell.html(reply, status, wv.setupPage(title, teamName, body));
  const ended = (reply: FastifyReply) =>
    shell.html(reply, 401, wv.setupPage('Setup session ended', undefined, wv.setupRefusedBody('This setup session has ended or was withdrawn. Ask the admin who sent you the link for a new one.')));

  /** A setup link's session from its cookie, or the "ended" page. */
  const asSetup = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    if (unstorableText(request.params) !== undefined || unstorableText(request.body) !== undefined) return ended(reply);
    const raw = request.cookies[SETUP_COOKIE];
    const unsigned = raw === undefined ? undefined : request.unsignCookie(raw);
    const session = unsigned?.valid && unsigned.value !== null ? await resumeSetupSession(ctx.storage, ctx.clock, unsigned.value) : undefined;
    if (!session) return ended(reply);
    (request as WithRunner)[RUNNER] = {
      team: session.team,
      actor: setupActor(session.link.id),
      base: SETUP_BASE,
      holder: `setup:${session.link.id}`,
      setupLinkId: session.link.id,
      setupConnectionId: session.link.connectionId,
      show: setupShow(session.team.name),
    };
    return undefined;
  };
  const setup = { preHandler: asSetup };
  const setupPost = { preHandler: [app.csrfProtection, asSetup] };

  // --- handlers shared by both places ---

  async function start(request: FastifyRequest, reply: FastifyReply, extra: { made?: { url: string; recipient: string; expiresAt: string }; message?: string; error?: string } = {}, status = 200) {
    const runner = runnerOf(request);
    if (runner.setupConnectionId) return shell.seeOther(reply, `${runner.base}/connections/${encodeURIComponent(runner.setupConnectionId)}`);
    const links = runner.setupLinkId === undefined ? await setupLinks(ctx.storage, ctx.clock, runner.team.id) : undefined;
    return runner.show(request, reply, 'Connect an identity provider', wv.wizardStartBody(placeOf(runner, reply), links, extra.made, ctx.clock.now(), extra.message, extra.error), status);
  }

  const pathOf = (request: FastifyRequest<{ Params: { path: string } }>): WizardPath | undefined => {
    const path = pathById(request.params.path);
    return path && (runnerOf(request).setupLinkId === undefined || path.forSetupLinks) ? path : undefined;
  };
  const notFound = (request: FastifyRequest, reply: FastifyReply) => runnerOf(request).show(request, reply, 'Not found', views.errorBody('There is no such page.'), 404);

  async function form(request: FastifyRequest<{ Params: { path: string } }>, reply: FastifyReply) {
    const runner = runnerOf(request);
    const path = pathOf(request);
    if (!path) return notFound(request, reply);
    if (runner.setupConnectionId) return shell.seeOther(reply, `${runner.base}/connections/${encodeURIComponent(runner.setupConnectionId)}`);
    return runner.show(request, reply, `Connect ${path.providerLabel}`, wv.wizardFormBody(placeOf(runner, reply), path, {}));
  }

  async function create(request: FastifyRequest<{ Params: { path: string } }>, reply: FastifyReply) {
    const runner = runnerOf(request);
    const path = pathOf(request);
    if (!path) return notFound(request, reply);
    const inputs = { name: field(request.body, 'name'), tenantId: field(request.body, 'tenantId'), subject: field(request.body, 'subject'), issuer: field(request.body, 'issuer'), redirectUri: field(request.body, 'redirectUri') };
    try {
      const made = await setUpConnection(deps, {
        team: runner.team,
        path,
        inputs,
        actor: runner.actor,
        requestId: request.id,
        ...(runner.setupLinkId !== undefined ? { setupLinkId: runner.setupLinkId } : {}),
      });
      const page = `${runner.base}/connections/${encodeURIComponent(made.connectionId)}`;
      if (made.secret) handOnce(reply, SECRET_COOKIE, page, runner.holder, { c: made.connectionId, k: made.secret.kind, s: made.secret.value, x: made.secret.expiresAt }, secure);
      return shell.seeOther(reply, page);
    } catch (error) {
      const status = error instanceof WizardInputError || error instanceof SetupLinkError ? 400 : error instanceof ConnectionError && error.status !== 404 ? error.status : undefined;
      if (status === undefined || !(error instanceof Error)) throw error;
      return runner.show(request, reply, `Connect ${path.providerLabel}`, wv.wizardFormBody(placeOf(runner, reply), path, inputs, error.message), status);
    }
  }

  /** The connection the runner may see: any of the admin's team, only its own for a setup session. */
  async function visible(request: IdRequest) {
    const runner = runnerOf(request);
    if (runner.setupLinkId !== undefined && runner.setupConnectionId !== request.params.id) return undefined;
    return connectionSetup(deps, runner.team.id, request.params.id);
  }

  function takeSecret(request: IdRequest, reply: FastifyReply): MadeSecret | undefined {
    const runner = runnerOf(request);
    const value = takeOnce(request, reply, SECRET_COOKIE, `${runner.base}/connections/${encodeURIComponent(request.params.id)}`, runner.holder);
    if (value === undefined || value.c !== request.params.id || (value.k !== 'token' && value.k !== 'clientSecret') || typeof value.s !== 'string' || typeof value.x !== 'string') return undefined;
    return { kind: value.k, value: value.s, expiresAt: value.x };
  }

  async function connection(request: IdRequest, reply: FastifyReply) {
    const runner = runnerOf(request);
    const found = await visible(request);
    if (!found) return notFound(request, reply);
    const secret = takeSecret(request, reply);
    const test = await testState(deps, runner.team.id, found);
    const body = wv.connectionSetupBody(placeOf(runner, reply), found, pasteValues(found, kit.baseUrl, secret), pasteSteps(found), test, ctx.clock.now(), secret !== undefined);
    return runner.show(request, reply, `Connect ${found.name}`, body);
  }

  async function test(request: IdRequest, reply: FastifyReply) {
    const found = await visible(request);
    if (!found) return shell.html(reply, 404, '<p>There is no such connection.</p>');
    const runner = runnerOf(request);
    return shell.html(reply, 200, wv.testFragment(found, await testState(deps, runner.team.id, found), ctx.clock.now(), runner.setupLinkId === undefined));
  }

  // --- an admin's wizard and setup links ---

  app.get(ADMIN_BASE, admin, async (request, reply) => {
    const made = takeOnce(request, reply, LINK_COOKIE, ADMIN_BASE, runnerOf(request).holder);
    const shown = made && typeof made.url === 'string' && typeof made.r === 'string' && typeof made.x === 'string' ? { url: made.url, recipient: made.r, expiresAt: made.x } : undefined;
    return start(request, reply, { ...(shown ? { made: shown } : {}), ...(field(request.query, 'withdrawn') ? { message: 'The setup link is withdrawn.' } : {}) });
  });
  app.get<{ Params: { path: string } }>(`${ADMIN_BASE}/:path`, admin, form);
  app.post<{ Params: { path: string } }>(`${ADMIN_BASE}/:path`, adminPost, create);
  app.get<{ Params: { id: string } }>(`${ADMIN_BASE}/connections/:id`, admin, connection);
  app.get<{ Params: { id: string } }>(`${ADMIN_BASE}/connections/:id/test`, admin, test);

  app.post(`${ADMIN_BASE}/links`, adminPost, async (request, reply) => {
    const runner = runnerOf(request);
    try {
      const made = await makeSetupLink(ctx.storage, ctx.clock, {
        teamId: runner.team.id,
        userId: runner.holder,
        recipient: field(request.body, 'recipient'),
        hours: parseLinkHours(field(request.body, 'hours')),
        actor: runner.actor,
        requestId: request.id,
      });
      handOnce(reply, LINK_COOKIE, ADMIN_BASE, runner.holder, { url: `${kit.baseUrl}/console/setup/${made.token}`, r: made.recipient, x: made.expiresAt }, secure);
      return shell.seeOther(reply, ADMIN_BASE);
    } catch (error) {
      if (error instanceof SetupLinkError) return start(request, reply, { error: error.message }, 400);
      throw error;
    }
  });

  const linkOf = async (request: IdRequest) => {
    const link = await setupLinkOf(ctx.storage, ctx.clock, runnerOf(request).team.id, request.params.id);
    return link && (link.state === 'waiting' || link.state === 'used') ? link : undefined;
  };
  app.get<{ Params: { id: string } }>(`${ADMIN_BASE}/links/:id/revoke`, admin, async (request, reply) => {
    const runner = runnerOf(request);
    const link = await linkOf(request);
    if (!link) return runner.show(request, reply, 'Not found', views.errorBody('There is no such setup link, or it can no longer be used.'), 404);
    return runner.show(request, reply, 'Withdraw a setup link', wv.revokeLinkBody(placeOf(runner, reply), link));
  });
  app.post<{ Params: { id: string } }>(`${ADMIN_BASE}/links/:id/revoke`, adminPost, async (request, reply) => {
    const runner = runnerOf(request);
    try {
      await revokeSetupLink(ctx.storage, ctx.clock, { teamId: runner.team.id, id: request.params.id, actor: runner.actor, requestId: request.id });
    } catch (error) {
      if (error instanceof SetupLinkError) return runner.show(request, reply, 'Not found', views.errorBody(error.message), error.status);
      throw error;
    }
    return shell.seeOther(reply, `${ADMIN_BASE}?withdrawn=1`);
  });

  // --- a setup link and its restricted session ---

  app.get(SETUP_BASE, setup, (request, reply) => start(request, reply));
  app.get<{ Params: { path: string } }>(`${SETUP_BASE}/:path`, setup, form);
  app.post<{ Params: { path: string } }>(`${SETUP_BASE}/:path`, setupPost, create);
  app.get<{ Params: { id: string } }>(`${SETUP_BASE}/connections/:id`, setup, connection);
  app.get<{ Params: { id: string } }>(`${SETUP_BASE}/connections/:id/test`, setup, test);

  app.get<{ Params: { link: string } }>('/console/setup/:link', async (request, reply) => {
    const found = unstorableText(request.params) === undefined ? await inspectSetupLink(ctx.storage, ctx.clock, request.params.link) : undefined;
    if (!found || !found.ok) return shell.html(reply, found?.status ?? 404, wv.setupPage('Setup link', undefined, wv.setupRefusedBody(found?.reason ?? 'This setup link is not valid.')));
    return shell.html(reply, 200, wv.setupPage('Connect an identity provider', found.team.name, wv.setupLandingBody(reply.generateCsrf(), request.params.link, found.team.name, found.recipient, found.expiresAt, ctx.clock.now())));
  });

  app.post<{ Params: { link: string } }>('/console/setup/:link', { preHandler: app.csrfProtection }, async (request, reply) => {
    const used = unstorableText(request.params) === undefined ? await useSetupLink(ctx.storage, ctx.clock, request.params.link, request.id) : undefined;
    if (!used || !used.ok) return shell.html(reply, used?.status ?? 404, wv.setupPage('Setup link', undefined, wv.setupRefusedBody(used?.reason ?? 'This setup link is not valid.')));
    reply.setCookie(SETUP_COOKIE, used.session, { path: '/console/setup', httpOnly: true, sameSite: 'strict', secure, signed: true, maxAge: SESSION_SECONDS });
    return shell.seeOther(reply, SETUP_BASE);
  });
}
