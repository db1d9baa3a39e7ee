/**
 * What the console's Admins page reads and changes (issue 30, item 3), for one signed-in admin
 * of one team: the team's admins (users whose userType is admin: oauth/accounts.ts signsIn),
 * an admin added (an existing user made one, or a new user), an admin removed (never oneself,
 * never the last admin who can sign in), a one-time link with which an admin sets a new
 * password, another admin's second factors reset (when they lost them all), and the
 * applications (OAuth clients) holding live tokens for the team, each of which can have every
 * such token revoked.
 *
 * Users change through the SCIM Users service (scim/users.ts), so the rules, the audit row, the
 * event and the end of the user's sessions and tokens on a userType or password change are the
 * API's own; this module's own audit row and link are written in that write's transaction
 * (ScimContext.onCommit). A password link is a random token shown once; only its SHA-256 is
 * stored, it expires after PASSWORD_LINK_HOURS, and it is used by one conditional UPDATE in the
 * transaction that sets the password, so it works once. No SQL and no HTML here.
 */
import { recordEvent } from '../audit/events.ts';
import type { Actor, AuditAction } from '../audit/events.ts';
import type { Clock } from '../clock.ts';
import { newId, newToken, sha256 } from '../ids.ts';
import { signsIn } from '../oauth/accounts.ts';
import { factorsOf, resetSecondFactors } from '../oauth/factors.ts';
import type { FactorsReset, FactorsView } from '../oauth/factors.ts';
import type { PasswordHasher } from '../oauth/passwords.ts';
import type { ScimContext } from '../scim/context.ts';
import { parseListQuery } from '../scim/query.ts';
import { userResourceType } from '../scim/schema/registry.ts';
import { PATCH_OP, USER_SCHEMA } from '../scim/schema/urns.ts';
import { createUser, listUsers, patchUser } from '../scim/users.ts';
import type { Versioned } from '../scim/users.ts';
import type { Storage } from '../storage/connect.ts';
import { adminsOfTeam, adminsWhoSignIn, clientGrantsOfTeam, insertPasswordLink, passwordLinkByHash, retirePasswordLinks, revokeClientTokensOfTeam, usePasswordLink } from '../storage/repos/admins.ts';
import { lockTeamRow } from '../storage/repos/catalog-holders.ts';
import { clientById } from '../storage/repos/clients.ts';
import { clientsWithTokens } from '../storage/repos/console.ts';
import { teamById } from '../storage/repos/teams.ts';
import type { TeamRow } from '../storage/repos/teams.ts';
import { userById } from '../storage/repos/users.ts';
import type { Executor, Tx } from '../storage/types.ts';

/** How long a password link works. */
export const PASSWORD_LINK_HOURS = 24;
const LINK_PREFIX = 'rc_pw_';
/** Where a link opens: the token rides in the query as `token`, which every logged URL redacts (http/request-log.ts). */
export const PASSWORD_PATH = '/console/password';

/** A refusal the page shows with its status: 400 bad input, 404 no such admin or application, 409 the rules, 410 a used or expired link. */
export class AdminConsoleError extends Error {
  readonly status: 400 | 404 | 409 | 410;
  constructor(status: 400 | 404 | 409 | 410, message: string) {
    super(message);
    this.name = 'AdminConsoleError';
    this.status = status;
  }
}

export interface AdminListed {
  readonly id: string;
  readonly userName: string;
  readonly active: boolean;
  /** Has a password (can sign in when active). */
  readonly hasPassword: boolean;
  readonly createdAt: string;
  /** The signed-in admin themself. */
  readonly you: boolean;
}

/** A password link just made, shown once. */
export interface PasswordLink {
  readonly userId: string;
  readonly userName: string;
  readonly url: string;
  readonly expiresAt: string;
}

const MAX_USER_NAME = 256;

const audit = (ex: Executor, ctx: ScimContext, action: AuditAction, resourceType: 'User' | 'Client', resourceId: string, detail: Record<string, unknown>) =>
  recordEvent(ex, ctx.clock, { teamId: ctx.team.id, actor: ctx.actor, requestId: ctx.requestId, action, resourceType, resourceId, detail });

