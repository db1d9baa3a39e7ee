/**
 * Managing a client's secrets and settings (DESIGN.md section 11), for the CLI and the console
 * alike: add a secret (shown once, at most five live), list them (never their values), revoke
 * one with the tokens issued through it, rotate (a new secret, every other one revoked), and
 * change the client's name and token lifetime. Each change is one transaction with its audit
 * rows. A caller acting for one team (the console) names it, and a client of another team is
 * then as unknown as one that does not exist.
 */
import { recordEvent } from '../audit/events.ts';
import type { Actor, AuditAction } from '../audit/events.ts';
import type { Clock } from '../clock.ts';
import { newId, sha256 } from '../ids.ts';
import type { Storage } from '../storage/connect.ts';
import { clientById, updateClientSettings } from '../storage/repos/clients.ts';
import type { ClientRow } from '../storage/repos/clients.ts';
import { countLiveSecrets, insertClientSecret, liveTokensOfSecret, revokeOtherSecrets, revokeSecret, secretById, unrevokedSecrets } from '../storage/repos/client-secrets.ts';
import type { ClientSecretRow } from '../storage/repos/client-secrets.ts';
import { listTeams } from '../storage/repos/teams.ts';
import { revokeTokensOfClient } from '../storage/repos/tokens.ts';
import type { Executor } from '../storage/types.ts';
import { transact } from '../storage/statements.ts';
import { isStorableText } from '../text.ts';
import { DEFAULT_SECRET_DAYS, isLiveSecret, MAX_LIVE_SECRETS, MAX_SECRET_DAYS } from './client-secrets.ts';
import { newClientSecret } from './clients.ts';

/** A request the caller got wrong (unknown client or secret, a sixth secret, a bad value). */
export class ClientSecretError extends Error {
  /** Whether the thing named does not exist (404 in the console) rather than being refused (400). */
  readonly notFound: boolean;
  constructor(message: string, notFound = false) {
    super(message);
    this.notFound = notFound;
  }
}

/** Bounds of a client's access token lifetime, in seconds. */
export const MIN_TOKEN_LIFETIME = 300;
export const MAX_TOKEN_LIFETIME = 86_400;

/** Who changes a client, and for which team when the caller may only see one. */
export interface ClientChanger {
  readonly storage: Storage;
  readonly clock: Clock;
  readonly actor: Actor;
  readonly requestId: string | null;
  /** The only team whose clients the caller may touch (the console's); undefined: any (the CLI). */
  readonly teamId?: string;
}

/** A secret as listed: never its value. */
export interface ClientSecretView {
  readonly id: string;
  readonly name: string;
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly lastUsedAt: string | null;
  /** Whether it authenticates now (false: expired). */
  readonly live: boolean;
}

export interface AddedSecret extends ClientSecretView {
  readonly clientSecret: string;
}

const view = (row: ClientSecretRow, now: string): ClientSecretView => ({
  id: row.id,
  name: row.name,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
  lastUsedAt: row.last_used_at,
  live: isLiveSecret(row, now),
});

/** A secret's lifetime in days from the CLI's or the form's text: a whole number, 1 to 1095. */
export function parseSecretDays(text: string | undefined): number {
  if (text === undefined || text.trim() === '') return DEFAULT_SECRET_DAYS;
  return checkedDays(/^\d{1,5}$/.test(text.trim()) ? Number(text.trim()) : NaN);
}

function checkedDays(days: number): number {
  if (!Number.isInteger(days) || days < 1 || days > MAX_SECRET_DAYS) {
    throw new ClientSecretError(`a secret's expiry is a whole number of days from 1 to ${MAX_SECRET_DAYS} (3 years); the default is ${DEFAULT_SECRET_DAYS}`);
  }
  return days;
}

/** A token lifetime in seconds from text: a whole number from 300 to 86400. */
export function parseTokenLifetime(text: string): number {
  const seconds = /^\d{1,6}$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isInteger(seconds) || seconds < MIN_TOKEN_LIFETIME || seconds > MAX_TOKEN_LIFETIME) {
    throw new ClientSecretError(`a token lifetime is a whole number of seconds from ${MIN_TOKEN_LIFETIME} to ${MAX_TOKEN_LIFETIME}`);
  }
  return seconds;
}

