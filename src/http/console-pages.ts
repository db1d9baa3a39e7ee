/**
 * The admin console at /console (DESIGN.md section 9): server-rendered pages for the
 * admins of a team. Sign-in uses the OAuth accounts (oauth/accounts.ts signIn: the same password
 * hashes, the same per-account and per-address limits, which are shared with the OAuth pages);
 * the session is server-side (sessions.ts, kind `console`) behind its own cookie, HttpOnly,
 * SameSite=Lax, path /console, signed with the key store's `cookie` key. Every form carries a
 * CSRF token; every page is sent with frame-ancestors 'none', no-store and no-referrer. Handlers
 * call the domain (console/*.ts, oauth/provisioning.ts, admin.ts) and render console/views.ts;
 * no SQL here.
 */
import { budgetViews, OverBudget } from '../budgets.ts';
import cookie, { Signer } from '@fastify/cookie';
import csrf from '@fastify/csrf-protection';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminError, parseDeactivatedUsers, updateTeam } from '../admin.ts';
import { CONSOLE_CSS, CONSOLE_JS } from '../console/assets.ts';
import { auditLog, changeOwnPassword, ConsoleInputError, consoleActor, groupDetail, overview, searchGroups, searchUsers, teamClients, userDetail } from '../console/directory.ts';
import { eventsHealth } from '../console/events.ts';
import type { ListForm } from '../console/views.ts';
import * as views from '../console/views.ts';
import { RequestLogFilterError, requestLogEntries } from '../console/request-log.ts';
import type { KeyStore } from '../keys/store.ts';
import { signIn } from '../oauth/accounts.ts';
import type { OAuthContext } from '../oauth/context.ts';
import { OAuthError } from '../oauth/errors.ts';
import { issueProvisioningToken, parseLifetime, ProvisioningTokenError, provisioningTokens, revokeProvisioningToken } from '../oauth/provisioning.ts';
import type { ScimContext } from '../scim/context.ts';
import { ScimError, scimErrorOf } from '../scim/errors.ts';
import type { Metrics } from './metrics.ts';
import type { ScanGate } from '../scim/scan-gate.ts';
import { endSession, openSession, resumeSession, SESSION_TTL_SECONDS } from '../sessions.ts';
import { teamById } from '../storage/repos/teams.ts';
import type { TeamRow } from '../storage/repos/teams.ts';
import type { UserRow } from '../storage/repos/users.ts';
import { unstorableText } from '../text.ts';
import type { AccessLog } from './access-log.ts';
import { consoleEventRoutes } from './console-events.ts';
import type { ReceiverPolicy } from '../events/receivers.ts';

export interface ConsoleOptions {
  readonly context: OAuthContext;
  readonly keys: KeyStore;
  readonly baseUrl: string;
  readonly cursorSecret: string;
  /** Where push receivers may be (events/receivers.ts), for the Events page's create form. */
  readonly receivers: ReceiverPolicy;
  /** This instance's scans in progress per team (scim/scans.ts), shared with the SCIM API. */
  readonly scans?: ScanGate;
  /** Counts the budget refusals the pages show rather than throw (the routes' error hook counts the others). */
  readonly metrics?: Pick<Metrics, 'budgetRefused'>;
  /** The access log, told the team of each signed-in request. */
  readonly accessLog?: AccessLog;
}

export const CONSOLE_COOKIE = 'rollcall_console';
const SESSION_KIND = 'console';

