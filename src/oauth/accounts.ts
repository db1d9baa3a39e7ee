/**
 * Who may sign in (DESIGN.md section 5): an active user with userType `admin` and a password.
 * Sign-in names are per team: the same userName may sign in to several teams,
 * and no answer reveals whether another team holds a name.
 *
 * - A client bound to a team, or a team the caller names (`team`), decides the team: exactly one
 *   password verification, against that team's account or a decoy; no other team is read, and
 *   nothing is recorded in another team's audit trail.
 * - Otherwise the password is verified against each account of that name, oldest first, at
 *   most LOGIN_CANDIDATES of them, padded with decoy verifications to exactly LOGIN_CANDIDATES,
 *   so the time taken does not tell how many teams hold the name. One match signs that user in;
 *   several ask the caller to choose among the teams whose password it just proved.
 * - An unknown user, a wrong password, a deactivated or non-admin user, a stored password shorter
 *   than 12 characters all get the same answer after the same work (RFC 6749 4.3.2, RFC 9700
 *   2.4); failures are recorded in the candidates' teams.
 * - Failures are counted per pair (account, source address) and per account (limits.ts); the
 *   attempt is reserved before any password is verified, so parallel guesses cannot outrun the
 *   count, and a name or password longer than any real one is refused before anything is
 *   counted, looked up or hashed. The account is the name within the team the sign-in is
 *   confined to, so guesses through one team's client never count against another team's name.
 */
import { hasSecondFactor } from '../storage/repos/factors.ts';
import { recordEvent } from '../audit/events.ts';
import type { Clock } from '../clock.ts';
import { teamById, teamByName } from '../storage/repos/teams.ts';
import { loginCandidates } from '../storage/repos/users.ts';
import type { UserRow } from '../storage/repos/users.ts';
import type { Executor } from '../storage/types.ts';
import { invalidGrant, OAuthError } from './errors.ts';
import type { Limits } from './limits.ts';
import { AddressBusy, HashingBusy, signInPasswordProblem, SIGN_IN_PASSWORD_MAX } from './passwords.ts';
import type { HashingLane, PasswordHasher } from './passwords.ts';

/** A hash of a random password nobody knows: verified in place of a missing account, to take equal time. */
const DECOY_HASH = 'scrypt$131072$8$1$OgYuCi4gTR1gR6sOjNGqEQ$fEbLVReKEy47wZ73hdJWxy6EHmmID1fApe16FX77N2I';

/** Password verifications of a sign-in that names no team: the accounts of one name checked, and the padding. */
export const LOGIN_CANDIDATES = 3;

/** Rows read to find the candidates (non-admins are skipped before any hashing). */
const ROWS_READ = 50;

export const WRONG_CREDENTIALS = 'The user name or password is incorrect';

/** Whether a user of this userType signs in (and so needs a sign-in password, passwords.ts). */
export const signsIn = (user: Pick<UserRow, 'user_type'>): boolean => (user.user_type ?? '').toLowerCase() === 'admin';

/** Whether `user` may still act through a token: active and an admin. */
export const maySignIn = (user: Pick<UserRow, 'active' | 'user_type' | 'password_hash'>): boolean =>
  user.active === 1 && signsIn(user) && user.password_hash !== null;

export interface SignInContext {
  readonly storage: { readonly db: Executor };
  readonly clock: Clock;
  readonly limits: Limits;
  readonly passwords: PasswordHasher;
}

/**
 * The sign-in's verifications as one unit of the app's hasher: an
 * unauthenticated sign-in in the anonymous share, one at a time per address; a signed-in
 * administrator's check in the team's share. No room is 429 with Retry-After.
 */
async function verifyQueued(ctx: SignInContext, meta: SignInMeta, password: string, encoded: readonly string[]): Promise<boolean[]> {
  const lane: HashingLane = meta.signedInTeamId !== undefined ? { team: meta.signedInTeamId } : { address: meta.address };
  try {
    return await ctx.passwords.verify(lane, password, encoded);
  } catch (error) {
    if (error instanceof HashingBusy) {
      // A busy server is not the caller's fault; a second sign-in racing its first from one address is.
      const counts = error instanceof AddressBusy;
      throw new OAuthError('slow_down', error.message, 429, { 'retry-after': String(error.retryAfterSeconds) }, counts);
    }
    throw error;
  }
}

