/**
 * Access and refresh tokens, stored only as SHA-256 hashes (DESIGN.md section 5). The lookups
 * of every request (the bearer check with its team, a token by hash) are compiled once. Every
 * function here that takes an access token's access away announces it (revocations.ts), so
 * that no instance keeps serving it from its bearer cache; retiring a refresh token for its
 * rotation announces nothing (refresh tokens are never cached).
 */
import { announceRevocation } from '../revocations.ts';
import { defineStatement, hot } from '../statements.ts';
import type { Executor, OAuthTokensTable, TeamsTable } from '../types.ts';

export type TokenRow = OAuthTokensTable;

const TOKEN_BY_HASH = defineStatement<{ hash: string }, TokenRow>('tokenByHash', ['hash'], (db, p) =>
  db.selectFrom('oauth_tokens').selectAll().where('hash', '=', p.hash),
);

interface TokenTeamRow extends TokenRow {
  readonly team_name: string;
  readonly team_name_key: string;
  readonly team_deactivated_users: TeamsTable['deactivated_users'];
  readonly team_created_at: string;
  readonly team_schema_version: number;
}

const TOKEN_WITH_TEAM = defineStatement<{ hash: string }, TokenTeamRow>('tokenWithTeam', ['hash'], (db, p) =>
  db
    .selectFrom('oauth_tokens as t')
    .innerJoin('teams as tm', 'tm.id', 't.team_id')
    .selectAll('t')
    .select(['tm.name as team_name', 'tm.name_key as team_name_key', 'tm.deactivated_users as team_deactivated_users', 'tm.created_at as team_created_at', 'tm.schema_version as team_schema_version'])
    .where('t.hash', '=', p.hash),
);

export async function insertToken(ex: Executor, row: TokenRow): Promise<void> {
  await ex.insertInto('oauth_tokens').values(row).execute();
}

export async function tokenByHash(ex: Executor, hash: string): Promise<TokenRow | undefined> {
  return hot(ex).first(ex, TOKEN_BY_HASH, { hash });
}

/** A token and its team in one statement (the bearer check of every SCIM request). */
export async function tokenWithTeam(ex: Executor, hash: string): Promise<{ token: TokenRow; team: TeamsTable } | undefined> {
  const row = await hot(ex).first(ex, TOKEN_WITH_TEAM, { hash });
  if (!row) return undefined;
  return {
    // The row itself, with four team_* fields beside the token's (no copy on every request).
    token: row,
    team: { id: row.team_id, name: row.team_name, name_key: row.team_name_key, deactivated_users: row.team_deactivated_users, created_at: row.team_created_at, schema_version: Number(row.team_schema_version) },
  };
}

export async function revokeTokensOfUser(ex: Executor, userId: string, at: string): Promise<number> {
  const result = await ex
    .updateTable('oauth_tokens')
    .set({ revoked_at: at })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  const revoked = Number(result.numUpdatedRows);
  if (revoked > 0) await announceRevocation(ex, { kind: 'user', id: userId });
  return revoked;
}

/**
 * Rotates a refresh token: marks it revoked if it still is not. False when someone used it
 * first (the caller treats that as reuse). Only refresh tokens: no cache holds them.
 */
export async function retireRefreshToken(ex: Executor, hash: string, at: string): Promise<boolean> {
  const result = await ex
    .updateTable('oauth_tokens')
    .set({ revoked_at: at })
    .where('hash', '=', hash)
    .where('kind', '=', 'refresh')
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Revokes one token (RFC 7009, a provisioning token's revocation). False when it already was. */
export async function revokeToken(ex: Executor, hash: string, at: string): Promise<boolean> {
  const result = await ex
    .updateTable('oauth_tokens')
    .set({ revoked_at: at })
    .where('hash', '=', hash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  const revoked = Number(result.numUpdatedRows) === 1;
  if (revoked) await announceRevocation(ex, { kind: 'token', id: hash });
  return revoked;
}

/** Revokes every live token of a grant (a refresh family, or what one code issued). */
export async function revokeFamily(ex: Executor, familyId: string, at: string): Promise<number> {
  const result = await ex
    .updateTable('oauth_tokens')
    .set({ revoked_at: at })
    .where('family_id', '=', familyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  const revoked = Number(result.numUpdatedRows);
  if (revoked > 0) await announceRevocation(ex, { kind: 'family', id: familyId });
  return revoked;
}

export async function revokeTokensOfClient(ex: Executor, clientId: string, at: string): Promise<number> {
  const result = await ex
    .updateTable('oauth_tokens')
    .set({ revoked_at: at })
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  const revoked = Number(result.numUpdatedRows);
  if (revoked > 0) await announceRevocation(ex, { kind: 'client', id: clientId });
  return revoked;
}
