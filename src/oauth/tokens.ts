/**
 * Access tokens: minted as 256 random bits with the `rc_at_` prefix, stored only as SHA-256
 * hashes, bound to one team, checked on every SCIM request (expiry, revocation, scope). The
 * grants that mint them through /oauth/token build on this module.
 */
import type { Clock } from '../clock.ts';
import { newToken, sha256 } from '../ids.ts';
import { insertToken, tokenByHash } from '../storage/repos/tokens.ts';
import type { Executor } from '../storage/types.ts';

export const ACCESS_PREFIX = 'rc_at_';
export const REFRESH_PREFIX = 'rc_rt_';
export const ALL_SCOPES = ['read', 'write'] as const;
export type Scope = (typeof ALL_SCOPES)[number];

export interface IssueOptions {
  readonly teamId: string;
  readonly userId: string | null;
  readonly clientId: string | null;
  readonly scope: readonly Scope[];
  readonly ttlSeconds: number;
  readonly familyId?: string | null;
}

export async function issueAccessToken(ex: Executor, clock: Clock, options: IssueOptions): Promise<{ token: string; expiresAt: string }> {
  const token = newToken(ACCESS_PREFIX);
  const now = clock.now();
  const expiresAt = new Date(now.getTime() + options.ttlSeconds * 1000).toISOString();
  await insertToken(ex, {
    hash: sha256(token),
    kind: 'access',
    family_id: options.familyId ?? null,
    client_id: options.clientId,
    user_id: options.userId,
    team_id: options.teamId,
    scope: options.scope.join(' '),
    created_at: now.toISOString(),
    expires_at: expiresAt,
    revoked_at: null,
  });
  return { token, expiresAt };
}

export interface Bearer {
  readonly teamId: string;
  readonly userId: string | null;
  readonly clientId: string | null;
  readonly scopes: ReadonlySet<string>;
}

/** The grant behind a presented access token, or undefined if it is unknown, expired or revoked. */
export async function verifyAccessToken(ex: Executor, clock: Clock, token: string): Promise<Bearer | undefined> {
  if (!token.startsWith(ACCESS_PREFIX) || token.length > 200) return undefined;
  const row = await tokenByHash(ex, sha256(token));
  if (!row || row.kind !== 'access' || row.revoked_at !== null) return undefined;
  if (row.expires_at <= clock.now().toISOString()) return undefined;
  return { teamId: row.team_id, userId: row.user_id, clientId: row.client_id, scopes: new Set(row.scope.split(' ')) };
}