/** The team's admins, by userName; `selfId` is the signed-in admin. */
export async function teamAdmins(ctx: ScimContext, selfId: string): Promise<AdminListed[]> {
  const rows = await adminsOfTeam(ctx.storage.db, ctx.team.id);
  return rows.map((r) => ({ id: r.id, userName: r.user_name, active: r.active === 1, hasPassword: r.has_password === 1, createdAt: r.created_at, you: r.id === selfId }));
}

/** Writes a new link for `userId` in `trx` (the user's unused links end), audited; answers it. */
async function writeLink(trx: Tx, ctx: ScimContext, user: { id: string; userName: string }): Promise<PasswordLink> {
  const token = newToken(LINK_PREFIX);
  const now = ctx.clock.now();
  const expiresAt = new Date(now.getTime() + PASSWORD_LINK_HOURS * 3_600_000).toISOString();
  await retirePasswordLinks(trx, ctx.team.id, user.id, now.toISOString());
  const id = newId();
  await insertPasswordLink(trx, { id, team_id: ctx.team.id, user_id: user.id, token_hash: sha256(token), created_at: now.toISOString(), expires_at: expiresAt, used_at: null, created_by: JSON.stringify(ctx.actor) });
  await audit(trx, ctx, 'admin_password_link_issued', 'User', user.id, { link: id, expiresAt });
  return { userId: user.id, userName: user.userName, url: `${ctx.baseUrl}${PASSWORD_PATH}?token=${token}`, expiresAt };
}

/** The id of the user holding `userName` in the team (as the SCIM API finds it), if any. */
async function userIdByName(ctx: ScimContext, userName: string): Promise<string | undefined> {
  const query = parseListQuery(userResourceType, { filter: `userName eq ${JSON.stringify(userName)}`, count: '1', attributes: 'userName' });
  const found = (await listUsers(ctx, query)).resources[0];
  return found ? String(found.id) : undefined;
}

/**
 * Makes `userName` an admin: the user of that name made one (userType admin), or a new active
 * user created as one; either way with a password link to hand them (they have no password yet,
 * or one set elsewhere). Refused when the name is empty or too long, or the user is an admin
 * already or deactivated.
 */
export async function addAdmin(ctx: ScimContext, userNameText: string): Promise<PasswordLink & { created: boolean }> {
  const userName = userNameText.trim();
  if (userName === '') throw new AdminConsoleError(400, 'Enter the user name of the new admin.');
  if (userName.length > MAX_USER_NAME) throw new AdminConsoleError(400, `A user name has at most ${MAX_USER_NAME} characters.`);
  const existing = await userIdByName(ctx, userName);
  let link: PasswordLink | undefined;
  const withLink = (id: string, name: string): ScimContext => ({
    ...ctx,
    onCommit: async (trx) => {
      await audit(trx, ctx, 'admin_added', 'User', id, { userName: name, created: existing === undefined });
      link = await writeLink(trx, ctx, { id, userName: name });
    },
  });
  if (existing !== undefined) {
    const row = await userById(ctx.storage.db, ctx.team.id, existing);
    if (!row) throw new AdminConsoleError(404, 'There is no such user.');
    if (signsIn(row)) throw new AdminConsoleError(409, `${row.user_name} is an admin already. To give them a new password, make a password link.`);
    if (row.active !== 1) throw new AdminConsoleError(409, `${row.user_name} is deactivated: reactivate the user first.`);
    await patchUser(withLink(row.id, row.user_name), row.id, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'userType', value: 'admin' }] });
    return { ...link!, created: false };
  }
  // The service picks the new user's id: the link is written for the row the write returns, in its transaction.
  await createUser(
    {
      ...ctx,
      onCommit: async (trx, result) => {
        const createdId = String((result as Versioned).resource.id);
        await withLink(createdId, userName).onCommit!(trx, result);
      },
    },
    { schemas: [USER_SCHEMA], userName, active: true, userType: 'admin' },
  );
  return { ...link!, created: true };
}

/** The admin `userId` of the team, or 404. */
async function requireAdmin(ctx: ScimContext, userId: string) {
  const row = await userById(ctx.storage.db, ctx.team.id, userId);
  if (!row || row.deleted_at !== null || !signsIn(row)) throw new AdminConsoleError(404, 'This team has no such admin.');
  return row;
}

