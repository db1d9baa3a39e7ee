/**
 * Operator actions on a team's users: `rollcall user list`, `user deactivate`,
 * `user set-password`, `user reset-factors` (oauth/factors.ts resetSecondFactors). Each goes through the SCIM Users service (scim/users.ts) with the CLI as
 * the actor, so the rules, the audit row and the end of sessions on a password change are the
 * API's own. No SQL here.
 */
import type { AdminDeps } from './admin.ts';
import { AdminError, contextFor, requireTeam } from './admin.ts';
import type { Actor } from './audit/events.ts';
import { PATCH_OP } from './scim/schema/urns.ts';
import { parseListQuery } from './scim/query.ts';
import { userResourceType } from './scim/schema/registry.ts';
import { listUsers, patchUser } from './scim/users.ts';
import type { ScimContext } from './scim/context.ts';
import { CLI_ACTOR } from './audit/events.ts';
import { resetSecondFactors } from './oauth/factors.ts';
import type { FactorsReset } from './oauth/factors.ts';

export interface UserListed {
  readonly id: string;
  readonly userName: string;
  readonly active: boolean;
  readonly userType: string | null;
  readonly created: string;
}

/** One page of a team's users, by userName (startIndex paging; `filter` is SCIM filter grammar). */
export async function teamUsers(deps: AdminDeps, teamName: string, options: { filter?: string; count: number; startIndex: number }): Promise<{ total: number; users: UserListed[] }> {
  const team = await requireTeam(deps, teamName);
  const ctx = await contextFor(deps, team);
  const query = parseListQuery(userResourceType, {
    count: String(options.count),
    startIndex: String(options.startIndex),
    sortBy: 'userName',
    ...(options.filter !== undefined ? { filter: options.filter } : {}),
    attributes: 'userName,active,userType,meta',
  });
  const result = await listUsers(ctx, query);
  return {
    total: result.totalResults ?? result.resources.length,
    users: result.resources.map((r) => {
      const doc = r as Record<string, unknown> & { meta?: { created?: string } };
      return { id: String(doc.id), userName: String(doc.userName), active: doc.active !== false, userType: typeof doc.userType === 'string' ? doc.userType : null, created: doc.meta?.created ?? '' };
    }),
  };
}

async function userIdByName(ctx: ScimContext, userName: string): Promise<string> {
  const query = parseListQuery(userResourceType, { filter: `userName eq ${JSON.stringify(userName)}`, count: '1', attributes: 'userName' });
  const found = (await listUsers(ctx, query)).resources[0];
  if (!found) throw new AdminError(`no user "${userName}" in team "${ctx.team.name}"`);
  return String(found.id);
}

const withActor = (ctx: ScimContext, actor: Actor | undefined): ScimContext => (actor ? { ...ctx, actor } : ctx);

/** Deactivates a user (active false): its tokens and sessions end as when an IdP does it. */
export async function deactivateUser(deps: AdminDeps, teamName: string, userName: string, actor?: Actor): Promise<{ id: string; userName: string }> {
  const ctx = withActor(await contextFor(deps, await requireTeam(deps, teamName)), actor);
  const id = await userIdByName(ctx, userName);
  await patchUser(ctx, id, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'active', value: false }] });
  return { id, userName };
}

/** Sets a user's password (an admin's: at least 12 characters); ends the user's sessions. */
export async function setUserPassword(deps: AdminDeps, teamName: string, userName: string, password: string, actor?: Actor): Promise<{ id: string; userName: string }> {
  const ctx = withActor(await contextFor(deps, await requireTeam(deps, teamName)), actor);
  const id = await userIdByName(ctx, userName);
  await patchUser(ctx, id, { schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'password', value: password }] });
  return { id, userName };
}

/**
 * Removes a user's second factors (passkeys, authenticator app, recovery codes) and ends their
 * sessions, audited: the operator's way back in for an admin who lost them all.
 */
export async function resetUserFactors(deps: AdminDeps, teamName: string, userName: string, actor?: Actor): Promise<FactorsReset & { id: string; userName: string }> {
  const team = await requireTeam(deps, teamName);
  const ctx = await contextFor(deps, team);
  const id = await userIdByName(ctx, userName);
  const removed = await resetSecondFactors(deps.storage, deps.clock, { user: { id, team_id: team.id, user_name: userName }, actor: actor ?? CLI_ACTOR, requestId: null });
  return { id, userName, ...removed };
}