type Form = Record<string, unknown>;
const field = (form: unknown, name: string): string => {
  const value = (form as Form | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

interface Signed {
  readonly user: UserRow;
  readonly team: TeamRow;
  readonly scim: ScimContext;
}

const SIGNED = Symbol('console session');
type WithSession = FastifyRequest & { [SIGNED]?: Signed };

function html(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').send(body);
}

const seeOther = (reply: FastifyReply, location: string): FastifyReply => reply.code(303).header('location', location).send();

export async function consolePages(app: FastifyInstance, options: ConsoleOptions): Promise<void> {
  const ctx = options.context;
  const secure = options.baseUrl.startsWith('https:');
  const cookieOptions = { path: '/console', httpOnly: true, sameSite: 'lax' as const, secure, signed: true };
  const keys = options.keys;
  let signer: { version: number; signer: Signer } | undefined;
  const current = (): Signer => {
    if (signer?.version !== keys.version) signer = { version: keys.version, signer: new Signer([...keys.secrets('cookie')]) };
    return signer.signer;
  };

  await app.register(formbody, { bodyLimit: 16 * 1024 });
  app.addHook('onRequest', async () => keys.refreshIfStale());
  await app.register(cookie, { secret: { sign: (value: string) => current().sign(value), unsign: (value: string) => current().unsign(value) } });
  await app.register(csrf, { cookieKey: 'rollcall_console_csrf', cookieOpts: { ...cookieOptions, sameSite: 'strict' } });
  await app.register(helmet, {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: { defaultSrc: ["'none'"], styleSrc: ["'self'"], scriptSrc: ["'self'"], imgSrc: ["'self'"], formAction: ["'self'"], baseUri: ["'none'"], frameAncestors: ["'none'"] },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    hsts: secure,
    crossOriginEmbedderPolicy: false,
  });

  const frame = (request: FastifyRequest, reply: FastifyReply, section: views.Section, title: string): views.Frame => {
    const signed = (request as WithSession)[SIGNED]!;
    return { section, title, teamName: signed.team.name, userName: signed.user.user_name, csrf: reply.generateCsrf() };
  };
  const show = (request: FastifyRequest, reply: FastifyReply, section: views.Section, title: string, body: string, status = 200) =>
    html(reply, status, views.page(frame(request, reply, section, title), body));

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.code === 'FST_CSRF_MISSING_SECRET' || error.code === 'FST_CSRF_INVALID_TOKEN') {
      return html(reply, 403, views.signInPage(reply.generateCsrf(), 'This form has expired or came from another site. Sign in again.'));
    }
    if (error instanceof OAuthError && error.status === 429) {
      reply.header('retry-after', error.headers['retry-after'] ?? '60');
      return html(reply, 429, views.signInPage(reply.generateCsrf(), error.message));
    }
    const signed = (request as WithSession)[SIGNED];
    const known = scimErrorOf(error);
    const status = known ? known.status : error instanceof ConsoleInputError ? 400 : error.statusCode !== undefined && error.statusCode < 500 ? error.statusCode : 500;
    if (status >= 500) request.log.error({ err: error }, 'unhandled error in the console');
    const message = status >= 500 ? 'Rollcall could not complete the request. Try again in a moment.' : error.message;
    if (!signed) return html(reply, status, views.signInPage(reply.generateCsrf(), message));
    return show(request, reply, 'overview', status === 404 ? 'Not found' : 'Something went wrong', views.errorBody(message), status);
  });

  app.get('/console/assets/console.css', async (_request, reply) =>
    reply.code(200).header('content-type', 'text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(CONSOLE_CSS),
  );
  app.get('/console/assets/console.js', async (_request, reply) =>
    reply.code(200).header('content-type', 'text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(CONSOLE_JS),
  );

  function sessionId(request: FastifyRequest): string | undefined {
    const raw = request.cookies[CONSOLE_COOKIE];
    if (!raw) return undefined;
    const unsigned = request.unsignCookie(raw);
    return unsigned.valid && unsigned.value !== null ? unsigned.value : undefined;
  }

  /** Every page but sign-in and the assets: a live console session of an admin, or the sign-in page. */
  const signedIn = async (request: FastifyRequest, reply: FastifyReply) => {
    if (unstorableText(request.query) !== undefined || unstorableText(request.body) !== undefined) {
      return html(reply, 400, views.signInPage(reply.generateCsrf(), 'The request holds characters that are not valid text.'));
    }
    const id = sessionId(request);
    const user = id === undefined ? undefined : await resumeSession(ctx, SESSION_KIND, id);
    const team = user ? await teamById(ctx.storage.db, user.team_id) : undefined;
    if (!user || !team) return seeOther(reply, '/console/sign-in');
    // An id no database can store names nothing (PostgreSQL would refuse the query with a 500).
    if (unstorableText(request.params) !== undefined) throw new ScimError(404, 'There is no such page.');
    options.accessLog?.team(request, team);
    (request as WithSession)[SIGNED] = {
      user,
      team,
      scim: {
        storage: ctx.storage,
        clock: ctx.clock,
        baseUrl: options.baseUrl,
        team,
        actor: consoleActor(user.id),
        requestId: request.id,
        cursorSecret: options.cursorSecret,
        passwords: ctx.passwords,
        ...(options.scans ? { scans: options.scans } : {}),
      },
    };
  };
  const signed = (request: FastifyRequest): Signed => (request as WithSession)[SIGNED]!;

  app.get('/console/sign-in', async (request, reply) => html(reply, 200, views.signInPage(reply.generateCsrf(), field(request.query, 'ended') ? 'Your password changed; sign in with the new one.' : undefined)));

  // Counted per source address before the body or CSRF token is read, in the OAuth pages' limiter.
  const signinPerAddress = async (request: FastifyRequest) => ctx.limits.attempt('signinPerAddress', request.ip);

  app.post('/console/sign-in', { onRequest: signinPerAddress, preHandler: app.csrfProtection }, async (request, reply) => {
    const username = field(request.body, 'username');
    const password = field(request.body, 'password');
    const team = field(request.body, 'team');
    if (unstorableText(username) !== undefined || unstorableText(password) !== undefined) return html(reply, 400, views.signInPage(reply.generateCsrf(), 'The form holds characters that are not valid text.'));
    try {
      const result = await signIn(ctx, username, password, { clientId: null, requestId: request.id, method: 'form', address: request.ip, ...(team ? { teamName: team } : {}) });
      if (result.kind === 'choose') return html(reply, 200, views.signInPage(reply.generateCsrf(), undefined, username, result.teams));
      const session = await openSession(ctx, SESSION_KIND, result.user);
      reply.setCookie(CONSOLE_COOKIE, session, { ...cookieOptions, maxAge: SESSION_TTL_SECONDS });
      return seeOther(reply, '/console');
    } catch (error) {
      if (error instanceof OAuthError && error.error === 'invalid_grant') return html(reply, 401, views.signInPage(reply.generateCsrf(), error.message, username));
      throw error;
    }
  });

  app.post('/console/sign-out', { preHandler: app.csrfProtection }, async (request, reply) => {
    const id = sessionId(request);
    if (id !== undefined) await endSession(ctx, id);
    reply.clearCookie(CONSOLE_COOKIE, { path: '/console' });
    return seeOther(reply, '/console/sign-in');
  });

  app.get('/console', { preHandler: signedIn }, async (request, reply) => {
    const [counts, events] = await Promise.all([overview(signed(request).scim), eventsHealth(signed(request).scim)]);
    return show(request, reply, 'overview', 'Overview', views.overviewBody(counts, events));
  });

  const listForm = (query: unknown): ListForm & { cursor: string } => ({
    q: field(query, 'q'),
    filter: field(query, 'filter'),
    sortBy: field(query, 'sortBy'),
    descending: field(query, 'order') === 'desc',
    cursor: field(query, 'cursor'),
  });
  /** A bad filter or cursor is shown above an empty list (the SCIM error's own message). */
  async function listOrError<T>(work: () => Promise<T>, empty: T): Promise<{ value: T; error?: string }> {
    try {
      return { value: await work() };
    } catch (error) {
      if (error instanceof OverBudget && error.status === 400) options.metrics?.budgetRefused(error.teamId, error.budget);
      const known = scimErrorOf(error);
      if (known?.status === 400) return { value: empty, error: known.message };
      if (error instanceof ConsoleInputError) return { value: empty, error: error.message };
      throw error;
    }
  }
  /** What a page shows above an error: no rows, the order as asked. */
  const emptyPage = (form: ListForm) => ({ resources: [], total: undefined, next: undefined, previous: undefined, orderedBy: form.sortBy });

  app.get('/console/users', { preHandler: signedIn }, async (request, reply) => {
    const form = listForm(request.query);
    const { value, error } = await listOrError(() => searchUsers(signed(request).scim, { ...form, ...(form.cursor ? { cursor: form.cursor } : {}) }), emptyPage(form));
    return show(request, reply, 'users', 'Users', views.usersBody(form, value, error), error ? 400 : 200);
  });
  app.get<{ Params: { id: string } }>('/console/users/:id', { preHandler: signedIn }, async (request, reply) => {
    const detail = await userDetail(signed(request).scim, request.params.id);
    return show(request, reply, 'users', String(detail.resource.userName), views.userBody(detail.resource, detail.history));
  });
  app.get('/console/groups', { preHandler: signedIn }, async (request, reply) => {
    const form = listForm(request.query);
    const { value, error } = await listOrError(() => searchGroups(signed(request).scim, { ...form, ...(form.cursor ? { cursor: form.cursor } : {}) }), emptyPage(form));
    return show(request, reply, 'groups', 'Groups', views.groupsBody(form, value, error), error ? 400 : 200);
  });
  app.get<{ Params: { id: string } }>('/console/groups/:id', { preHandler: signedIn }, async (request, reply) => {
    const detail = await groupDetail(signed(request).scim, request.params.id, field(request.query, 'after'));
    return show(request, reply, 'groups', String(detail.resource.displayName), views.groupBody(detail.resource, detail.members, detail.next, detail.history));
  });

  const scimBase = `${options.baseUrl}/v2/scim`;
  async function connections(request: FastifyRequest, reply: FastifyReply, extra: { issued?: views.IssuedShown; message?: string; error?: string } = {}, status = 200) {
    const s = signed(request);
    const [tokens, clients] = await Promise.all([provisioningTokens(ctx.storage, ctx.clock, s.team.id), teamClients(s.scim)]);
    return show(request, reply, 'connections', 'Connections', views.connectionsBody(reply.generateCsrf(), scimBase, tokens, clients, extra.issued, extra.message, extra.error), status);
  }
  app.get('/console/connections', { preHandler: signedIn }, async (request, reply) =>
    connections(request, reply, field(request.query, 'revoked') ? { message: 'The token is revoked: the next request with it gets a 401.' } : {}),
  );
  app.post('/console/connections/tokens', { preHandler: [app.csrfProtection, signedIn] }, async (request, reply) => {
    const s = signed(request);
    try {
      const issued = await issueProvisioningToken(ctx.storage, ctx.clock, {
        teamId: s.team.id,
        userId: s.user.id,
        name: field(request.body, 'name'),
        scope: ['read', 'write'],
        ttlSeconds: parseLifetime(field(request.body, 'expiresIn') || '180d'),
        actor: s.scim.actor,
        requestId: request.id,
      });
      return connections(request, reply, { issued: { name: issued.name, token: issued.token, expiresAt: issued.expiresAt } });
    } catch (error) {
      if (error instanceof ProvisioningTokenError) return connections(request, reply, { error: error.message }, 400);
      throw error;
    }
  });
  app.post<{ Params: { id: string } }>('/console/connections/tokens/:id/revoke', { preHandler: [app.csrfProtection, signedIn] }, async (request, reply) => {
    const s = signed(request);
    try {
      await revokeProvisioningToken(ctx.storage, ctx.clock, { teamId: s.team.id, id: request.params.id, actor: s.scim.actor, requestId: request.id });
    } catch (error) {
      if (error instanceof ProvisioningTokenError) return connections(request, reply, { error: error.message }, 404);
      throw error;
    }
    return seeOther(reply, '/console/connections?revoked=1');
  });

  app.get('/console/requests', { preHandler: signedIn }, async (request, reply) => {
    const s = signed(request);
    const filters = { status: field(request.query, 'status'), connection: field(request.query, 'connection') };
    const [tokens, clients] = await Promise.all([provisioningTokens(ctx.storage, ctx.clock, s.team.id), teamClients(s.scim)]);
    const choices: [string, string][] = [...tokens.map((t): [string, string] => [`token:${t.id}`, `token "${t.name}"`]), ...clients.map((c): [string, string] => [`client:${c.id}`, `client ${c.name}`])];
    try {
      const log = await requestLogEntries(ctx.storage, s.team.id, { ...filters, before: field(request.query, 'before') });
      return show(request, reply, 'requests', 'Request log', views.requestsBody(filters, choices, log.entries, log.next));
    } catch (error) {
      if (error instanceof RequestLogFilterError) return show(request, reply, 'requests', 'Request log', views.requestsBody(filters, choices, [], null, error.message), 400);
      throw error;
    }
  });

  app.get('/console/audit', { preHandler: signedIn }, async (request, reply) => {
    const filters = { actor: field(request.query, 'actor'), action: field(request.query, 'action'), resource: field(request.query, 'resource'), from: field(request.query, 'from'), to: field(request.query, 'to') };
    const { value, error } = await listOrError(
      () => auditLog(signed(request).scim, { actor: filters.actor, action: filters.action, resourceId: filters.resource, from: filters.from, to: filters.to, before: field(request.query, 'before') }),
      { entries: [], next: undefined },
    );
    return show(request, reply, 'audit', 'Audit log', views.auditBody(filters, value.entries, value.next, error), error ? 400 : 200);
  });

  await consoleEventRoutes(app, { receivers: options.receivers, ...(options.metrics ? { metrics: options.metrics } : {}), signedIn, show: (request, reply, title, body, status) => show(request, reply, 'events', title, body, status), scim: (request) => signed(request).scim });

  const settings = (request: FastifyRequest, reply: FastifyReply, message?: string, error?: string, status = 200) => {
    const s = signed(request);
    return show(request, reply, 'settings', 'Settings', views.settingsBody(reply.generateCsrf(), { name: s.team.name, deactivatedUsers: s.team.deactivated_users, budgets: budgetViews(s.team) }, message, error), status);
  };
  app.get('/console/settings', { preHandler: signedIn }, async (request, reply) => settings(request, reply, field(request.query, 'saved') ? 'Saved.' : undefined));
  app.post('/console/settings/team', { preHandler: [app.csrfProtection, signedIn] }, async (request, reply) => {
    const s = signed(request);
    try {
      const deps = { storage: ctx.storage, clock: ctx.clock, baseUrl: options.baseUrl };
      const mode = parseDeactivatedUsers(field(request.body, 'deactivatedUsers'));
      // Team names are shared by every team (sign-in picks the team by its name): a team admin
      // renaming would learn which names exist and take the free ones. Only the operator renames
      // (`rollcall team rename`); any other name gets one answer, whichever name it is.
      const name = field(request.body, 'name');
      if (name !== '' && name !== s.team.name) throw new AdminError('The operator renames a team (rollcall team rename); a team admin cannot.');
      if (mode !== s.team.deactivated_users) await updateTeam(deps, s.team.name, mode, s.scim.actor);
    } catch (error) {
      if (error instanceof AdminError) return settings(request, reply, undefined, error.message, 400);
      throw error;
    }
    return seeOther(reply, '/console/settings?saved=1');
  });
  app.post('/console/settings/password', { preHandler: [app.csrfProtection, signedIn] }, async (request, reply) => {
    const s = signed(request);
    try {
      // The current password is checked like a sign-in (same limits; a wrong one is audited).
      await signIn(ctx, s.user.user_name, field(request.body, 'current'), { clientId: null, requestId: request.id, method: 'form', address: request.ip, teamName: s.team.name, signedInTeamId: s.team.id });
    } catch (error) {
      if (error instanceof OAuthError && error.error === 'invalid_grant') return settings(request, reply, undefined, 'The current password is not right.', 400);
      throw error;
    }
    try {
      await changeOwnPassword(s.scim, s.user.id, field(request.body, 'password'));
    } catch (error) {
      if (error instanceof ScimError && error.status === 400) return settings(request, reply, undefined, error.message, 400);
      throw error;
    }
    reply.clearCookie(CONSOLE_COOKIE, { path: '/console' });
    return seeOther(reply, '/console/sign-in?ended=1');
  });
}
