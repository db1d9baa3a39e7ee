/**
 * Provisioning tokens (DESIGN.md section 9): the access tokens an operator hands to an
 * identity provider (Entra ID, Okta) through `rollcall token issue` or the console. Each has an
 * id, a name and an expiry, can be listed (never with its secret) and revoked by id; issuing and
 * revoking each write an audit row in the same transaction. The token is an ordinary access
 * token bound to no client (oauth/tokens.ts), so the SCIM bearer check is the same for every
 * token. It belongs to a connection (oauth/connections.ts: no user, so no person's departure
 * ends it), or, for an admin's own script token (`token issue --user-name`), to that user.
 */
import type { Actor } from '../audit/events.ts';
import { recordEvent } from '../audit/events.ts';
import type { Clock } from '../clock.ts';
import { newId, sha256 } from '../ids.ts';
import type { Storage } from '../storage/connect.ts';
import { insertProvisioningToken, listProvisioningTokens, provisioningToken, touchProvisioningTokens } from '../storage/repos/provisioning-tokens.ts';
import { touchConnections } from '../storage/repos/connections.ts';
import { revokeToken } from '../storage/repos/tokens.ts';
import { issueAccessToken } from './tokens.ts';
import type { Scope } from './tokens.ts';
import { transact } from '../storage/statements.ts';
import type { Executor } from '../storage/types.ts';

/** Longest lifetime an operator may give a token: a year (then it is issued again). */
export const MAX_TOKEN_SECONDS = 366 * 86_400;
export const MAX_TOKEN_NAME = 100;

export class ProvisioningTokenError extends Error {}

export interface IssuedProvisioningToken {
  readonly id: string;
  readonly name: string;
  readonly token: string;
  readonly expiresAt: string;
  readonly scope: string;
}

export interface ProvisioningTokenView {
  readonly id: string;
  readonly name: string;
  /** The user it acts as (an admin's own token), or null for a connection's. */
  readonly userId: string | null;
  readonly userName: string | null;
  /** The connection it belongs to, or null for a user's own token. */
  readonly connectionId: string | null;
  readonly connectionName: string | null;
  readonly scope: string;
  readonly createdAt: string;
  readonly lastUsedAt: string | null;
  readonly expiresAt: string;
  readonly revokedAt: string | null;
  /** active, expired or revoked, at the time of the listing. */
  readonly state: 'active' | 'expired' | 'revoked';
}

/** `--expires-in` and the console's expiry: seconds, or a number with s, m, h or d. */
export function parseLifetime(value: string): number {
  const match = /^(\d{1,9})([smhd]?)$/.exec(value.trim());
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 } as const;
  const seconds = match ? Number(match[1]) * unit[(match[2] ?? '') as keyof typeof unit] : Number.NaN;
  if (!(seconds >= 60 && seconds <= MAX_TOKEN_SECONDS)) {
    throw new ProvisioningTokenError('an expiry is a number of seconds, or of minutes, hours or days (30m, 12h, 90d), from 1 minute to 366 days');
  }
  return seconds;
}

function tokenName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '' || trimmed.length > MAX_TOKEN_NAME || /[\p{Cc}]/u.test(trimmed)) {
    throw new ProvisioningTokenError(`a token name is 1-${MAX_TOKEN_NAME} characters without control characters`);
  }
  return trimmed;
}

/** Whose token it is: a connection's, or a user's own (exactly one). */
export type TokenOwner = { readonly connectionId: string; readonly userId?: undefined } | { readonly userId: string; readonly connectionId?: undefined };

export async function issueProvisioningToken(
  storage: Storage,
  clock: Clock,
  request: TokenOwner & { teamId: string; name: string; scope: readonly Scope[]; ttlSeconds: number; actor: Actor; requestId: string | null },
): Promise<IssuedProvisioningToken> {
  return transact(storage.db, (trx) => issueProvisioningTokenIn(trx, clock, request));
}