export interface SignInMeta {
  readonly clientId: string | null;
  readonly requestId: string | null;
  readonly method: 'password_grant' | 'form';
  /** The source address (request.ip), half of the failure counter's key. */
  readonly address: string;
  /** The team of a client bound to one: only that team's accounts are considered. */
  readonly clientTeamId?: string | null;
  /** A team the caller names (the form's team choice, the password grant's `team`): by name. */
  readonly teamName?: string;
  /** A signed-in administrator proving their password again: the team's work, not an anonymous sign-in. */
  readonly signedInTeamId?: string;
}

export type SignInResult =
  | { readonly kind: 'user'; readonly user: UserRow }
  /** The password is right in several teams: the caller chooses (only these teams, which it proved). */
  | { readonly kind: 'choose'; readonly teams: readonly string[] };

/** Which team the sign-in is confined to: null for any, 'none' when the request rules every account out. */
async function scopeOf(ex: Executor, meta: SignInMeta): Promise<string | null | 'none'> {
  const bound = meta.clientTeamId ?? null;
  if (meta.teamName === undefined || meta.teamName === '') return bound;
  const named = meta.teamName.length <= 64 ? await teamByName(ex, meta.teamName.trim()) : undefined;
  if (!named || (bound !== null && named.id !== bound)) return 'none';
  return named.id;
}

/** Longer than any userName that may sign in (and than the limiter's keys need to see). */
export const MAX_LOGIN_NAME = 256;
/** Longer than any sign-in password (1,024 code points, up to two UTF-16 units each): refused without hashing megabytes. */
const MAX_PASSWORD = 2 * SIGN_IN_PASSWORD_MAX;

/**
 * The user behind `username` / `password` (or the teams to choose from), or invalid_grant; 429
 * while the account is locked out.
 */
export async function signIn(ctx: SignInContext, username: string, password: string, meta: SignInMeta): Promise<SignInResult> {
  const { limits } = ctx;
  const ex = ctx.storage.db;
  const key = username.trim().toLowerCase();
  if (key.length === 0 || key.length > MAX_LOGIN_NAME || password.length > MAX_PASSWORD) throw invalidGrant(WRONG_CREDENTIALS);
  const scope = await scopeOf(ex, meta);
  // The limiter's account is the name within the team the sign-in is confined to.
  const attempt = await limits.reserveSignIn(scope === null ? key : `${scope}\u0000${key}`, meta.address);
  const verifications = scope === null ? LOGIN_CANDIDATES : 1;
  let candidates: UserRow[] = [];
  const matched: UserRow[] = [];
  try {
    const rows = scope !== 'none' ? await loginCandidates(ex, key, scope, ROWS_READ) : [];
    candidates = rows.filter(maySignIn).slice(0, verifications);
    // Every verification is made, the missing ones against the decoy, in one unit of the hasher.
    const hashes = Array.from({ length: verifications }, (_, i) => candidates[i]?.password_hash ?? DECOY_HASH);
    const results = await verifyQueued(ctx, meta, password, hashes);
    candidates.forEach((candidate, i) => {
      // A stored password that is too short to sign in is refused like a wrong one, after the work.
      if (results[i] === true && signInPasswordProblem(password) === undefined) matched.push(candidate);
    });
  } catch (error) {
    // Not checked (no room in the hasher, a database error): the attempt is given back.
    await attempt.abandoned();
    throw error;
  }
  const record = (u: UserRow, action: 'sign_in' | 'sign_in_failed') =>
    recordEvent(ex, ctx.clock, {
      teamId: u.team_id,
      actor: { via: 'oauth', clientId: meta.clientId, userId: u.id },
      requestId: meta.requestId,
      action,
      resourceType: 'User',
      resourceId: u.id,
      detail: { method: meta.method },
    });
  if (matched.length === 0) {
    await attempt.failed();
    for (const candidate of candidates) await record(candidate, 'sign_in_failed');
    throw invalidGrant(WRONG_CREDENTIALS);
  }
  await attempt.succeeded();
  if (matched.length > 1) {
    const teams = await Promise.all(matched.map((u) => teamById(ex, u.team_id)));
    return { kind: 'choose', teams: teams.flatMap((t) => (t ? [t.name] : [])) };
  }
  const user = matched[0]!;
  // An admin with a second factor has not signed in yet: passing the factor completes the sign-in
  // and writes its row (factors.ts passCode, passkeys.ts passkeySignIn); a failed one is audited there.
  if (!(await hasSecondFactor(ex, user.id))) await record(user, 'sign_in');
  return { kind: 'user', user };
}
