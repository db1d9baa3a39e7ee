/**
 * Connections (issue 30; DESIGN.md section 9): a team's provisioning connection ("Entra ID
 * production") is a principal of its own. It is not a directory user and not the admin who
 * created it: its provisioning tokens (oauth/provisioning.ts), its OAuth clients with their
 * secrets and federated credentials, and every access token those mint belong to it
 * (`connection_id`, no user), so deactivating or deleting any person leaves it working. Audit
 * rows and the request log name it. A connection's token is never an administrator's nor the
 * operator's (oauth/administrators.ts).
 *
 * Names are unique per team whatever their case and surrounding spaces. Every change is one
 * transaction with its audit row. Deleting a connection revokes its tokens and deletes its
 * clients (their tokens revoked) first: nothing it held keeps working.
 */
import type { Actor } from '../audit/events.ts';
import { recordEvent } from '../audit/events.ts';
import type { Clock } from '../clock.ts';
import { newId } from '../ids.ts';
import type { Storage } from '../storage/connect.ts';
import { deleteClient } from '../storage/repos/clients.ts';
import {
  clientIdsOfConnection,
  connectionNameRows,
  connectionRow,
  connectionRowByKey,
  deleteConnectionRow,
  insertConnection,
  listConnectionRows,
  setConnectionName,
  unrevokedTokenHashes,
} from '../storage/repos/connections.ts';
import type { ConnectionCounted, ConnectionRow } from '../storage/repos/connections.ts';
import { revokeToken, revokeTokensOfClient } from '../storage/repos/tokens.ts';
import { transact } from '../storage/statements.ts';
import type { Executor } from '../storage/types.ts';

export const MAX_CONNECTION_NAME = 100;

/** The providers a connection may name (the wizard's paths); null when it names none. */
export const CONNECTION_PROVIDERS = ['entra', 'okta', 'generic'] as const;
export type ConnectionProvider = (typeof CONNECTION_PROVIDERS)[number];

export class ConnectionError extends Error {
  readonly status: 400 | 404 | 409;
  constructor(status: 400 | 404 | 409, message: string) {
    super(message);
    this.name = 'ConnectionError';
    this.status = status;
  }
}

export interface ConnectionView {
  readonly id: string;
  readonly name: string;
  readonly provider: string | null;
  readonly createdAt: string;
  /** Who made it: 'cli', 'console:<user id>', 'setup:<link id>', or the token's issuer for a migrated one. */
  readonly createdBy: string;
  readonly lastUsedAt: string | null;
  /** Its provisioning tokens neither revoked nor expired. */
  readonly liveTokens: number;
  /** Its OAuth clients. */
  readonly clients: number;
}

/** What makes two names the same connection's: case and surrounding spaces do not count. */
export const connectionKey = (name: string): string => name.trim().toLowerCase();

function connectionName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > MAX_CONNECTION_NAME || /[\p{Cc}]/u.test(trimmed)) {
    throw new ConnectionError(400, `a connection's name is 1-${MAX_CONNECTION_NAME} characters without control characters`);
  }
  return trimmed;
}

function providerOf(provider: string | null | undefined): ConnectionProvider | null {
  if (provider === undefined || provider === null || provider === '') return null;
  if ((CONNECTION_PROVIDERS as readonly string[]).includes(provider)) return provider as ConnectionProvider;
  throw new ConnectionError(400, `a connection's provider is one of ${CONNECTION_PROVIDERS.join(', ')}`);
}

/** Who did it, as a connection's `created_by` says it. */
export const actorDescription = (actor: Actor): string =>
  actor.setupLinkId !== undefined ? `setup:${actor.setupLinkId}` : actor.via === 'console' ? `console:${actor.userId ?? ''}` : actor.via === 'cli' ? 'cli' : `${actor.via}:${actor.userId ?? actor.clientId ?? actor.connectionId ?? ''}`;

const view = (row: ConnectionRow, counts: { live_tokens: number; clients: number }): ConnectionView => ({
  id: row.id,
  name: row.name,
  provider: row.provider,
  createdAt: row.created_at,
  createdBy: row.created_by,
  lastUsedAt: row.last_used_at,
  liveTokens: counts.live_tokens,
  clients: counts.clients,
});

const countedView = (row: ConnectionCounted): ConnectionView => view(row, row);

async function refuseTakenName(ex: Executor, teamId: string, name: string, except?: string): Promise<void> {
  const other = await connectionRowByKey(ex, teamId, connectionKey(name));
  if (other && other.id !== except) throw new ConnectionError(409, `a connection named "${other.name}" already exists in this team`);
}

/** Runs a write; a unique violation (a concurrent one of the same name) becomes a 409. */
async function named<T>(storage: Storage, name: string, work: (trx: Executor) => Promise<T>): Promise<T> {
  try {
    return await transact(storage.db, work);
  } catch (error) {
    if (storage.hooks.isUniqueViolation(error)) throw nameTaken(name);
    throw error;
  }
}

export async function createConnection(
  storage: Storage,
  clock: Clock,
  request: { teamId: string; name: string; provider?: string | null; actor: Actor; requestId: string | null },
): Promise<ConnectionView> {
  const name = connectionName(request.name);
  return named(storage, name, (trx) => createConnectionIn(trx, clock, request));
}

