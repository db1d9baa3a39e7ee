/**
 * Operator actions behind the CLI: teams, users and tokens for scripts. Each is one service call
 * with the same rules the API applies (users are created through the SCIM Users service, so a
 * CLI-made user is validated exactly like a provisioned one).
 */
import { CLI_ACTOR, recordEvent } from './audit/events.ts';
import type { Actor, AuditAction } from './audit/events.ts';
import type { Executor } from './storage/types.ts';
import type { Clock } from './clock.ts';
import { iso } from './clock.ts';
import { newId } from './ids.ts';
import { redirectUriProblem } from './oauth/clients.ts';
import { PasswordHasher } from './oauth/passwords.ts';
import { connectionByName } from './oauth/connections.ts';
import { issueProvisioningToken, provisioningTokens, ProvisioningTokenError, revokeProvisioningToken } from './oauth/provisioning.ts';
import type { IssuedProvisioningToken, ProvisioningTokenView } from './oauth/provisioning.ts';
import type { Scope } from './oauth/tokens.ts';
import type { ScimContext } from './scim/context.ts';
import { createUser } from './scim/users.ts';
import type { Storage } from './storage/connect.ts';
import { insertTeam, listTeams, setDeactivatedUsers, setTeamLimits, setTeamName, teamByName } from './storage/repos/teams.ts';
import { applyLimits, budgetsOf, overridesOf } from './budgets.ts';
import type { LimitChange } from './budgets.ts';
import type { TeamRow } from './storage/repos/teams.ts';
import { recomputeNameClaims, sharedUserNames, userByNameKey } from './storage/repos/users.ts';
import { clientById, deleteClient as deleteClientRow, insertClient, listClients } from './storage/repos/clients.ts';
import { insertClientSecret } from './storage/repos/client-secrets.ts';
import { ClientSecretError, newSecretRow, parseTokenLifetime, rotateClientSecret as rotateSecrets } from './oauth/client-secret-admin.ts';
import { DEFAULT_SECRET_DAYS } from './oauth/client-secrets.ts';
import type { ClientRow } from './storage/repos/clients.ts';
import { revokeTokensOfClient } from './storage/repos/tokens.ts';
import { listAuditEvents } from './storage/repos/audit.ts';
import { randomBytes } from 'node:crypto';
import { USER_SCHEMA } from './scim/schema/urns.ts';
import { masterKey } from './keys/master.ts';
import { KeyStore, rotateKeys } from './keys/store.ts';
import type { Rotated } from './keys/store.ts';
import { transact } from './storage/statements.ts';

export class AdminError extends Error {}

export interface AdminDeps {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly baseUrl: string;
  /** Who acts, for the audit rows of clients and their trust (the CLI when not said: the console's wizard says). */
  readonly actor?: Actor;
}

export type DeactivatedUsers = TeamRow['deactivated_users'];

export function parseDeactivatedUsers(value: string): DeactivatedUsers {
  if (value === 'hidden' || value === 'visible') return value;
  throw new AdminError(`--deactivated-users must be "hidden" or "visible", got "${value}"`);
}

function teamName(name: string): string {
  const trimmed = name.trim();
  if (!/^[\p{L}\p{N}][\p{L}\p{N} ._-]{0,62}$/u.test(trimmed)) {
    throw new AdminError('a team name is 1-63 letters, digits, spaces, dots, dashes or underscores, starting with a letter or digit');
  }
  return trimmed;
}

/** The audit row of a change to a team's settings, in the change's transaction. */
const teamUpdated = (ex: Executor, deps: AdminDeps, team: TeamRow, actor: Actor | undefined, detail: Record<string, unknown>): Promise<void> =>
  recordEvent(ex, deps.clock, { teamId: team.id, actor: actor ?? CLI_ACTOR, requestId: null, action: 'team_updated', resourceType: 'Team', resourceId: team.id, detail });

/**
 * Renames a team (console Settings, `rollcall team rename`), audited. Sign-in by team name and
 * `--team` flags use the new name at once; ids, tokens and users are untouched.
 */