/** Issues a provisioning token with its audit row in the caller's transaction `trx` (the connection wizard's). */
export async function issueProvisioningTokenIn(
  trx: Executor,
  clock: Clock,
  request: TokenOwner & { teamId: string; name: string; scope: readonly Scope[]; ttlSeconds: number; actor: Actor; requestId: string | null },
): Promise<IssuedProvisioningToken> {
  const name = tokenName(request.name);
  if (!(request.ttlSeconds >= 60 && request.ttlSeconds <= MAX_TOKEN_SECONDS)) throw new ProvisioningTokenError('the expiry is out of range');
  const id = newId();
  const userId = request.userId ?? null;
  const connectionId = request.connectionId ?? null;
  const now = clock.now().toISOString();
  const issued = await issueAccessToken(trx, clock, { teamId: request.teamId, userId, connectionId, clientId: null, scope: request.scope, ttlSeconds: request.ttlSeconds });
  const issuedBy = request.actor.via === 'console' ? `console:${request.actor.userId ?? ''}` : request.actor.via;
  await insertProvisioningToken(trx, {
    id,
    team_id: request.teamId,
    token_hash: sha256(issued.token),
    name,
    user_id: userId,
    issued_by: issuedBy,
    created_at: now,
    expires_at: issued.expiresAt,
    last_used_at: null,
    connection_id: connectionId,
  });
  await recordEvent(trx, clock, {
    teamId: request.teamId,
    actor: request.actor,
    requestId: request.requestId,
    action: 'token_issued',
    resourceType: 'Token',
    resourceId: id,
    detail: { name, ...(connectionId !== null ? { connectionId } : { userId }), scope: request.scope.join(' '), expiresAt: issued.expiresAt },
  });
  return { id, name, token: issued.token, expiresAt: issued.expiresAt, scope: request.scope.join(' ') };
}

/** A team's provisioning tokens, newest first; `connectionId`: only that connection's. */
export async function provisioningTokens(storage: Storage, clock: Clock, teamId: string, limit = 500, connectionId?: string): Promise<ProvisioningTokenView[]> {
  const now = clock.now().toISOString();
  return (await listProvisioningTokens(storage.db, teamId, limit, connectionId)).map((r) => ({
    id: r.id,
    name: r.name,
    userId: r.user_id,
    userName: r.user_name,
    connectionId: r.connection_id ?? null,
    connectionName: r.connection_name,
    scope: r.scope,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
    state: r.revoked_at !== null ? 'revoked' : r.expires_at <= now ? 'expired' : 'active',
  }));
}

/** Revokes a team's provisioning token by id: effective on the next request. Unknown ids are an error. */
export async function revokeProvisioningToken(
  storage: Storage,
  clock: Clock,
  request: { teamId: string; id: string; actor: Actor; requestId: string | null },
): Promise<{ id: string; name: string; alreadyRevoked: boolean }> {
  const row = await provisioningToken(storage.db, request.teamId, request.id);
  if (!row) throw new ProvisioningTokenError(`no token with id "${request.id}" in this team`);
  if (row.revoked_at !== null) return { id: row.id, name: row.name, alreadyRevoked: true };
  await transact(storage.db, async (trx) => {
    await revokeToken(trx, row.token_hash, clock.now().toISOString());
    await recordEvent(trx, clock, {
      teamId: request.teamId,
      actor: request.actor,
      requestId: request.requestId,
      action: 'token_revoked',
      resourceType: 'Token',
      resourceId: row.id,
      detail: { name: row.name, reason: 'revoked by an operator', ...(row.connection_id ? { connectionId: row.connection_id } : {}) },
    });
  });
  return { id: row.id, name: row.name, alreadyRevoked: false };
}

/**
 * Records that the tokens with these hashes, and these connections, were used at `at`
 * (http/last-used.ts batches the uses), 500 a statement.
 */
export async function recordTokensUsed(storage: Storage, hashes: readonly string[], at: string, connectionIds: readonly string[] = []): Promise<void> {
  for (let i = 0; i < hashes.length; i += 500) await touchProvisioningTokens(storage.db, hashes.slice(i, i + 500), at);
  for (let i = 0; i < connectionIds.length; i += 500) await touchConnections(storage.db, connectionIds.slice(i, i + 500), at);
}
