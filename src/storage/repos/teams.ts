/**
 * Teams: the tenant boundary. Names are unique case-insensitively. A change to a team's row is
 * announced (revocations.ts): the bearer cache keeps the team row with each token.
 */
import { announceRevocation } from '../revocations.ts';
import type { Executor, TeamsTable } from '../types.ts';

export type TeamRow = TeamsTable;

export async function insertTeam(ex: Executor, row: TeamRow): Promise<void> {
  await ex.insertInto('teams').values(row).execute();
}

export async function teamById(ex: Executor, id: string): Promise<TeamRow | undefined> {
  return ex.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function teamByName(ex: Executor, name: string): Promise<TeamRow | undefined> {
  return ex.selectFrom('teams').selectAll().where('name_key', '=', name.toLowerCase()).executeTakeFirst();
}

export async function listTeams(ex: Executor): Promise<TeamRow[]> {
  return ex.selectFrom('teams').selectAll().orderBy('created_at').orderBy('id').execute();
}

export async function setDeactivatedUsers(ex: Executor, id: string, mode: TeamRow['deactivated_users']): Promise<void> {
  await ex.updateTable('teams').set({ deactivated_users: mode }).where('id', '=', id).execute();
  await announceRevocation(ex, { kind: 'team', id });
}

export async function setTeamName(ex: Executor, id: string, name: string): Promise<void> {
  await ex.updateTable('teams').set({ name, name_key: name.toLowerCase() }).where('id', '=', id).execute();
  await announceRevocation(ex, { kind: 'team', id });
}

/** The team's budget overrides (src/budgets.ts), announced so that every bearer cache drops the old row. */
export async function setTeamLimits(ex: Executor, id: string, limits: string | null): Promise<void> {
  await ex.updateTable('teams').set({ limits }).where('id', '=', id).execute();
  await announceRevocation(ex, { kind: 'team', id });
}
