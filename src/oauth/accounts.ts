/**
 * Who may sign in (DESIGN.md section 5): an active user with userType `admin` and a password.
 * An unknown user, a wrong password, a deactivated or non-admin user all get the same answer
 * after the same work (a password hash is always verified), so the answer reveals nothing, and
 * failures are counted per account (RFC 6749 4.3.2, RFC 9700 2.4).
 */
import { recordEvent } from '../audit/events.ts';
import type { Clock } from '../clock.ts';
import { loginUserByNameKey } from '../storage/repos/users.ts';
import type { UserRow } from '../storage/repos/users.ts';
import type { Statements } from '../storage/statements.ts';
import type { Executor } from '../storage/types.ts';
import { invalidGrant, OAuthError } from './errors.ts';
import type { Limits } from './limits.ts';
import { HashingBusy } from './passwords.ts';
import type { PasswordHasher } from './passwords.ts';

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
  readonly passwords: PasswordHasher;
}

/** A verification through the app's bounded queue; a full queue is 429 with Retry-After (issue 13.4). */
async function verifyQueued(ctx: SignInContext, password: string, encoded: string): Promise<boolean> {
  try {
    return await ctx.passwords.verify(password, encoded);
  } catch (error) {
    if (error instanceof HashingBusy) {
      throw new OAuthError('slow_down', error.message, 429, { 'retry-after': String(error.retryAfterSeconds) });
    }
    throw error;
  }
}

export interface SignInMeta {
  readonly clientId: string | null;
  readonly requestId: string | null;
  readonly method: 'password_grant' | 'form';
}

/**
 * The user behind `username` / `password`, or invalid_grant; 429 while the account is locked
 * out. Sign-ins of existing users, good or bad, are audit events of their team.
 */
export async function signIn(ctx: SignInContext, username: string, password: string, meta: SignInMeta): Promise<UserRow> {
  const { limits } = ctx;
  const ex = ctx.storage.db;
  const key = username.trim().toLowerCase();
  await limits.assertNotBlocked('accountFailures', key);
  const user = key.length > 0 && key.length <= 256 ? await loginUserByNameKey(ex, key) : undefined;
  // Passwords longer than any real one are refused without hashing megabytes.
  const ok = password.length <= 1024 && (await verifyQueued(ctx, password, user?.password_hash ?? DECOY_HASH));
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
    await limits.failed('accountFailures', key);
    if (user) await record(user, 'sign_in_failed');
    throw invalidGrant(WRONG_CREDENTIALS);
  }
  await limits.succeeded('accountFailures', key);
  await record(user, 'sign_in');
  return user;
}
