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
