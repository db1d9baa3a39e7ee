/**
 * Access and refresh tokens (DESIGN.md section 5; RFC 6749 sections 1.4, 1.5 and 6; RFC 9700
 * 4.14): 256 random bits with a recognisable prefix, stored only as SHA-256 hashes, bound to
 * one team, a client and (except client_credentials) a user. Every token of one grant shares a
 * family id: refresh tokens rotate on every use, and presenting a rotated one revokes the whole
 * family. The SCIM bearer check and every grant go through this module.
 */
import type { Clock } from '../clock.ts';
import { newId, newToken, sha256 } from '../ids.ts';
import type { Storage } from '../storage/connect.ts';
import type { TeamRow } from '../storage/repos/teams.ts';
import { insertToken, insertTokenPair, retireRefreshTokenWithUser, revokeFamily, tokenByHash, tokenWithTeam } from '../storage/repos/tokens.ts';
import type { GrantUser } from '../storage/repos/tokens.ts';
import type { TokenRow } from '../storage/repos/tokens.ts';
import type { Executor } from '../storage/types.ts';
import { recordEvent } from '../audit/events.ts';
import type { Actor } from '../audit/events.ts';
import { invalidGrant } from './errors.ts';
import { scopeString } from './scopes.ts';
import type { Scope } from './scopes.ts';
import { transact } from '../storage/statements.ts';

export { ALL_SCOPES } from './scopes.ts';
export type { Scope } from './scopes.ts';

export const ACCESS_PREFIX = 'rc_at_';
export const REFRESH_PREFIX = 'rc_rt_';

export interface IssueOptions {
  readonly teamId: string;
  readonly userId: string | null;
  readonly clientId: string | null;
  readonly scope: readonly Scope[];
  readonly ttlSeconds: number;
  readonly familyId?: string | null;
  /** The client secret that authenticated the request that issues the token. */
  readonly secretId?: string | null;
  /** The connection the token belongs to (a connection's token has no user). */
  readonly connectionId?: string | null;
}

/** A new token and the row that stores it (only its hash). */
function tokenRow(clock: Clock, kind: 'access' | 'refresh', options: IssueOptions): { token: string; row: TokenRow } {
  const token = newToken(kind === 'access' ? ACCESS_PREFIX : REFRESH_PREFIX);
  const now = clock.now();
  return {
    token,
    row: {
      hash: sha256(token),
      kind,
      family_id: options.familyId ?? null,
      client_id: options.clientId,
      user_id: options.userId,
      team_id: options.teamId,
      scope: scopeString(options.scope),
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + options.ttlSeconds * 1000).toISOString(),
      revoked_at: null,
      secret_id: options.secretId ?? null,
      connection_id: options.connectionId ?? null,
    },
  };
}

export async function issueAccessToken(ex: Executor, clock: Clock, options: IssueOptions): Promise<{ token: string; expiresAt: string }> {
  const { token, row } = tokenRow(clock, 'access', options);
  await insertToken(ex, row);
  return { token, expiresAt: row.expires_at };
}

export interface TokenLifetimes {
  readonly accessTokenTtl: number;
  readonly refreshTokenTtl: number;
}

export interface GrantedTokens {
  /** The grant's family id: every token minted under it, revoked together. */
  readonly familyId: string;
  readonly accessToken: string;
  readonly refreshToken?: string;
  readonly scope: readonly Scope[];
  readonly expiresIn: number;
}

/** Mints the tokens of one grant: an access token, and a refresh token unless `withRefresh` is false. */
export async function issueGrant(
  ex: Executor,
  clock: Clock,
  lifetimes: TokenLifetimes,
  grant: { teamId: string; userId: string | null; clientId: string; scope: readonly Scope[]; familyId?: string; withRefresh: boolean; secretId?: string | null; connectionId?: string | null },
): Promise<GrantedTokens> {
  const familyId = grant.familyId ?? newId();
  const base = { teamId: grant.teamId, userId: grant.userId, clientId: grant.clientId, scope: grant.scope, familyId, secretId: grant.secretId ?? null, connectionId: grant.connectionId ?? null };
  const access = tokenRow(clock, 'access', { ...base, ttlSeconds: lifetimes.accessTokenTtl });
  const refresh = grant.withRefresh ? tokenRow(clock, 'refresh', { ...base, ttlSeconds: lifetimes.refreshTokenTtl }) : undefined;
  if (refresh) await insertTokenPair(ex, access.row, refresh.row);
  else await insertToken(ex, access.row);
  return {
    familyId,
    accessToken: access.token,
    ...(refresh ? { refreshToken: refresh.token } : {}),
    scope: grant.scope,
    expiresIn: lifetimes.accessTokenTtl,
  };
}

/**
 * A one-time artifact (a rotated refresh token, a used code) presented again. The grant's
 * transaction rolls back; the caller then revokes `familyId` on its own (RFC 9700 4.14.2,
 * RFC 6749 4.1.2) and answers invalid_grant.
 */
export class ReplayDetected extends Error {
  readonly familyId: string;
  readonly teamId: string;
  readonly what: string;
  constructor(familyId: string, teamId: string, what: string) {
    super(`${what} was already used; every token of its grant is now revoked`);
    this.name = 'ReplayDetected';
    this.familyId = familyId;
    this.teamId = teamId;
    this.what = what;
  }
}

/**
 * Revokes the grant a replay belongs to and records it, in a transaction of its own (the
 * grant's transaction has rolled back), then answers invalid_grant.
 */
