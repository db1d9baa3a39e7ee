/**
 * Browser sessions (DESIGN.md section 9): kept server-side, so that a password
 * change, a deactivation, losing `admin` or a sign-out ends a session at once on every instance
 * (the database is shared; nothing lives in process memory). The cookie carries only a random
 * 256-bit session id; the table keeps its SHA-256, the user, and a digest of the password hash
 * the session was opened with (a changed password ends it even if a caller forgot to delete the
 * rows). Generic over cookies: `kind` names the cookie (the authorization pages use `oauth`, the
 * console `console`), and nothing here knows a path. It owns no HTTP and no SQL.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from './clock.ts';
import { sha256 } from './ids.ts';
import { maySignIn } from './oauth/accounts.ts';
import { deleteExpiredSessions, deleteSession, deleteSessionsOfUser, insertSession, sessionByHash } from './storage/repos/sessions.ts';
import { teamById } from './storage/repos/teams.ts';
import type { TeamRow } from './storage/repos/teams.ts';
import { userById } from './storage/repos/users.ts';
import type { UserRow } from './storage/repos/users.ts';
import type { Executor } from './storage/types.ts';

/** A session lasts 30 minutes from sign-in, whatever the browser does with the cookie. */
export const SESSION_TTL_SECONDS = 30 * 60;

export interface SessionContext {
  readonly storage: { readonly db: Executor };
  readonly clock: Clock;
}

/** Who a session is opened for: the user, and the password hash it binds to. */
export type SessionUser = Pick<UserRow, 'id' | 'team_id' | 'password_hash'>;

/** The user of a live session and their team. */
export interface SignedIn {
  readonly user: UserRow;
  readonly team: TeamRow;
}

/** What binds a session to the credential it was opened with. */
const credentialOf = (user: Pick<UserRow, 'password_hash'>): string => sha256(`session-credential:${user.password_hash ?? ''}`);

/** Session ids are 256 random bits, base64url (43 characters). */
const ID_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** Opens a session for `user` (for `ttlSeconds`, 30 minutes unless told); returns the id to put in the cookie (shown only now). */
export async function openSession(ctx: SessionContext, kind: string, user: SessionUser, ttlSeconds = SESSION_TTL_SECONDS): Promise<string> {
  const id = randomBytes(32).toString('base64url');
  const now = ctx.clock.now();
  await deleteExpiredSessions(ctx.storage.db, now.toISOString());
  await insertSession(ctx.storage.db, {
    id_hash: sha256(id),
    kind,
    user_id: user.id,
    team_id: user.team_id,
    credential: credentialOf(user),
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + ttlSeconds * 1000).toISOString(),
  });
  return id;
}

/**
 * The user of a live session of `kind`: the row exists and has not expired, the user may still
 * sign in (active admin with a password) and still has the password the session began with.
 */
export async function resumeSession(ctx: SessionContext, kind: string, id: string): Promise<UserRow | undefined> {
  if (!ID_SHAPE.test(id)) return undefined;
  const row = await sessionByHash(ctx.storage.db, sha256(id));
  if (!row || row.kind !== kind || row.expires_at <= ctx.clock.now().toISOString()) return undefined;
  const user = await userById(ctx.storage.db, row.team_id, row.user_id);
  if (!user || !maySignIn(user) || credentialOf(user) !== row.credential) return undefined;
  return user;
}

/** The user and team of a live session of `kind` (see resumeSession). */
export async function resumeSignedIn(ctx: SessionContext, kind: string, id: string): Promise<SignedIn | undefined> {
  const user = await resumeSession(ctx, kind, id);
  const team = user ? await teamById(ctx.storage.db, user.team_id) : undefined;
  return user && team ? { user, team } : undefined;
}

/** Ends one session (sign-out): a copy of its cookie is worthless from now on. */
export async function endSession(ctx: SessionContext, id: string): Promise<void> {
  if (ID_SHAPE.test(id)) await deleteSession(ctx.storage.db, sha256(id));
}

/** Ends every session of a user, in the caller's transaction (password, deactivation, userType). */
export const endSessionsOfUser = (ex: Executor, userId: string): Promise<number> => deleteSessionsOfUser(ex, userId);