export async function renameTeam(deps: AdminDeps, name: string, newName: string, actor?: Actor): Promise<TeamRow> {
  const team = await requireTeam(deps, name);
  const trimmed = teamName(newName);
  if (trimmed === team.name) return team;
  const other = await teamByName(deps.storage.db, trimmed);
  if (other && other.id !== team.id) throw new AdminError(`a team named "${trimmed}" already exists`);
  try {
    await transact(deps.storage.db, async (trx) => {
      await setTeamName(trx, team.id, trimmed);
      await teamUpdated(trx, deps, team, actor, { name: { from: team.name, to: trimmed } });
    });
  } catch (error) {
    if (deps.storage.hooks.isUniqueViolation(error)) throw new AdminError(`a team named "${trimmed}" already exists`);
    throw error;
  }
  return { ...team, name: trimmed, name_key: trimmed.toLowerCase() };
}

export async function createTeam(deps: AdminDeps, name: string, deactivatedUsers: DeactivatedUsers = 'hidden'): Promise<TeamRow> {
  const trimmed = teamName(name);
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

/**
 * Changes how a team treats deactivated users, and with it who holds each userName (DESIGN.md
 * section 4; scim/users.ts `holdsName`), in one transaction. Showing deactivated users makes
 * every user that is not deleted hold its name again, so the switch is refused, naming them,
 * while two such users share a userName (a hiding team let a re-hire take a deactivated user's
 * name): the operator deletes or renames one first. The unique index refuses what a concurrent
 * write slips in.
 */
export async function updateTeam(deps: AdminDeps, name: string, deactivatedUsers: DeactivatedUsers, actor?: Actor): Promise<TeamRow> {
  const team = await requireTeam(deps, name);
  try {
    await transact(deps.storage.db, async (trx) => {
      if (deactivatedUsers === 'visible') {
        const shared = await sharedUserNames(trx, team.id, 20);
        if (shared.length > 0) {
          const list = shared.map((s) => `"${s.users[0]?.user_name ?? s.key}" (users ${s.users.map((u) => u.id).join(', ')})`).join('; ');
          throw new AdminError(
            `team "${team.name}" cannot show deactivated users: these userNames are shared by more than one user, and a userName has one holder: ${list}. Delete or rename all but one of each first.`,
          );
        }
      }
      await setDeactivatedUsers(trx, team.id, deactivatedUsers);
      await recomputeNameClaims(trx, team.id, deactivatedUsers);
      await teamUpdated(trx, deps, team, actor, { deactivatedUsers: { from: team.deactivated_users, to: deactivatedUsers } });
    });
  } catch (error) {
    if (!(error instanceof AdminError) && deps.storage.hooks.isUniqueViolation(error)) {
      throw new AdminError(`team "${team.name}": a userName was taken while the setting changed; try again`);
    }
    throw error;
  }
  return { ...team, deactivated_users: deactivatedUsers };
}

/**
 * Changes a team's budgets (`rollcall team update --limit NAME=VALUE`), audited with each
 * budget's old and new value. The team's row is announced, so every instance's bearer cache
 * drops it and the next request of the team runs under the new budgets.
 */
export async function updateTeamLimits(deps: AdminDeps, name: string, changes: readonly LimitChange[], actor?: Actor): Promise<TeamRow> {
  const team = await requireTeam(deps, name);
  const limits = applyLimits(team.limits, changes);
  if (limits === (team.limits ?? null)) return team;
  const before = budgetsOf(team);
  const after = budgetsOf({ limits });
  const changed = Object.fromEntries(
    Object.keys(overridesOf(team.limits))
      .concat(Object.keys(overridesOf(limits)))
      .filter((n, i, all) => all.indexOf(n) === i)
      .map((n) => n as keyof typeof before)
      .filter((n) => before[n] !== after[n])
      .map((n) => [n, { from: before[n], to: after[n] }]),
  );
  await transact(deps.storage.db, async (trx) => {
    await setTeamLimits(trx, team.id, limits);
    await teamUpdated(trx, deps, team, actor, { limits: changed });
  });
  return { ...team, limits };
}

export const contextFor = async (deps: AdminDeps, team: TeamRow): Promise<ScimContext> => ({
  storage: deps.storage,
  clock: deps.clock,
  baseUrl: deps.baseUrl,
  team,
  actor: CLI_ACTOR,
  requestId: null,
  // No CLI action hands out list cursors, so a throwaway key (the servers derive theirs from the
  // master key, app.ts).
  cursorSecret: randomBytes(32).toString('base64url'),
  // One CLI command sets at most one password: a queue of its own is enough.
  passwords: new PasswordHasher(),
});

export async function createTeamUser(
  deps: AdminDeps,
  teamName: string,
  userName: string,
  options: { password?: string; admin?: boolean },
): Promise<Record<string, unknown>> {
  // An admin exists to sign in, which takes a password: one created without it could do nothing.
  if (options.admin === true && options.password === undefined) {
    throw new AdminError('an admin signs in with a password: pass --password, or set ROLLCALL_PASSWORD (kept out of the process list)');
  }
  const team = await requireTeam(deps, teamName);
  const created = await createUser(await contextFor(deps, team), {
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
  options: { scope: readonly Scope[]; ttlSeconds: number; name?: string },
): Promise<IssuedProvisioningToken & { teamId: string; userId: string }> {
  const team = await requireTeam(deps, teamName);
  const user = await userByNameKey(deps.storage.db, team.id, userName.toLowerCase());
  if (!user) throw new AdminError(`no user "${userName}" in team "${team.name}"`);
  if (user.active !== 1) throw new AdminError(`user "${userName}" is deactivated`);
  const issued = await asAdminError(() =>
    issueProvisioningToken(deps.storage, deps.clock, {
      teamId: team.id,
      userId: user.id,
      name: options.name ?? `CLI token for ${user.user_name}`,
      scope: options.scope,
      ttlSeconds: options.ttlSeconds,
      actor: CLI_ACTOR,
      requestId: null,
    }),
  );
  return { ...issued, teamId: team.id, userId: user.id };
}

/** A team's provisioning tokens (never their secrets), newest first. */
export async function tokens(deps: AdminDeps, teamName: string): Promise<ProvisioningTokenView[]> {
  const team = await requireTeam(deps, teamName);
  return provisioningTokens(deps.storage, deps.clock, team.id);
}

export async function revokeToken(deps: AdminDeps, teamName: string, id: string): Promise<{ id: string; name: string; alreadyRevoked: boolean }> {
  const team = await requireTeam(deps, teamName);
  return asAdminError(() => revokeProvisioningToken(deps.storage, deps.clock, { teamId: team.id, id, actor: CLI_ACTOR, requestId: null }));
}

async function asAdminError<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ProvisioningTokenError) throw new AdminError(error.message);
    throw error;
  }
}