/** What removing `userId` would leave: refused for oneself; whether they are the last admin who signs in. */
export async function removalOf(ctx: ScimContext, selfId: string, userId: string): Promise<{ userName: string; othersWhoSignIn: number }> {
  const row = await requireAdmin(ctx, userId);
  if (row.id === selfId) throw new AdminConsoleError(409, 'You cannot remove yourself: another admin can.');
  const signing = await adminsWhoSignIn(ctx.storage.db, ctx.team.id);
  const self = row.active === 1 && row.password_hash !== null ? 1 : 0;
  return { userName: row.user_name, othersWhoSignIn: signing - self };
}

/**
 * Removes an admin: the user stays, with no userType (so their sessions and tokens end, as the
 * SCIM service does for another userType) and their password links end. Refused for oneself, and
 * when no other admin who signs in would be left; the count is taken in the write's transaction
 * under the team row's lock, so two admins removing each other at once cannot both succeed.
 */
export async function removeAdmin(ctx: ScimContext, selfId: string, userId: string): Promise<{ userName: string }> {
  const row = (await removalOf(ctx, selfId, userId)).userName;
  await patchUser(
    {
      ...ctx,
      onCommit: async (trx) => {
        await lockTeamRow(trx, ctx.team.id);
        if ((await adminsWhoSignIn(trx, ctx.team.id)) === 0) throw new AdminConsoleError(409, `${row} is the last admin who can sign in: add another admin first.`);
        await retirePasswordLinks(trx, ctx.team.id, userId, ctx.clock.now().toISOString());
        await audit(trx, ctx, 'admin_removed', 'User', userId, { userName: row });
      },
    },
    userId,
    { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: 'userType' }] },
  );
  return { userName: row };
}

/** What resetting the second factors of the admin `userId` would remove; refused for oneself (the Security page is theirs). */
export async function factorResetOf(ctx: ScimContext, selfId: string, userId: string): Promise<{ userName: string; factors: FactorsView; required: boolean }> {
  const row = await requireAdmin(ctx, userId);
  if (row.id === selfId) throw new AdminConsoleError(409, 'You cannot reset your own second factors: change them on your Security page, or ask another admin.');
  return { userName: row.user_name, factors: await factorsOf(ctx.storage.db, row.id), required: ctx.team.require_second_factor === 1 };
}

/**
 * Removes every second factor of another admin (passkeys, authenticator app, recovery codes) and
 * ends their sessions, audited (oauth/factors.ts resetSecondFactors): the way back in for an
 * admin who lost them all.
 */
export async function resetAdminFactors(ctx: ScimContext, selfId: string, userId: string): Promise<FactorsReset & { userName: string }> {
  const { userName } = await factorResetOf(ctx, selfId, userId);
  const removed = await resetSecondFactors(ctx.storage, ctx.clock, { user: { id: userId, team_id: ctx.team.id, user_name: userName }, actor: ctx.actor, requestId: ctx.requestId });
  return { ...removed, userName };
}

/** A new password link for the admin `userId` (their earlier unused links end), audited. */
export async function issuePasswordLink(ctx: ScimContext, userId: string): Promise<PasswordLink> {
  const row = await requireAdmin(ctx, userId);
  if (row.active !== 1) throw new AdminConsoleError(409, `${row.user_name} is deactivated: reactivate the user first.`);
  return ctx.storage.db.transaction().execute((trx) => writeLink(trx, ctx, { id: row.id, userName: row.user_name }));
}

/** What a password link's page needs: whose it is and until when; undefined when the link is unknown, used or expired. */
export interface LinkTarget {
  readonly team: TeamRow;
  readonly userId: string;
  readonly userName: string;
  readonly expiresAt: string;
}

export interface LinkDeps {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly passwords: PasswordHasher;
  readonly baseUrl: string;
  readonly cursorSecret: string;
}

const tokenShaped = (token: string): boolean => token.startsWith(LINK_PREFIX) && token.length <= 100;