function secretName(name: string | undefined, now: string): string {
  const trimmed = (name ?? '').trim();
  if (trimmed === '') return `added ${now.slice(0, 10)}`;
  if (trimmed.length > 100 || !isStorableText(trimmed)) throw new ClientSecretError('a secret name is 1-100 characters');
  return trimmed;
}

/** A new secret and the row that stores it (only its hash). */
export function newSecretRow(clientId: string, name: string, days: number, now: Date): { secret: string; row: ClientSecretRow } {
  const secret = newClientSecret();
  return {
    secret,
    row: {
      id: newId(),
      client_id: clientId,
      name,
      secret_hash: sha256(secret),
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + days * 86_400_000).toISOString(),
      last_used_at: null,
      revoked_at: null,
    },
  };
}

/** The client, if it exists and the caller (acting for `teamId`, when it names one) may see it. */
async function requireClient(changer: { readonly teamId?: string }, ex: Executor, clientId: string): Promise<ClientRow> {
  const row = await clientById(ex, clientId);
  if (!row || (changer.teamId !== undefined && row.team_id !== changer.teamId)) {
    throw new ClientSecretError(`no client with id "${clientId.slice(0, 40)}"`, true);
  }
  return row;
}

/**
 * A client's audit rows: its team's trail, or every team's for a client bound to none (it may
 * sign in the admins of every team). Never a secret's value.
 */
export async function auditClientChange(ex: Executor, changer: Pick<ClientChanger, 'clock' | 'actor' | 'requestId'>, client: ClientRow, action: AuditAction, detail: Record<string, unknown>): Promise<void> {
  const teamIds = client.team_id !== null ? [client.team_id] : (await listTeams(ex)).map((t) => t.id);
  for (const teamId of teamIds) {
    await recordEvent(ex, changer.clock, { teamId, actor: changer.actor, requestId: changer.requestId, action, resourceType: 'Client', resourceId: client.id, detail });
  }
}

/** The client, if it exists and the caller may see it (the console's client page). */
export async function visibleClient(changer: Omit<ClientChanger, 'actor' | 'requestId'>, clientId: string): Promise<ClientRow> {
  return requireClient(changer, changer.storage.db, clientId);
}

/** The client's secrets that are not revoked (expired ones marked), oldest first. */
export async function listClientSecrets(changer: Omit<ClientChanger, 'actor' | 'requestId'>, clientId: string): Promise<ClientSecretView[]> {
  const db = changer.storage.db;
  await requireClient(changer, db, clientId);
  const now = changer.clock.now().toISOString();
  return (await unrevokedSecrets(db, clientId)).map((row) => view(row, now));
}

/** How many live tokens revoking the secret would end (the console's confirmation says it). */
export async function secretLiveTokens(changer: Omit<ClientChanger, 'actor' | 'requestId'>, clientId: string, secretId: string): Promise<number> {
  const client = await requireClient(changer, changer.storage.db, clientId);
  return liveTokensOfSecret(changer.storage.db, client.id, secretId, changer.clock.now().toISOString());
}

/** Adds a secret to the client: refused when it already holds MAX_LIVE_SECRETS live ones. */
export async function addClientSecret(changer: ClientChanger, clientId: string, options: { name?: string; days?: number }): Promise<AddedSecret> {
  const days = checkedDays(options.days ?? DEFAULT_SECRET_DAYS);
  return transact(changer.storage.db, async (trx) => {
    const client = await requireClient(changer, trx, clientId);
    const now = changer.clock.now();
    // Touching the client's row first holds concurrent additions to one client in line, so the
    // count below cannot be raced past the limit (PostgreSQL's row lock; SQLite's write lock).
    await updateClientSettings(trx, client.id, { name: client.name, token_lifetime: client.token_lifetime }, now.toISOString());
    if ((await countLiveSecrets(trx, client.id, now.toISOString())) >= MAX_LIVE_SECRETS) {
      throw new ClientSecretError(`client ${client.id} already has ${MAX_LIVE_SECRETS} live secrets, the most it may hold: revoke one first (client secret revoke)`);
    }
    const { secret, row } = newSecretRow(client.id, secretName(options.name, now.toISOString()), days, now);
    await insertClientSecret(trx, row);
    await auditClientChange(trx, changer, client, 'client_secret_added', { name: client.name, secretId: row.id, secretName: row.name, expiresAt: row.expires_at });
    return { ...view(row, now.toISOString()), clientSecret: secret };
  });
}

