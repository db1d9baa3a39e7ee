/**
 * A team's admins as the console's Admins page reads them (users whose userType is admin, by the
 * `users_team_admins` index of migration 030), the one-time password links of migration 030
 * (stored as SHA-256; used by one conditional UPDATE ... RETURNING, never read-then-write), and
 * the revocation of every token one OAuth client holds for one team (announced, so no instance
 * keeps serving them from its bearer cache, and with the event subscriptions made with them
 * paused, in the write's transaction).
 */
import { sql } from 'kysely';
import { announceRevocation } from '../revocations.ts';
import type { AdminPasswordLinksTable, Executor } from '../types.ts';
import { CREATOR_REVOKED } from './subscription-creators.ts';

export type PasswordLinkRow = AdminPasswordLinksTable;

export interface AdminRow {
  readonly id: string;
  readonly user_name: string;
  readonly active: number;
  readonly has_password: number;
  readonly created_at: string;
}

const isAdmin = sql<boolean>`lower(user_type) = 'admin'`;

/** The team's users whose userType is admin (any case), deleted ones left out, by userName. */
export async function adminsOfTeam(ex: Executor, teamId: string): Promise<AdminRow[]> {
  const rows = await ex
    .selectFrom('users')
    .select(['id', 'user_name', 'active', 'created_at'])
    .select(sql<number>`case when password_hash is null then 0 else 1 end`.as('has_password'))
    .where('team_id', '=', teamId)
    .where(isAdmin)
    .where('deleted_at', 'is', null)
    // Sorted as expressions, after the read: an index in this order (every user of the team)
    // must not look cheaper to SQLite's planner than users_team_admins (the admins only).
    .orderBy(sql`user_name_key || ''`)
    .orderBy(sql`id || ''`)
    .execute();
  return rows.map((r) => ({ ...r, active: Number(r.active), has_password: Number(r.has_password) }));
}

/** The team's admins who can sign in now: active, userType admin, with a password. */
export async function adminsWhoSignIn(ex: Executor, teamId: string): Promise<number> {
  const row = await ex
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('team_id', '=', teamId)
    .where(isAdmin)
    .where('active', '=', 1)
    .where('password_hash', 'is not', null)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertPasswordLink(ex: Executor, row: PasswordLinkRow): Promise<void> {
  await ex.insertInto('admin_password_links').values(row).execute();
}

/** The link of this hash, used or not (the page that opens it says which). */
export async function passwordLinkByHash(ex: Executor, hash: string): Promise<PasswordLinkRow | undefined> {
  return ex.selectFrom('admin_password_links').selectAll().where('token_hash', '=', hash).executeTakeFirst();
}

/** Marks the link used if it is unused and unexpired at `now`; its row, or undefined when it was not. */
export async function usePasswordLink(ex: Executor, hash: string, now: string): Promise<PasswordLinkRow | undefined> {
  return ex
    .updateTable('admin_password_links')
    .set({ used_at: now })
    .where('token_hash', '=', hash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
}

/** Ends the unused links of a user (a new link replaces them; a removed admin's stop working). */
export async function retirePasswordLinks(ex: Executor, teamId: string, userId: string, now: string): Promise<number> {
  const result = await ex.updateTable('admin_password_links').set({ used_at: now }).where('team_id', '=', teamId).where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Live tokens (access and refresh) `clientId` holds for `teamId`, and the users they were issued for. */
export async function clientGrantsOfTeam(ex: Executor, clientId: string, teamId: string, now: string): Promise<{ tokens: number; users: number }> {
  const row = await ex
    .selectFrom('oauth_tokens')
    .select((eb) => [eb.fn.countAll<number | string>().as('tokens'), eb.fn.count<number | string>('user_id').distinct().as('users')])
    .where('client_id', '=', clientId)
    .where('team_id', '=', teamId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  return { tokens: Number(row.tokens), users: Number(row.users) };
}

/**
 * Revokes every live token `clientId` holds for `teamId` (its other teams' keep working) and
 * pauses the team's subscriptions made with them; announces the client, so every instance drops
 * what it cached of it. Answers how many tokens it revoked.
 */
export async function revokeClientTokensOfTeam(ex: Executor, clientId: string, teamId: string, at: string): Promise<number> {
  const result = await ex.updateTable('oauth_tokens').set({ revoked_at: at }).where('client_id', '=', clientId).where('team_id', '=', teamId).where('revoked_at', 'is', null).executeTakeFirst();
  const revoked = Number(result.numUpdatedRows);
  if (revoked > 0) {
    await announceRevocation(ex, { kind: 'client', id: clientId });
    await ex
      .updateTable('event_subscriptions')
      .set({ state: 'paused', paused_reason: CREATOR_REVOKED, updated_at: at })
      .where('state', '=', 'active')
      .where('team_id', '=', teamId)
      .where('creator_token', 'in', (eb) => eb.selectFrom('oauth_tokens').select('hash').where('client_id', '=', clientId).where('team_id', '=', teamId))
      .execute();
  }
  return revoked;
}
