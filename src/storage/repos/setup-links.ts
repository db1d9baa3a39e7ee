/**
 * One-time setup links (migration 028). Consuming a link and claiming its connection are each
 * one conditional UPDATE ... RETURNING: two clicks on one link, or two wizards in one session,
 * cannot both pass. Lookups are by SHA-256 only.
 */
import type { Executor, SetupLinksTable } from '../types.ts';

export type SetupLinkRow = SetupLinksTable;

export async function insertSetupLink(ex: Executor, row: SetupLinkRow): Promise<void> {
  await ex.insertInto('setup_links').values(row).execute();
}

/** The link with this hash, whatever its state (to say why it is refused). */
export async function setupLinkByHash(ex: Executor, linkHash: string): Promise<SetupLinkRow | undefined> {
  return ex.selectFrom('setup_links').selectAll().where('link_hash', '=', linkHash).executeTakeFirst();
}

/** A team's link by id. */
export async function setupLinkById(ex: Executor, teamId: string, id: string): Promise<SetupLinkRow | undefined> {
  return ex.selectFrom('setup_links').selectAll().where('team_id', '=', teamId).where('id', '=', id).executeTakeFirst();
}

/** A team's newest links, `limit` at most. */
export async function listSetupLinks(ex: Executor, teamId: string, limit: number): Promise<SetupLinkRow[]> {
  return ex.selectFrom('setup_links').selectAll().where('team_id', '=', teamId).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/**
 * Uses the link with this hash if it is unused, unrevoked and unexpired at `at`: it opens a
 * session (its secret's hash, its expiry). Undefined when the link cannot be used (any reason).
 */
export async function consumeSetupLink(ex: Executor, linkHash: string, at: string, session: { hash: string; expiresAt: string }): Promise<SetupLinkRow | undefined> {
  return ex
    .updateTable('setup_links')
    .set({ used_at: at, session_hash: session.hash, session_expires_at: session.expiresAt })
    .where('link_hash', '=', linkHash)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', at)
    .returningAll()
    .executeTakeFirst();
}

/** The link whose session has this hash, if the session is live at `at`. */
export async function setupSession(ex: Executor, sessionHash: string, at: string): Promise<SetupLinkRow | undefined> {
  return ex
    .selectFrom('setup_links')
    .selectAll()
    .where('session_hash', '=', sessionHash)
    .where('revoked_at', 'is', null)
    .where('session_expires_at', '>', at)
    .executeTakeFirst();
}

/** Records the connection made through the link's session; false when one is recorded already. */
export async function claimSetupConnection(ex: Executor, id: string, connectionId: string): Promise<boolean> {
  const result = await ex.updateTable('setup_links').set({ connection_id: connectionId }).where('id', '=', id).where('connection_id', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Revokes a team's link (unused or in use: its session ends too); false when it is unknown or revoked already. */
export async function revokeSetupLink(ex: Executor, teamId: string, id: string, at: string): Promise<boolean> {
  const result = await ex.updateTable('setup_links').set({ revoked_at: at }).where('team_id', '=', teamId).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** How a link records the admin who made it (`created_by`). */
export const setupLinkCreator = (userId: string): string => `console:${userId}`;

/**
 * Revokes the links `userId` made that could still act at `at`: unused and unexpired, or with a
 * session still open. Links used up or expired stay as they were. Answers how many were revoked.
 */
export async function revokeSetupLinksOfCreator(ex: Executor, teamId: string, userId: string, at: string): Promise<number> {
  const result = await ex
    .updateTable('setup_links')
    .set({ revoked_at: at })
    .where('team_id', '=', teamId)
    .where('created_by', '=', setupLinkCreator(userId))
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb.and([eb('used_at', 'is', null), eb('expires_at', '>', at)]), eb('session_expires_at', '>', at)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The recipients of some of a team's links by id (the audit log names a link by whom it was sent to). */
export async function setupLinkRecipients(ex: Executor, teamId: string, ids: readonly string[]): Promise<{ id: string; recipient: string }[]> {
  if (ids.length === 0) return [];
  return ex.selectFrom('setup_links').select(['id', 'recipient']).where('team_id', '=', teamId).where('id', 'in', [...ids]).execute();
}
