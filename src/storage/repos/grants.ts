/**
 * user_grants rows (migration 023): one per (kind, value, type) a user's `roles` / `entitlements`
 * hold, kept in each user write's transaction by scim/grants.ts from the document before and
 * after the write (the caller computes the difference: no read here). Written with the query
 * builder like the extension claims (repos/extensions.ts `claimUniqueValues`): on PostgreSQL each
 * statement flushes the write's deferred writes, so a user write that changes no grant runs none
 * of these. Keyed by `(team_id, kind, value, type, user_id)`: the holders of one entry are one
 * index range.
 */
import { hooksIfAny } from '../statements.ts';
import type { Executor, UserGrantsTable, UsersTable } from '../types.ts';

export type GrantRow = Omit<UserGrantsTable, 'team_id' | 'user_id'>;

/**
 * Makes the user's rows `rows`, given which of them may be new or changed (`upserted`): with
 * `dropOthers`, every other row of the user is deleted first (whatever the caller believed it
 * held, so a row no document explains cannot linger). At most two statements.
 */
export async function changeGrants(ex: Executor, teamId: string, userId: string, rows: readonly GrantRow[], upserted: readonly GrantRow[], dropOthers: boolean): Promise<void> {
  if (dropOthers) {
    let drop = ex.deleteFrom('user_grants').where('team_id', '=', teamId).where('user_id', '=', userId);
    if (rows.length > 0) drop = drop.where((eb) => eb.not(eb.or(rows.map((r) => eb.and([eb('kind', '=', r.kind), eb('value', '=', r.value), eb('type', '=', r.type)])))));
    await drop.execute();
  }
  if (upserted.length > 0) {
    await ex
      .insertInto('user_grants')
      .values(upserted.map((r) => ({ team_id: teamId, user_id: userId, kind: r.kind, value: r.value, type: r.type, is_primary: r.is_primary })))
      .onConflict((oc) => oc.columns(['team_id', 'kind', 'value', 'type', 'user_id']).doUpdateSet((eb) => ({ is_primary: eb.ref('excluded.is_primary') })))
      .execute();
  }
}

/**
 * The next batch of a removal of the entry from its holders: up to `limit` distinct user ids read
 * from the holders' index range (`ids`, every one of them, whether or not a users row is behind
 * it), and the team's users rows of those ids (`users`), locked until the caller's transaction
 * ends where the engine locks rows (PostgreSQL `FOR NO KEY UPDATE`, an UPDATE's lock: a
 * concurrent write of a holder waits, or is waited for and its committed row read, so the
 * rewrite's version check cannot lose). The
 * caller drops the batch's rows (`dropGrant` over `ids`) before reading the next, so the walk
 * needs no position and ends only when no row of the entry is left.
 */
export async function holdersOfGrant(ex: Executor, teamId: string, kind: UserGrantsTable['kind'], value: string, limit: number): Promise<{ ids: string[]; users: UsersTable[] }> {
  const rows = await ex
    .selectFrom('user_grants')
    .select('user_id')
    .distinct()
    .where('team_id', '=', teamId)
    .where('kind', '=', kind)
    .where('value', '=', value)
    .orderBy('user_id')
    .limit(limit)
    .execute();
  const ids = rows.map((r) => r.user_id);
  if (ids.length === 0) return { ids, users: [] };
  let users = ex.selectFrom('users').selectAll().where('team_id', '=', teamId).where('id', 'in', ids).orderBy('id');
  if (hooksIfAny(ex)?.rowLocks) users = users.forNoKeyUpdate();
  return { ids, users: await users.execute() };
}

/** Drops the rows of the entry held by `userIds` (whatever their type). */
export async function dropGrant(ex: Executor, teamId: string, kind: UserGrantsTable['kind'], value: string, userIds: readonly string[]): Promise<void> {
  if (userIds.length === 0) return;
  await ex.deleteFrom('user_grants').where('team_id', '=', teamId).where('kind', '=', kind).where('value', '=', value).where('user_id', 'in', userIds).execute();
}