export interface ClientView {
  readonly client_id: string;
  readonly name: string;
  readonly redirect_uris: string[];
  readonly team: string | null;
  readonly created_at: string;
  /** Seconds its access tokens live; null: the server's ACCESS_TOKEN_TTL. */
  readonly token_lifetime: number | null;
  /** The connection it belongs to (oauth/connections.ts), if any. */
  readonly connection_id: string | null;
}

async function clientView(deps: AdminDeps, row: ClientRow): Promise<ClientView> {
  const team = row.team_id ? (await listTeams(deps.storage.db)).find((t) => t.id === row.team_id) : undefined;
  return { client_id: row.id, name: row.name, redirect_uris: JSON.parse(row.redirect_uris) as string[], team: team?.name ?? null, created_at: row.created_at, token_lifetime: row.token_lifetime, connection_id: row.connection_id ?? null };
}

/**
 * Registers an OAuth client (RFC 6749 2): redirect URIs are absolute https URIs (http only for
 * loopback) without fragments. The secret is returned once; only its hash is kept.
 */
export async function createClient(
  deps: AdminDeps,
  options: { name: string; redirectUris: readonly string[]; team?: string; connection?: string; tokenLifetime?: number },
): Promise<ClientView & { client_secret: string; secret_id: string; secret_expires_at: string }> {
  const name = options.name.trim();
  if (name === '' || name.length > 100) throw new AdminError('a client name is 1-100 characters');
  // A client bound to a team may use client_credentials alone, which redirects nowhere.
  if (options.redirectUris.length === 0 && options.team === undefined) {
    throw new AdminError('a client needs at least one --redirect-uri, or --team for a client that only uses client_credentials');
  }
  for (const uri of options.redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new AdminError(`--redirect-uri ${problem}`);
  }
  const tokenLifetime = options.tokenLifetime === undefined ? null : checkedTokenLifetime(options.tokenLifetime);
  const team = options.team !== undefined ? await requireTeam(deps, options.team) : undefined;
  if (options.connection !== undefined && team === undefined) throw new AdminError('a client of a connection is a team\'s: pass --team with --connection');
  const connection = options.connection !== undefined && team !== undefined ? await connectionByName(deps.storage.db, team.id, options.connection, iso(deps.clock)) : undefined;
  if (options.connection !== undefined && !connection) throw new AdminError(`no connection named "${options.connection}" in team "${team!.name}" (see: rollcall connection list --team "${team!.name}")`);
  const made = await transact(deps.storage.db, (trx) =>
    createClientIn(trx, deps, { name, redirectUris: options.redirectUris, teamId: team?.id ?? null, connectionId: connection?.id ?? null, tokenLifetime }),
  );
  return { ...(await clientView(deps, made.row)), client_secret: made.secret, secret_id: made.secretId, secret_expires_at: made.secretExpiresAt };
}

