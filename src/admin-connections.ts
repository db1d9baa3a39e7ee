/**
 * Operator actions on a team's connections behind the CLI (`rollcall connection ...`, `token
 * issue --connection`): each is one call of oauth/connections.ts or oauth/provisioning.ts as
 * the CLI actor, its refusals turned into AdminError for the command line.
 */
import { AdminError, requireTeam } from './admin.ts';
import type { AdminDeps } from './admin.ts';
import { CLI_ACTOR } from './audit/events.ts';
import { ConnectionError, connectionByName, createConnection, deleteConnection, listConnections, renameConnection } from './oauth/connections.ts';
import type { ConnectionView } from './oauth/connections.ts';
import { issueProvisioningToken, ProvisioningTokenError } from './oauth/provisioning.ts';
import type { IssuedProvisioningToken } from './oauth/provisioning.ts';
import type { Scope } from './oauth/tokens.ts';

async function asAdminError<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ConnectionError || error instanceof ProvisioningTokenError) throw new AdminError(error.message);
    throw error;
  }
}

/** The team's connection of this name (any case), or a refusal naming the command that lists them. */
export async function requireConnection(deps: AdminDeps, teamName: string, name: string): Promise<{ teamId: string; connection: ConnectionView }> {
  const team = await requireTeam(deps, teamName);
  const connection = await connectionByName(deps.storage.db, team.id, name, deps.clock.now().toISOString());
  if (!connection) throw new AdminError(`no connection named "${name}" in team "${team.name}" (see: rollcall connection list --team "${team.name}")`);
  return { teamId: team.id, connection };
}

export async function addConnection(deps: AdminDeps, teamName: string, name: string, provider?: string): Promise<ConnectionView> {
  const team = await requireTeam(deps, teamName);
  return asAdminError(() => createConnection(deps.storage, deps.clock, { teamId: team.id, name, provider: provider ?? null, actor: CLI_ACTOR, requestId: null }));
}

export async function connections(deps: AdminDeps, teamName: string): Promise<ConnectionView[]> {
  const team = await requireTeam(deps, teamName);
  return listConnections(deps.storage, team.id, deps.clock.now().toISOString());
}

export async function renameConnectionNamed(deps: AdminDeps, teamName: string, name: string, newName: string): Promise<ConnectionView> {
  const { teamId, connection } = await requireConnection(deps, teamName, name);
  return asAdminError(() => renameConnection(deps.storage, deps.clock, { teamId, id: connection.id, name: newName, actor: CLI_ACTOR, requestId: null }));
}

export async function deleteConnectionNamed(deps: AdminDeps, teamName: string, name: string): Promise<{ id: string; name: string; tokensRevoked: number; clientsDeleted: number }> {
  const { teamId, connection } = await requireConnection(deps, teamName, name);
  return asAdminError(() => deleteConnection(deps.storage, deps.clock, { teamId, id: connection.id, actor: CLI_ACTOR, requestId: null }));
}

/** A token of the named connection (`token issue --connection`); it acts for the connection, not a user. */
export async function issueConnectionToken(
  deps: AdminDeps,
  teamName: string,
  connectionName: string,
  options: { scope: readonly Scope[]; ttlSeconds: number; name?: string },
): Promise<IssuedProvisioningToken & { teamId: string; connectionId: string }> {
  const { teamId, connection } = await requireConnection(deps, teamName, connectionName);
  const issued = await asAdminError(() =>
    issueProvisioningToken(deps.storage, deps.clock, {
      teamId,
      connectionId: connection.id,
      name: options.name ?? `token of ${connection.name} ${deps.clock.now().toISOString().slice(0, 10)}`,
      scope: options.scope,
      ttlSeconds: options.ttlSeconds,
      actor: CLI_ACTOR,
      requestId: null,
    }),
  );
  return { ...issued, teamId, connectionId: connection.id };
}