export async function refuseReplay(storage: Storage, clock: Clock, replay: ReplayDetected, actor: Actor, requestId: string | null): Promise<never> {
  await transact(storage.db, async (trx) => {
    const revoked = await revokeFamily(trx, replay.familyId, clock.now().toISOString());
    await recordEvent(trx, clock, {
      teamId: replay.teamId,
      actor,
      requestId,
      action: 'grant_revoked',
      resourceType: 'Token',
      resourceId: replay.familyId,
      detail: { reason: `${replay.what} was presented again`, tokensRevoked: revoked },
    });
  });
  throw invalidGrant(replay.message);
}

/**
 * Takes a refresh token out of use for a rotation (RFC 9700 4.14.2): one conditional UPDATE, so
 * of two concurrent uses exactly one wins. A token already rotated or revoked is a replay.
 * Answers the token's row and its grant's user as it is now (undefined when there is none).
 */
export async function rotateRefreshToken(ex: Executor, clock: Clock, token: string, clientId: string): Promise<{ row: TokenRow; user: GrantUser | undefined }> {
  if (!token.startsWith(REFRESH_PREFIX) || token.length > 200) throw invalidGrant('The refresh token is invalid');
  const hash = sha256(token);
  const now = clock.now().toISOString();
  // The usual case in one statement, the user read with it; a failure below rolls the grant's
  // transaction back, and with it this retirement.
  const retired = await retireRefreshTokenWithUser(ex, hash, now);
  const row = retired?.row ?? (await tokenByHash(ex, hash));
  if (!row || row.kind !== 'refresh') throw invalidGrant('The refresh token is invalid');
  if (row.client_id !== clientId) throw invalidGrant('The refresh token was issued to another client');
  if (!retired) throw new ReplayDetected(row.family_id ?? row.hash, row.team_id, 'The refresh token');
  if (row.expires_at <= now) throw invalidGrant('The refresh token has expired');
  return retired;
}

export interface Bearer {
  /** The team the token is bound to, read with the token (one statement per request). */
  readonly team: TeamRow;
  readonly userId: string | null;
  readonly clientId: string | null;
  /**
   * The connection the token belongs to (oauth/connections.ts): a principal of its own, never
   * the operator nor an administrator, whoever created it.
   */
  readonly connectionId: string | null;
  readonly scopes: ReadonlySet<string>;
  /** The token's SHA-256 (its row's key): what "last used" and the request log name it by. */
  readonly tokenHash: string;
}

/** Whether `token` can be an access token at all (checked before anything is hashed or read). */
export const isAccessTokenShaped = (token: string): boolean => token.startsWith(ACCESS_PREFIX) && token.length <= 200;

/** A live access token as read from storage: the grant, with what a cache needs to expire and drop it. */
export interface VerifiedAccess {
  readonly bearer: Bearer;
  readonly expiresAt: string;
  /** The grant the token belongs to (null for a provisioning token). */
  readonly familyId: string | null;
}

/** The live access token whose SHA-256 is `hash`, read from storage (one statement). */
export async function accessTokenByHash(ex: Executor, clock: Clock, hash: string): Promise<VerifiedAccess | undefined> {
  const found = await tokenWithTeam(ex, hash);
  if (!found) return undefined;
  const { token: row, team } = found;
  if (row.kind !== 'access' || row.revoked_at !== null) return undefined;
  if (row.expires_at <= clock.now().toISOString()) return undefined;
  return {
    bearer: { team, userId: row.user_id, clientId: row.client_id, connectionId: row.connection_id ?? null, scopes: new Set(row.scope.split(' ')), tokenHash: row.hash },
    expiresAt: row.expires_at,
    familyId: row.family_id,
  };
}

/**
 * The grant behind a presented access token, or undefined if it is unknown, expired or revoked,
 * read from storage every time. Request paths go through the bearer cache (bearer-cache.ts).
 */
export async function verifyAccessToken(ex: Executor, clock: Clock, token: string): Promise<Bearer | undefined> {
  if (!isAccessTokenShaped(token)) return undefined;
  return (await accessTokenByHash(ex, clock, sha256(token)))?.bearer;
}

/**
 * Whether the token whose SHA-256 is `hash` was revoked (or is unknown): what an asynchronous
 * request checks before it runs. Expiry does not count: a request accepted while its token was
 * live may run after the token's natural end, as a synchronous request that outlives it does.
 */
export async function tokenRevokedByHash(ex: Executor, hash: string): Promise<boolean> {
  const row = await tokenByHash(ex, hash);
  return !row || row.revoked_at !== null;
}

/** A token row if `token` is live (RFC 7662 `active`), for introspection and revocation. */
export async function liveToken(ex: Executor, clock: Clock, token: string): Promise<TokenRow | undefined> {
  if (token.length > 200 || !(token.startsWith(ACCESS_PREFIX) || token.startsWith(REFRESH_PREFIX))) return undefined;
  const row = await tokenByHash(ex, sha256(token));
  if (!row || row.revoked_at !== null || row.expires_at <= clock.now().toISOString()) return undefined;
  return row;
}

/** Who acts with `bearer` on the SCIM side (and its siblings): its client, user and connection. */
export const bearerActor = (bearer: Bearer): Actor => ({ via: 'scim', clientId: bearer.clientId, userId: bearer.userId, ...(bearer.connectionId !== null ? { connectionId: bearer.connectionId } : {}) });