/**
 * Writes a client checked by the caller (name, redirect URIs, lifetime, team and connection ids)
 * with its first secret and audit row in the caller's transaction `trx` (createClient's, or the
 * connection wizard's, which makes the connection and its client in one).
 */
export async function createClientIn(
  trx: Executor,
  deps: AdminDeps,
  options: { name: string; redirectUris: readonly string[]; teamId: string | null; connectionId: string | null; tokenLifetime: number | null },
): Promise<{ row: ClientRow; secret: string; secretId: string; secretExpiresAt: string }> {
  const now = iso(deps.clock);
  const row: ClientRow = {
    id: newId(),
    name: options.name,
    redirect_uris: JSON.stringify([...new Set(options.redirectUris)]),
    team_id: options.teamId,
    created_at: now,
    updated_at: now,
    token_lifetime: options.tokenLifetime,
    connection_id: options.connectionId,
  };
  const { secret, row: secretRow } = newSecretRow(row.id, 'initial', DEFAULT_SECRET_DAYS, deps.clock.now());
  await insertClient(trx, row);
  await insertClientSecret(trx, secretRow);
  await auditClient(deps, trx, row, 'client_created', {
    name: options.name,
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    tokenLifetime: options.tokenLifetime,
    secretId: secretRow.id,
    secretExpiresAt: secretRow.expires_at,
    ...(options.connectionId !== null ? { connectionId: options.connectionId } : {}),
  });
  return { row, secret, secretId: secretRow.id, secretExpiresAt: secretRow.expires_at };
}

export async function clients(deps: AdminDeps): Promise<ClientView[]> {
  return Promise.all((await listClients(deps.storage.db)).map((row) => clientView(deps, row)));
}

/**
 * A client's audit row goes to its team; a client bound to no team may sign in the admins of
 * every team, so every team's trail records it. Never the secret.
 */
async function auditClient(deps: AdminDeps, ex: Executor, row: ClientRow, action: AuditAction, detail: Record<string, unknown>): Promise<void> {
  const teamIds = row.team_id !== null ? [row.team_id] : (await listTeams(ex)).map((t) => t.id);
  for (const teamId of teamIds) {
    await recordEvent(ex, deps.clock, { teamId, actor: deps.actor ?? CLI_ACTOR, requestId: null, action, resourceType: 'Client', resourceId: row.id, detail });
  }
}

async function requireClient(deps: AdminDeps, id: string): Promise<ClientRow> {
  const row = await clientById(deps.storage.db, id);
  if (!row) throw new AdminError(`no client with id "${id}" (see: rollcall client list)`);
  return row;
}

/** Deletes a client; every token it holds is revoked in the same transaction. */
export async function deleteClient(deps: AdminDeps, id: string): Promise<{ client_id: string; revoked: number }> {
  const row = await requireClient(deps, id);
  return transact(deps.storage.db, async (trx) => {
    const revoked = await revokeTokensOfClient(trx, id, iso(deps.clock));
    await deleteClientRow(trx, id);
    await auditClient(deps, trx, row, 'client_deleted', { name: row.name, tokensRevoked: revoked });
    return { client_id: id, revoked };
  });
}

/**
 * A new secret for a client; every other secret stops working at once, and so does every token
 * issued to the client (a secret is rotated this way because it may have leaked, and whoever
 * held it could have minted tokens with it). Returned once.
 */
