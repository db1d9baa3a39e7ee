/**
 * Who may sign in (DESIGN.md section 5): an active user with userType `admin` and a password.
 * An unknown user, a wrong password, a deactivated or non-admin user all get the same answer
 * after the same work (a password hash is always verified), so the answer reveals nothing, and
 * failures are counted per account (RFC 6749 4.3.2, RFC 9700 2.4).
 */
import { loginUserByNameKey } from '../storage/repos/users.ts';
import type { UserRow } from '../storage/repos/users.ts';
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

/** The user behind `username` / `password`, or invalid_grant; 429 while the account is locked out. */
export async function signIn(ex: Executor, limits: Limits, username: string, password: string): Promise<UserRow> {
  const key = username.trim().toLowerCase();
  await limits.assertNotBlocked('accountFailures', key);
  const user = key.length > 0 && key.length <= 256 ? await loginUserByNameKey(ex, key) : undefined;
  // Passwords longer than any real one are refused without hashing megabytes.
  const ok = password.length <= 1024 && (await verifyPassword(password, user?.password_hash ?? DECOY_HASH));
  if (!user || !ok || !maySignIn(user)) {
    await limits.failed('accountFailures', key);
    throw invalidGrant(WRONG_CREDENTIALS);
  }
  await limits.succeeded('accountFailures', key);
  return user;
}
