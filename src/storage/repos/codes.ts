/**
 * Authorization codes, stored by hash. A code is consumed by one conditional UPDATE, so two
 * concurrent exchanges of the same code can never both succeed (DESIGN.md section 5).
 */
import type { Executor, OAuthCodesTable } from '../types.ts';

export type CodeRow = OAuthCodesTable;

export async function insertCode(ex: Executor, row: CodeRow): Promise<void> {
  await ex.insertInto('oauth_codes').values(row).execute();
}

/** Marks the code used and returns it, or undefined if it is unknown or was already used. */
export async function consumeCode(ex: Executor, hash: string, at: string): Promise<CodeRow | undefined> {
  return ex
    .updateTable('oauth_codes')
    .set({ consumed_at: at })
    .where('hash', '=', hash)
    .where('consumed_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

export async function codeByHash(ex: Executor, hash: string): Promise<CodeRow | undefined> {
  return ex.selectFrom('oauth_codes').selectAll().where('hash', '=', hash).executeTakeFirst();
}

/** Drops codes that expired before `before` (they can no longer be exchanged or replayed). */
export async function deleteExpiredCodes(ex: Executor, before: string): Promise<number> {
  const result = await ex.deleteFrom('oauth_codes').where('expires_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
