/**
 * The names an audit page shows for the ids its rows hold (issue 30 item 4): userNames,
 * displayNames, OAuth clients' and provisioning tokens' names. Each function answers for a whole
 * page's ids in one statement (`id IN (...)`, by primary key), so a page of the audit log costs
 * one query per kind of name, whatever its rows hold. A user deleted for good has no row: the
 * caller falls back to what the audit row itself says.
 *
 * The team is checked on the rows found, not in the WHERE: with `team_id = ?` beside `id IN
 * (...)` SQLite's planner reads the whole team from a team index (a million users for a page that
 * names a few dozen) instead of the ids' primary keys (as repos/users.ts existingUserIds).
 */
import type { Executor } from '../types.ts';

/** At most this many ids per statement (a page of 200 rows names at most 2,600). */
const MAX_IDS = 5000;

const bounded = (ids: readonly string[]): string[] => [...new Set(ids)].slice(0, MAX_IDS);

/** The team's users among `ids`: their userNames (deleted and deactivated ones too). */
export async function userNamesByIds(ex: Executor, teamId: string, ids: readonly string[]): Promise<{ id: string; user_name: string }[]> {
  if (ids.length === 0) return [];
  const rows = await ex.selectFrom('users').select(['id', 'user_name', 'team_id']).where('id', 'in', bounded(ids)).execute();
  return rows.filter((r) => r.team_id === teamId).map((r) => ({ id: r.id, user_name: r.user_name }));
}

/** The team's groups among `ids`: their displayNames. */
export async function groupNamesByIds(ex: Executor, teamId: string, ids: readonly string[]): Promise<{ id: string; display_name: string }[]> {
  if (ids.length === 0) return [];
  const rows = await ex.selectFrom('groups').select(['id', 'display_name', 'team_id']).where('id', 'in', bounded(ids)).execute();
  return rows.filter((r) => r.team_id === teamId).map((r) => ({ id: r.id, display_name: r.display_name }));
}

/** The OAuth clients among `ids` (clients are the server's, not a team's): their names and the team they are bound to. */
export async function clientNamesByIds(ex: Executor, ids: readonly string[]): Promise<{ id: string; name: string; team_id: string | null }[]> {
  if (ids.length === 0) return [];
  return ex.selectFrom('oauth_clients').select(['id', 'name', 'team_id']).where('id', 'in', bounded(ids)).execute();
}

/** The team's provisioning tokens among `ids`: their names. */
export async function tokenNamesByIds(ex: Executor, teamId: string, ids: readonly string[]): Promise<{ id: string; name: string }[]> {
  if (ids.length === 0) return [];
  const rows = await ex.selectFrom('provisioning_tokens').select(['id', 'name', 'team_id']).where('id', 'in', bounded(ids)).execute();
  return rows.filter((r) => r.team_id === teamId).map((r) => ({ id: r.id, name: r.name }));
}

/** A team's user with this userName (exact, by its key), for the audit log's actor filter. */
export async function userIdByName(ex: Executor, teamId: string, userNameKey: string): Promise<string | undefined> {
  const row = await ex.selectFrom('users').select('id').where('team_id', '=', teamId).where('user_name_key', '=', userNameKey).orderBy('deleted_at', 'desc').limit(1).executeTakeFirst();
  return row?.id;
}
