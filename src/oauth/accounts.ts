/**
 * Who may sign in (DESIGN.md section 5): an active user with userType `admin` and a password.
 * An unknown user, a wrong password, a deactivated or non-admin user all get the same answer
 * after the same work (a password hash is always verified), so the answer reveals nothing, and
 * failures are counted per pair (account, source address) and per account (RFC 6749 4.3.2,
 * RFC 9700 2.4; limits.ts). The attempt is reserved before the password is verified, so parallel
 * guesses cannot outrun the count; a name longer than any login name is refused before anything
 * is counted, looked up or hashed.
 */
import { recordEvent } from '../audit/events.ts';
import type { Clock } from '../clock.ts';
import { loginUserByNameKey } from '../storage/repos/users.ts';
import type { UserRow } from '../storage/repos/users.ts';
import type { Statements } from '../storage/statements.ts';
import type { Executor } from '../storage/types.ts';
import { invalidGrant } from './errors.ts';
import type { Limits } from './limits.ts';
import { verifyPassword } from './passwords.ts';

/** A hash of a random password nobody knows: verified when the user is unknown, to take equal time. */
const DECOY_HASH = 'scrypt$131072$8$1$OgYuCi4gTR1gR6sOjNGqEQ$fEbLVReKEy47wZ73hdJWxy6EHmmID1fApe16FX77N2I';

export const WRONG_CREDENTIALS = 'The user name or password is incorrect';

/** Whether `user` may still act through a token: active and an admin. */
export const maySignIn = (user: Pick<UserRow, 'active' | 'user_type' | 'password_hash'>): boolean =>
  user.active === 1 && (user.user_type ?? '').toLowerCase() === 'admin' && user.password_hash !== null;

export interface SignInContext {
  readonly storage: { readonly db: Executor; readonly statements: Statements };
  readonly clock: Clock;
  readonly limits: Limits;
}

export interface SignInMeta {
  readonly clientId: string | null;
  readonly requestId: string | null;
  readonly method: 'password_grant' | 'form';
  /** The source address (request.ip), half of the failure counter's key. */
  readonly address: string;
}

/** Longer than any userName that may sign in (and than the limiter's keys need to see). */
export const MAX_LOGIN_NAME = 256;
/** Longer than any real password: refused without hashing megabytes. */
const MAX_PASSWORD = 1024;

/**
 * The user behind `username` / `password`, or invalid_grant; 429 while the account is locked
 * out. Sign-ins of existing users, good or bad, are audit events of their team.
 */
export async function signIn(ctx: SignInContext, username: string, password: string, meta: SignInMeta): Promise<UserRow> {
  const { limits } = ctx;
  const ex = ctx.storage.db;
  const key = username.trim().toLowerCase();
  if (key.length === 0 || key.length > MAX_LOGIN_NAME || password.length > MAX_PASSWORD) throw invalidGrant(WRONG_CREDENTIALS);
  const attempt = await limits.reserveSignIn(key, meta.address);
  const user = await loginUserByNameKey(ex, key);
  const ok = await verifyPassword(password, user?.password_hash ?? DECOY_HASH);
  const record = (u: UserRow, action: 'sign_in' | 'sign_in_failed') =>
    recordEvent(ex, ctx.storage.statements, ctx.clock, {
      teamId: u.team_id,
      actor: { via: 'oauth', clientId: meta.clientId, userId: u.id },
      requestId: meta.requestId,
      action,
      resourceType: 'User',
      resourceId: u.id,
      detail: { method: meta.method },
    });
  if (!user || !ok || !maySignIn(user)) {
    await attempt.failed();
    if (user) await record(user, 'sign_in_failed');
    throw invalidGrant(WRONG_CREDENTIALS);
  }
  await attempt.succeeded();
  await record(user, 'sign_in');
  return user;
}
