/** Access and refresh tokens, stored only as SHA-256 hashes (DESIGN.md section 5). */
import type { Executor, OAuthTokensTable } from '../types.ts';

export type TokenRow = OAuthTokensTable;

export async function insertToken(ex: Executor, row: TokenRow): Promise<void> {
  await ex.insertInto('oauth_tokens').values(row).execute();
}

export async function tokenByHash(ex: Executor, hash: string): Promise<TokenRow | undefined> {
  return ex.selectFrom('oauth_tokens').selectAll().where('hash', '=', hash).executeTakeFirst();
}

export async function revokeTokensOfUser(ex: Executor, userId: string, at: string): Promise<number> {
  const result = await ex
    .updateTable('oauth_tokens')
    .set({ revoked_at: at })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Rotates a refresh token: marks it revoked if it still is not. False when someone used it
 * first (the caller treats that as reuse).
 */
export async function retireToken(ex: Executor, hash: string, at: string): Promise<boolean> {
  const result = await ex
    .updateTable('oauth_tokens')
    .set({ revoked_at: at })
    .where('hash', '=', hash)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Revokes every live token of a grant (a refresh family, or what one code issued). */
export async function revokeFamily(ex: Executor, familyId: string, at: string): Promise<number> {
  const result = await ex
    .updateTable('oauth_tokens')
    .set({ revoked_at: at })
    .where('family_id', '=', familyId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function revokeTokensOfClient(ex: Executor, clientId: string, at: string): Promise<number> {
  const result = await ex
    .updateTable('oauth_tokens')
    .set({ revoked_at: at })
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
