/**
 * What every group of console routes is handed (DESIGN.md section 9): the page shell, the
 * preHandler that requires a console session, the signed-in admin with their SCIM context, and
 * the page frame. Built once per app by console-pages.ts, so every console page shares one
 * session, CSRF, header and error page. Holds no route and no SQL; the domain is reached through
 * the signed-in admin's SCIM context (console/*.ts) and the OAuth context.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { consoleActor } from '../../console/directory.ts';
import * as views from '../../console/views.ts';
import type { ReceiverPolicy } from '../../events/receivers.ts';
import type { SecretBox } from '../../keys/sealed.ts';
import type { OAuthContext } from '../../oauth/context.ts';
import { mustEnroll } from '../../oauth/factors.ts';
import type { ScimContext } from '../../scim/context.ts';
import { ScimError } from '../../scim/errors.ts';
import type { ScanGate } from '../../scim/scan-gate.ts';
import type { TeamTypesCache } from '../../scim/team-schemas.ts';
import type { SignedIn } from '../../sessions.ts';
import { unstorableText } from '../../text.ts';
import type { AccessLog } from '../access-log.ts';
import type { Metrics } from '../metrics.ts';
import type { PageFailure, PageShell } from '../page-shell.ts';

/** The signed-in admin of a console request, with the SCIM context their pages act in. */
export interface Signed extends SignedIn {
  readonly scim: ScimContext;
}

export interface ConsoleKit {
  readonly ctx: OAuthContext;
  readonly shell: PageShell;
  readonly baseUrl: string;
  /** Where push receivers may be (events/receivers.ts), for the Events page's create form. */
  readonly receivers: ReceiverPolicy;
  /** Seals the secrets of webhook subscriptions made on the Events page (KeyStore.box). */
  readonly webhookBox: SecretBox;
  /** Counts the budget refusals the pages show rather than throw (the routes' error hook counts the others). */
  readonly metrics?: Pick<Metrics, 'budgetRefused'>;
  /** The preHandler of every page but sign-in and the assets: a live console session of an admin, or the sign-in page. */
  signedIn(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined>;
  /** The signed-in admin (only after `signedIn`). */
  signed(request: FastifyRequest): Signed;
  /** Sends a console page: the frame (section, title, team, user, CSRF token) around `body`. */
  show(request: FastifyRequest, reply: FastifyReply, section: views.Section, title: string, body: string, status?: number): FastifyReply;
}

export interface KitOptions {
  readonly ctx: OAuthContext;
  readonly shell: PageShell;
  readonly baseUrl: string;
  readonly cursorSecret: string;
  readonly receivers: ReceiverPolicy;
  readonly webhookBox: SecretBox;
  readonly scans?: ScanGate;
  readonly metrics?: Pick<Metrics, 'budgetRefused'>;
  readonly accessLog?: AccessLog;
  /**
   * Each team's resource types (its schema extensions and catalog), shared with the SCIM API, so
   * that the console's filter box, pages and forms know the team's extensions as the API does.
   * The core types when absent.
   */
  readonly types?: TeamTypesCache;
}

/** A form or query field's text ('' when absent or repeated). */
export const field = (form: unknown, name: string): string => {
  const value = (form as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

const SIGNED = Symbol('console session');
type WithSession = FastifyRequest & { [SIGNED]?: Signed };

const signedOf = (request: FastifyRequest): Signed | undefined => (request as WithSession)[SIGNED];

/** A console page's frame for the signed-in admin (a fresh CSRF token for its forms). */
const frameOf = ({ team, user }: SignedIn, reply: FastifyReply, section: views.Section, title: string): views.Frame => ({
  section,
  title,
  teamName: team.name,
  userName: user.user_name,
  csrf: reply.generateCsrf(),
});

export function consoleKit(options: KitOptions): ConsoleKit {
  const { ctx, shell } = options;
  const show = (request: FastifyRequest, reply: FastifyReply, section: views.Section, title: string, body: string, status = 200): FastifyReply => {
    return shell.html(reply, status, views.page(frameOf(signedOf(request)!, reply, section, title), body));
  };
  return {
    ctx,
    shell,
    baseUrl: options.baseUrl,
    receivers: options.receivers,
    webhookBox: options.webhookBox,
    ...(options.metrics ? { metrics: options.metrics } : {}),
    show,
    signed: (request) => signedOf(request)!,
    signedIn: async (request, reply) => {
      if (unstorableText(request.query) !== undefined || unstorableText(request.body) !== undefined) {
        return shell.html(reply, 400, views.signInPage(reply.generateCsrf(), 'The request holds characters that are not valid text.'));
      }
      const signed = await shell.resume(request);
      if (!signed) return shell.seeOther(reply, '/console/sign-in');
      // An id no database can store names nothing (PostgreSQL would refuse the query with a 500).
      if (unstorableText(request.params) !== undefined) throw new ScimError(404, 'There is no such page.');
      // A team that requires a second factor sends an admin without one to set one up first.
      if (!request.url.startsWith('/console/security') && (await mustEnroll(ctx.storage.db, signed.team, signed.user.id))) return shell.seeOther(reply, '/console/security');
      options.accessLog?.team(request, signed.team);
      const scim: ScimContext = {
        storage: ctx.storage,
        clock: ctx.clock,
        baseUrl: options.baseUrl,
        team: signed.team,
        actor: consoleActor(signed.user.id),
        requestId: request.id,
        cursorSecret: options.cursorSecret,
        passwords: ctx.passwords,
        ...(options.types ? { types: await options.types.typesOf(ctx.storage.db, signed.team) } : {}),
        ...(options.scans ? { scans: options.scans } : {}),
      };
      (request as WithSession)[SIGNED] = { ...signed, scim };
      return undefined;
    },
  };
}

/**
 * The console's error page: a form that failed its CSRF check, a refused sign-in attempt, or a
 * failure before sign-in shows the sign-in page with the reason; any other failure is shown in
 * the signed-in admin's frame.
 */
export function consoleErrorPage(request: FastifyRequest, reply: FastifyReply, failure: PageFailure): string {
  if (failure.kind === 'csrf') return views.signInPage(reply.generateCsrf(), 'This form has expired or came from another site. Sign in again.');
  const signed = signedOf(request);
  if (failure.kind === 'throttled' || !signed) return views.signInPage(reply.generateCsrf(), failure.message);
  return views.page(frameOf(signed, reply, 'overview', failure.status === 404 ? 'Not found' : 'Something went wrong'), views.errorBody(failure.message));
}