export async function rotateClientSecret(deps: AdminDeps, id: string): Promise<{ client_id: string; client_secret: string; revoked: number; secrets_revoked: number }> {
  await requireClient(deps, id);
  const rotated = await rotateSecrets({ storage: deps.storage, clock: deps.clock, actor: CLI_ACTOR, requestId: null }, id);
  return { client_id: id, client_secret: rotated.clientSecret, revoked: rotated.tokensRevoked, secrets_revoked: rotated.secretsRevoked };
}

/** A client's token lifetime as the CLI gives it: refused outside 300..86400 seconds. */
export function checkedTokenLifetime(seconds: number): number {
  try {
    return parseTokenLifetime(String(seconds));
  } catch (error) {
    if (error instanceof ClientSecretError) throw new AdminError(`--token-lifetime: ${error.message}`);
    throw error;
  }
}

/**
 * `rollcall keys rotate`: new current keys for every purpose; the previous
 * ones still verify until their window ends (keys/store.ts). Needs the master key: SECRET_KEY,
 * or the key file beside an SQLite database.
 */
export async function rotateKeysNow(deps: AdminDeps, secretKey: string | undefined, eventRetentionDays?: number): Promise<Rotated[]> {
  const master = masterKey({ secretKey, database: { engine: deps.storage.hooks.name, sqlitePath: deps.storage.sqlitePath } });
  // Reading the live keys first proves this master key is the one they were stored with.
  await KeyStore.open(deps.storage.db, deps.clock, master);
  // A replaced events key keeps verifying (in the JWKS) until the last event it signed is pruned.
  return rotateKeys(deps.storage.db, deps.clock, master, eventRetentionDays === undefined ? {} : { events: eventRetentionDays * 86_400 });
}

export interface FirstRunCredentials {
  readonly team: string;
  readonly userName: string;
  readonly password: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly redirectUri: string;
}

export const FIRST_RUN = { team: 'default', userName: 'admin@rollcall.example', redirectUri: 'http://127.0.0.1/callback' } as const;

/**
 * First run (DESIGN.md section 6): on a database without teams, creates the team `default`, an
 * admin with a random password and an OAuth client, and returns their credentials to print
 * once. Undefined when the database has teams (or another instance got there first).
 */
/** Whether the database is empty, so that a first run would create the team `default` and its admin. */
export async function firstRunPending(deps: AdminDeps): Promise<boolean> {
  return (await listTeams(deps.storage.db)).length === 0;
}

export async function firstRun(deps: AdminDeps): Promise<FirstRunCredentials | undefined> {
  if ((await listTeams(deps.storage.db)).length > 0) return undefined;
  try {
    await createTeam(deps, FIRST_RUN.team);
  } catch (error) {
    if (error instanceof AdminError) return undefined;
    throw error;
  }
  const password = randomBytes(18).toString('base64url');
  await createTeamUser(deps, FIRST_RUN.team, FIRST_RUN.userName, { password, admin: true });
  const client = await createClient(deps, { name: 'Default client', redirectUris: [FIRST_RUN.redirectUri] });
  return { team: FIRST_RUN.team, userName: FIRST_RUN.userName, password, clientId: client.client_id, clientSecret: client.client_secret, redirectUri: FIRST_RUN.redirectUri };
}

export interface AuditView {
  readonly at: string;
  readonly action: string;
  readonly resourceType: string;
  readonly resourceId: string | null;
  readonly actor: unknown;
  readonly requestId: string | null;
  readonly detail: unknown;
}

/** A team's audit events from `since` (ISO 8601) on, oldest first. */
export async function auditEvents(deps: AdminDeps, teamName: string, since: string | undefined, limit: number, order: 'oldest' | 'newest' = 'oldest'): Promise<AuditView[]> {
  const team = await requireTeam(deps, teamName);
  let from: string | undefined;
  if (since !== undefined) {
    const ms = Date.parse(since);
    if (Number.isNaN(ms)) throw new AdminError(`--since must be an ISO 8601 date or time, got "${since}"`);
    from = new Date(ms).toISOString();
  }
  const rows = await listAuditEvents(deps.storage.db, team.id, from, limit, order);
  return rows.map((r) => ({
    at: r.at,
    action: r.action,
    resourceType: r.resource_type,
    resourceId: r.resource_id,
    actor: JSON.parse(r.actor) as unknown,
    requestId: r.request_id,
    detail: JSON.parse(r.detail) as unknown,
  }));
}
