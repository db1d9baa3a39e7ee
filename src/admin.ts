/**
 * Operator actions behind the CLI: teams, users and tokens for scripts. Each is one service call
 * with the same rules the API applies (users are created through the SCIM Users service, so a
 * CLI-made user is validated exactly like a provisioned one).
 */
import type { Clock } from './clock.ts';
import { iso } from './clock.ts';
import { newId } from './ids.ts';
import { issueAccessToken } from './oauth/tokens.ts';
import type { Scope } from './oauth/tokens.ts';
import type { ScimContext } from './scim/context.ts';
import { createUser } from './scim/users.ts';
import type { Storage } from './storage/connect.ts';
import { insertTeam, listTeams, setDeactivatedUsers, teamByName } from './storage/repos/teams.ts';
import type { TeamRow } from './storage/repos/teams.ts';
import { userByNameKey } from './storage/repos/users.ts';
import { USER_SCHEMA } from './scim/schema/urns.ts';

export class AdminError extends Error {}

export interface AdminDeps {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly baseUrl: string;
}

export type DeactivatedUsers = TeamRow['deactivated_users'];

export function parseDeactivatedUsers(value: string): DeactivatedUsers {
  if (value === 'hidden' || value === 'visible') return value;
  throw new AdminError(`--deactivated-users must be "hidden" or "visible", got "${value}"`);
}

export async function createTeam(deps: AdminDeps, name: string, deactivatedUsers: DeactivatedUsers = 'hidden'): Promise<TeamRow> {
  const trimmed = name.trim();
  if (!/^[\p{L}\p{N}][\p{L}\p{N} ._-]{0,62}$/u.test(trimmed)) {
    throw new AdminError('a team name is 1-63 letters, digits, spaces, dots, dashes or underscores, starting with a letter or digit');
  }
  if (await teamByName(deps.storage.db, trimmed)) throw new AdminError(`a team named "${trimmed}" already exists`);
  const row: TeamRow = { id: newId(), name: trimmed, name_key: trimmed.toLowerCase(), deactivated_users: deactivatedUsers, created_at: iso(deps.clock) };
  try {
    await insertTeam(deps.storage.db, row);
  } catch (error) {
    if (deps.storage.hooks.isUniqueViolation(error)) throw new AdminError(`a team named "${trimmed}" already exists`);
    throw error;
  }
  return row;
}

export async function requireTeam(deps: AdminDeps, name: string): Promise<TeamRow> {
  const team = await teamByName(deps.storage.db, name);
  if (!team) throw new AdminError(`no team named "${name}" (create it with: rollcall team create --name "${name}")`);
  return team;
}

export const teams = (deps: AdminDeps): Promise<TeamRow[]> => listTeams(deps.storage.db);

export async function updateTeam(deps: AdminDeps, name: string, deactivatedUsers: DeactivatedUsers): Promise<TeamRow> {
  const team = await requireTeam(deps, name);
  await setDeactivatedUsers(deps.storage.db, team.id, deactivatedUsers);
  return { ...team, deactivated_users: deactivatedUsers };
}

const contextFor = (deps: AdminDeps, team: TeamRow): ScimContext => ({ storage: deps.storage, clock: deps.clock, baseUrl: deps.baseUrl, team });

export async function createTeamUser(
  deps: AdminDeps,
  teamName: string,
  userName: string,
  options: { password?: string; admin?: boolean },
): Promise<Record<string, unknown>> {
  const team = await requireTeam(deps, teamName);
  const created = await createUser(contextFor(deps, team), {
    schemas: [USER_SCHEMA],
    userName,
    active: true,
    ...(options.admin ? { userType: 'admin' } : {}),
    ...(options.password !== undefined ? { password: options.password } : {}),
  });
  return created.resource;
}

export async function issueToken(
  deps: AdminDeps,
  teamName: string,
  userName: string,
  options: { scope: readonly Scope[]; ttlSeconds: number },
): Promise<{ token: string; expiresAt: string; teamId: string; userId: string }> {
  const team = await requireTeam(deps, teamName);
  const user = await userByNameKey(deps.storage.db, team.id, userName.toLowerCase());
  if (!user) throw new AdminError(`no user "${userName}" in team "${team.name}"`);
  if (user.active !== 1) throw new AdminError(`user "${userName}" is deactivated`);
  const issued = await issueAccessToken(deps.storage.db, deps.clock, {
    teamId: team.id,
    userId: user.id,
    clientId: null,
    scope: options.scope,
    ttlSeconds: options.ttlSeconds,
  });
  return { ...issued, teamId: team.id, userId: user.id };
}
