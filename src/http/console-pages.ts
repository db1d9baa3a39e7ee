/**
 * The admin console at /console (DESIGN.md section 9): server-rendered pages for the admins of a
 * team. The shell (page-shell.ts) gives it what it shares with the OAuth pages: the session
 * (sessions.ts, kind `console`) behind its own cookie, HttpOnly, SameSite=Lax, path /console,
 * signed with the key store's rotating `cookie` key; a CSRF token in every form; every page sent
 * with frame-ancestors 'none', no-store and no-referrer; one error page. The routes come in small
 * groups (console/*.ts here), each handed the console kit (console/kit.ts); handlers call the
 * domain (console/*.ts, oauth/provisioning.ts, admin.ts) and render console/views.ts. No SQL here.
 */
import type { FastifyInstance } from 'fastify';
import { CONSOLE_CSS, CONSOLE_ICON, CONSOLE_JS } from '../console/assets.ts';
import { ConsoleInputError } from '../console/directory.ts';
import type { ReceiverPolicy } from '../events/receivers.ts';
import type { KeyStore } from '../keys/store.ts';
import { WEBHOOK_SECRETS } from '../events/webhook-secrets.ts';
import type { OAuthContext } from '../oauth/context.ts';
import { scimErrorOf } from '../scim/errors.ts';
import type { ScanGate } from '../scim/scan-gate.ts';
import type { TeamTypesCache } from '../scim/team-schemas.ts';
import type { AccessLog } from './access-log.ts';
import { accessRoutes } from './console/access.ts';
import { adminRoutes } from './console/admins.ts';
import { auditRoutes } from './console/audit.ts';
import { connectionRoutes } from './console/connections.ts';
import { clientRoutes } from './console/clients.ts';
import { directoryRoutes } from './console/directory.ts';
import { consoleEventRoutes } from './console/events.ts';
import { consoleErrorPage, consoleKit } from './console/kit.ts';
import { settingsRoutes } from './console/settings.ts';
import { signInRoutes } from './console/sign-in.ts';
import { wizardRoutes } from './console/wizard.ts';
import type { ConsoleFactors } from './console/sign-in.ts';
import { securityRoutes } from './console/security.ts';
import { PASSKEY_JS } from '../console/passkey-script.ts';
import { TOTP_SECRETS } from '../oauth/factors.ts';
import { relyingPartyOf } from '../oauth/passkeys.ts';
import { factorCookies } from './second-factor.ts';
import type { Metrics } from './metrics.ts';
import { pageShell } from './page-shell.ts';

export interface ConsoleOptions {
  readonly context: OAuthContext;
  readonly keys: KeyStore;
  readonly baseUrl: string;
  readonly cursorSecret: string;
  /** Where push receivers may be (events/receivers.ts), for the Events page's create form. */
  readonly receivers: ReceiverPolicy;
  /** This instance's scans in progress per team (scim/scan-gate.ts), shared with the SCIM API. */
  readonly scans?: ScanGate;
  /** Counts the budget refusals the pages show rather than throw (the routes' error hook counts the others). */
  readonly metrics?: Pick<Metrics, 'budgetRefused'>;
  /** The access log, told the team of each signed-in request. */
  readonly accessLog?: AccessLog;
  /** Each team's resource types, shared with the SCIM API (the console's context knows the team's extensions). */
  readonly types?: TeamTypesCache;
}

export const CONSOLE_COOKIE = 'rollcall_console';

/** The status of the console's own refusals: a SCIM error's, or 400 for a form the console cannot read. */
const consoleStatusOf = (error: unknown): number | undefined => scimErrorOf(error)?.status ?? (error instanceof ConsoleInputError ? 400 : undefined);

export async function consolePages(app: FastifyInstance, options: ConsoleOptions): Promise<void> {
  const ctx = options.context;
  const shell = await pageShell(app, {
    sessions: ctx,
    keys: options.keys,
    baseUrl: options.baseUrl,
    path: '/console',
    sessionCookie: CONSOLE_COOKIE,
    csrfCookie: 'rollcall_console_csrf',
    sessionKind: 'console',
    scriptsAndOwnForms: true,
    place: 'in the console',
    statusOf: consoleStatusOf,
    errorPage: consoleErrorPage,
  });
  const kit = consoleKit({
    ctx,
    shell,
    baseUrl: options.baseUrl,
    cursorSecret: options.cursorSecret,
    receivers: options.receivers,
    webhookBox: options.keys.box(WEBHOOK_SECRETS),
    ...(options.scans ? { scans: options.scans } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.accessLog ? { accessLog: options.accessLog } : {}),
    ...(options.types ? { types: options.types } : {}),
  });

  shell.asset('/console/assets/console.css', 'text/css; charset=utf-8', CONSOLE_CSS);
  shell.asset('/console/assets/console.js', 'text/javascript; charset=utf-8', CONSOLE_JS);
  const factors: ConsoleFactors = {
    factors: { storage: ctx.storage, clock: ctx.clock, box: options.keys.box(TOTP_SECRETS), limits: ctx.limits },
    rp: relyingPartyOf(options.baseUrl),
    cookies: factorCookies({ sessions: ctx, kind: 'console', path: '/console', pendingCookie: 'rollcall_console_pending', challengeCookie: 'rollcall_console_webauthn', secure: options.baseUrl.startsWith('https:') }),
  };
  shell.asset('/console/assets/passkeys.js', 'text/javascript; charset=utf-8', PASSKEY_JS);
  signInRoutes(app, kit, factors);
  securityRoutes(app, kit, factors);
  // The pages link the icon; browsers also ask for /favicon.ico on their own (any page of the site).
  shell.asset('/console/assets/favicon.svg', 'image/svg+xml', CONSOLE_ICON);
  shell.asset('/favicon.ico', 'image/svg+xml', CONSOLE_ICON);
  directoryRoutes(app, kit);
  accessRoutes(app, kit);
  connectionRoutes(app, kit);
  clientRoutes(app, kit);
  await consoleEventRoutes(app, kit);
  settingsRoutes(app, kit);
  adminRoutes(app, kit, { cursorSecret: options.cursorSecret });
  auditRoutes(app, kit);
  wizardRoutes(app, kit);
}
