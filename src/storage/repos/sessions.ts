/**
 * Browser sessions, server-side: rows found by the SHA-256 of the session id
 * (the cookie's value is never stored). Deleting a row ends its session on every instance.
 */
import type { Executor, SessionsTable } from '../types.ts';

export type SessionRow = SessionsTable;

export async function insertSession(ex: Executor, row: SessionRow): Promise<void> {
  await ex.insertInto('sessions').values(row).execute();
}

export async function sessionByHash(ex: Executor, idHash: string): Promise<SessionRow | undefined> {
  return ex.selectFrom('sessions').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
}

export async function deleteSession(ex: Executor, idHash: string): Promise<void> {
  await ex.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
}

/** Ends every session of a user; returns how many there were. */
export async function deleteSessionsOfUser(ex: Executor, userId: string): Promise<number> {
  const result = await ex.deleteFrom('sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Forgets sessions that expired before `now` (they are refused anyway; this keeps the table small). */
export async function deleteExpiredSessions(ex: Executor, now: string): Promise<void> {
  await ex.deleteFrom('sessions').where('expires_at', '<', now).execute();
}