/**
 * Creates a connection with its audit row in the caller's transaction `trx` (the connection
 * wizard writes the connection and its credential in one). A concurrent one of the same name
 * surfaces as a unique violation of the transaction: `isNameTaken` tells it apart.
 */
export async function createConnectionIn(
  trx: Executor,
  clock: Clock,
  request: { teamId: string; name: string; provider?: string | null; actor: Actor; requestId: string | null },
): Promise<ConnectionView> {
  const name = connectionName(request.name);
  const provider = providerOf(request.provider);
  const row: ConnectionRow = {
    id: newId(),
    team_id: request.teamId,
    name,
    name_key: connectionKey(name),
    provider,
    created_at: clock.now().toISOString(),
    created_by: actorDescription(request.actor),
    last_used_at: null,
  };
  await refuseTakenName(trx, request.teamId, name);
  await insertConnection(trx, row);
  await recordEvent(trx, clock, {
    teamId: request.teamId,
    actor: request.actor,
    requestId: request.requestId,
    action: 'connection_created',
    resourceType: 'Connection',
    resourceId: row.id,
    detail: { name, ...(provider ? { provider } : {}) },
  });
  return view(row, { live_tokens: 0, clients: 0 });
}

/** The refusal of a name a concurrent write took first (a unique violation around a transaction that made a connection). */
export const nameTaken = (name: string): ConnectionError => new ConnectionError(409, `a connection named "${name.trim()}" already exists in this team`);

/** A team's connections by name, each with its live tokens and clients counted. */
export async function listConnections(storage: Storage, teamId: string, now: string = new Date().toISOString()): Promise<ConnectionView[]> {
  return (await listConnectionRows(storage.db, teamId, now)).map(countedView);
}

export async function connectionById(ex: Executor, teamId: string, id: string, now: string = new Date().toISOString()): Promise<ConnectionView | undefined> {
  const [row] = await listConnectionRows(ex, teamId, now, [id]);
  return row ? countedView(row) : undefined;
}

export async function connectionByName(ex: Executor, teamId: string, name: string, now: string = new Date().toISOString()): Promise<ConnectionView | undefined> {
  const row = await connectionRowByKey(ex, teamId, connectionKey(name));
  return row ? connectionById(ex, teamId, row.id, now) : undefined;
}

/** The names of some of a team's connections by id (the audit log and request log name them); unknown ids are left out. */
export async function connectionNames(ex: Executor, teamId: string, ids: readonly string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  return new Map((await connectionNameRows(ex, teamId, unique)).map((r) => [r.id, r.name]));
}

export async function renameConnection(
  storage: Storage,
  clock: Clock,
  request: { teamId: string; id: string; name: string; actor: Actor; requestId: string | null },
): Promise<ConnectionView> {
  const name = connectionName(request.name);
  return named(storage, name, async (trx) => {
    const row = await connectionRow(trx, request.teamId, request.id);
    if (!row) throw new ConnectionError(404, `no connection with id "${request.id}" in this team`);
    if (row.name !== name) {
      await refuseTakenName(trx, request.teamId, name, row.id);
      await setConnectionName(trx, request.teamId, row.id, name, connectionKey(name));
      await recordEvent(trx, clock, {
        teamId: request.teamId,
        actor: request.actor,
        requestId: request.requestId,
        action: 'connection_renamed',
        resourceType: 'Connection',
        resourceId: row.id,
        detail: { name: { from: row.name, to: name } },
      });
    }
    const [counted] = await listConnectionRows(trx, request.teamId, clock.now().toISOString(), [row.id]);
    return countedView(counted!);
  });
}

/**
 * Deletes a connection: its tokens are revoked (the next request with one gets a 401), its
 * clients deleted with their secrets, federated credentials and tokens, then the connection,
 * all in one transaction with its audit row.
 */
export async function deleteConnection(
  storage: Storage,
  clock: Clock,
  request: { teamId: string; id: string; actor: Actor; requestId: string | null },
): Promise<{ id: string; name: string; tokensRevoked: number; clientsDeleted: number }> {
  const at = clock.now().toISOString();
  return transact(storage.db, async (trx) => {
    const row = await connectionRow(trx, request.teamId, request.id);
    if (!row) throw new ConnectionError(404, `no connection with id "${request.id}" in this team`);
    let tokensRevoked = 0;
    const clients = await clientIdsOfConnection(trx, row.id);
    for (const clientId of clients) {
      tokensRevoked += await revokeTokensOfClient(trx, clientId, at);
      await deleteClient(trx, clientId);
    }
    for (const hash of await unrevokedTokenHashes(trx, row.id)) if (await revokeToken(trx, hash, at)) tokensRevoked++;
    await deleteConnectionRow(trx, request.teamId, row.id);
    await recordEvent(trx, clock, {
      teamId: request.teamId,
      actor: request.actor,
      requestId: request.requestId,
      action: 'connection_deleted',
      resourceType: 'Connection',
      resourceId: row.id,
      detail: { name: row.name, tokensRevoked, clientsDeleted: clients.length },
    });
    return { id: row.id, name: row.name, tokensRevoked, clientsDeleted: clients.length };
  });
}