export async function passwordLinkTarget(deps: Pick<LinkDeps, 'storage' | 'clock'>, token: string): Promise<LinkTarget | undefined> {
  if (!tokenShaped(token)) return undefined;
  const link = await passwordLinkByHash(deps.storage.db, sha256(token));
  if (!link || link.used_at !== null || link.expires_at <= deps.clock.now().toISOString()) return undefined;
  const [team, user] = await Promise.all([teamById(deps.storage.db, link.team_id), userById(deps.storage.db, link.team_id, link.user_id)]);
  if (!team || !user || user.active !== 1 || !signsIn(user)) return undefined;
  return { team, userId: user.id, userName: user.user_name, expiresAt: link.expires_at };
}

export const LINK_GONE = 'This link does not work: it was used already, it expired, or it was replaced by a newer one. Ask another admin of your team for a new link.';

/**
 * Sets the password of the link's admin (at least 12 characters, the SCIM service checks) and
 * uses the link, in one transaction with the audit rows: a second use, an expired link, or a
 * password refused leaves the link as it was (410 or the service's 400). The admin's other
 * sessions end, as with any password change.
 */
export async function setPasswordWithLink(deps: LinkDeps, token: string, password: string, requestId: string | null): Promise<{ teamName: string; userName: string }> {
  const target = await passwordLinkTarget(deps, token);
  if (!target) throw new AdminConsoleError(410, LINK_GONE);
  const actor: Actor = { via: 'console', clientId: null, userId: target.userId };
  const ctx: ScimContext = {
    storage: deps.storage,
    clock: deps.clock,
    baseUrl: deps.baseUrl,
    team: target.team,
    actor,
    requestId,
    cursorSecret: deps.cursorSecret,
    passwords: deps.passwords,
    onCommit: async (trx) => {
      const used = await usePasswordLink(trx, sha256(token), deps.clock.now().toISOString());
      if (!used || used.user_id !== target.userId) throw new AdminConsoleError(410, LINK_GONE);
      await audit(trx, ctx, 'admin_password_reset', 'User', target.userId, { link: used.id });
    },
  };
  await patchUser(ctx, target.userId, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'password', value: password }] });
  return { teamName: target.team.name, userName: target.userName };
}

export interface ApplicationListed {
  readonly id: string;
  readonly name: string;
  /** Bound to this team (a provisioning client) rather than an application its admins authorize. */
  readonly bound: boolean;
  /** Live access and refresh tokens it holds for this team. */
  readonly liveTokens: number;
}

/** The OAuth clients holding live tokens for the team. */
export async function teamApplications(ctx: ScimContext): Promise<ApplicationListed[]> {
  const clients = await clientsWithTokens(ctx.storage.db, ctx.team.id, ctx.clock.now().toISOString());
  return clients.filter((c) => c.liveTokens > 0).map((c) => ({ id: c.id, name: c.name, bound: c.bound, liveTokens: c.liveTokens }));
}

/** What revoking `clientId`'s tokens for the team would end; 404 when it holds none. */
export async function applicationGrants(ctx: ScimContext, clientId: string): Promise<{ id: string; name: string; tokens: number; users: number }> {
  const client = await clientById(ctx.storage.db, clientId);
  const grants = client ? await clientGrantsOfTeam(ctx.storage.db, client.id, ctx.team.id, ctx.clock.now().toISOString()) : undefined;
  if (!client || !grants || grants.tokens === 0) throw new AdminConsoleError(404, 'No application holds live tokens for this team under that id.');
  return { id: client.id, name: client.name, ...grants };
}

/**
 * Revokes every token `clientId` holds for the team, access and refresh, in one transaction with
 * its audit row; every instance stops accepting them at once (the revocation notice reaches
 * every bearer cache: storage/revocations.ts). The client's tokens for other teams keep working;
 * it may be authorized again. Answers how many tokens ended.
 */
export async function revokeApplication(ctx: ScimContext, clientId: string): Promise<{ name: string; tokens: number }> {
  const { name } = await applicationGrants(ctx, clientId);
  const tokens = await ctx.storage.db.transaction().execute(async (trx) => {
    const revoked = await revokeClientTokensOfTeam(trx, clientId, ctx.team.id, ctx.clock.now().toISOString());
    await audit(trx, ctx, 'application_revoked', 'Client', clientId, { name, tokensRevoked: revoked });
    return revoked;
  });
  return { name, tokens };
}