/** Revokes one secret of the client and every token issued through it. */
export async function revokeClientSecret(changer: ClientChanger, clientId: string, secretId: string): Promise<{ id: string; tokensRevoked: number }> {
  return transact(changer.storage.db, async (trx) => {
    const client = await requireClient(changer, trx, clientId);
    const secret = await secretById(trx, client.id, secretId);
    if (!secret) throw new ClientSecretError(`client ${client.id} has no secret with id "${secretId.slice(0, 40)}" (see: client secret list)`, true);
    const at = changer.clock.now().toISOString();
    const tokensRevoked = await revokeSecret(trx, client.id, secret.id, at);
    if (tokensRevoked === undefined) throw new ClientSecretError(`secret ${secret.id} is already revoked`, true);
    await auditClientChange(trx, changer, client, 'client_secret_revoked', { name: client.name, secretId: secret.id, secretName: secret.name, tokensRevoked });
    return { id: secret.id, tokensRevoked };
  });
}

/**
 * `client rotate-secret`: a new secret, every other one revoked, and every token issued to the
 * client revoked with them (a secret is rotated this way because one may have leaked).
 */
export async function rotateClientSecret(changer: ClientChanger, clientId: string): Promise<{ clientSecret: string; secretId: string; expiresAt: string; secretsRevoked: number; tokensRevoked: number }> {
  return transact(changer.storage.db, async (trx) => {
    const client = await requireClient(changer, trx, clientId);
    const now = changer.clock.now();
    const at = now.toISOString();
    const { secret, row } = newSecretRow(client.id, `rotated ${at.slice(0, 10)}`, DEFAULT_SECRET_DAYS, now);
    await insertClientSecret(trx, row);
    const secretsRevoked = await revokeOtherSecrets(trx, client.id, row.id, at);
    const tokensRevoked = await revokeTokensOfClient(trx, client.id, at);
    await auditClientChange(trx, changer, client, 'client_secret_rotated', { name: client.name, secretId: row.id, expiresAt: row.expires_at, secretsRevoked, tokensRevoked });
    return { clientSecret: secret, secretId: row.id, expiresAt: row.expires_at, secretsRevoked, tokensRevoked };
  });
}

/** Changes a client's name and token lifetime (`tokenLifetime` null: back to the server's default). */
export async function updateClient(changer: ClientChanger, clientId: string, change: { name?: string; tokenLifetime?: number | null }): Promise<ClientRow> {
  return transact(changer.storage.db, async (trx) => {
    const client = await requireClient(changer, trx, clientId);
    const name = change.name === undefined ? client.name : change.name.trim();
    if (name === '' || name.length > 100 || !isStorableText(name)) throw new ClientSecretError('a client name is 1-100 characters');
    const lifetime = change.tokenLifetime === undefined ? client.token_lifetime : change.tokenLifetime;
    if (lifetime !== null) parseTokenLifetime(String(lifetime));
    const at = changer.clock.now().toISOString();
    await updateClientSettings(trx, client.id, { name, token_lifetime: lifetime }, at);
    const changed: Record<string, unknown> = {};
    if (name !== client.name) changed.name = { from: client.name, to: name };
    if (lifetime !== client.token_lifetime) changed.tokenLifetime = { from: client.token_lifetime, to: lifetime };
    await auditClientChange(trx, changer, client, 'client_updated', { name, changed });
    return { ...client, name, token_lifetime: lifetime, updated_at: at };
  });
}
