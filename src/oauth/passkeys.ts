/**
 * Passkeys (WebAuthn Level 3) for the admins who sign in, through @simplewebauthn/server: an admin
 * registers one on the console's Security page, and then signs in with it, as the first factor
 * (a discoverable credential: no user name typed) or as the second after the password. User
 * verification is required, so a passkey alone is two factors and satisfies a team's requirement.
 *
 * Each ceremony's challenge is made here, stored by digest for one purpose (and one user when
 * known), lives CHALLENGE_SECONDS and is consumed by the verification that follows, whatever its
 * outcome; the pages keep the challenge in a signed HttpOnly cookie of the browser that asked, so
 * a challenge serves only that browser once. The relying party is the site's public base URL: its
 * host is the RP ID, its origin the only origin accepted. It owns no HTTP and no SQL.
 */
import { generateAuthenticationOptions, generateRegistrationOptions, verifyAuthenticationResponse, verifyRegistrationResponse } from '@simplewebauthn/server';
import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { recordEvent } from '../audit/events.ts';
import { newId, sha256 } from '../ids.ts';
import { consumeChallenge, deletePasskey, insertChallenge, insertPasskey, passkeyByCredential, passkeysOf, touchPasskey } from '../storage/repos/factors.ts';
import type { PasskeyRow } from '../storage/repos/factors.ts';
import { userById } from '../storage/repos/users.ts';
import type { UserRow } from '../storage/repos/users.ts';
import { maySignIn } from './accounts.ts';
import { assertNotLast, FactorError, otherFactors } from './factors.ts';
import type { FactorChange, FactorContext } from './factors.ts';

/** How long a ceremony's challenge may wait for its answer. */
export const CHALLENGE_SECONDS = 300;
const NAME_MAX = 64;

/** Who the credentials are for: the RP ID is the public base URL's host, the origin its origin. */
export interface RelyingParty {
  readonly id: string;
  readonly origin: string;
  readonly name: string;
}

export const relyingPartyOf = (baseUrl: string): RelyingParty => {
  const url = new URL(baseUrl);
  return { id: url.hostname, origin: url.origin, name: 'Rollcall' };
};

/** A ceremony's options for the browser, and its challenge (for the cookie that binds it). */
export interface Ceremony<T> {
  readonly options: T;
  readonly challenge: string;
}

const transportsOf = (row: Pick<PasskeyRow, 'transports'>): string[] | undefined => (row.transports ? (JSON.parse(row.transports) as string[]) : undefined);
const credentialRef = (row: PasskeyRow) => ({ id: row.credential_id, ...(row.transports ? { transports: transportsOf(row)! } : {}) });

async function remember(ctx: FactorContext, challenge: string, purpose: 'register' | 'sign_in', userId: string | null): Promise<void> {
  const now = ctx.clock.now();
  await insertChallenge(ctx.storage.db, { challenge_hash: sha256(challenge), purpose, user_id: userId, expires_at: new Date(now.getTime() + CHALLENGE_SECONDS * 1000).toISOString() }, now.toISOString());
}

/** Options for registering a passkey of `user` (a discoverable credential, user verification required). */
export async function registrationOptions(ctx: FactorContext, rp: RelyingParty, user: Pick<UserRow, 'id' | 'user_name' | 'display_name'>): Promise<Ceremony<PublicKeyCredentialCreationOptionsJSON>> {
  const existing = await passkeysOf(ctx.storage.db, user.id);
  const options = await generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.user_name,
    userID: new TextEncoder().encode(user.id),
    userDisplayName: user.display_name ?? user.user_name,
    attestationType: 'none',
    // EdDSA, ES256, RS256 (COSE): what authenticators make; named so no newer algorithm is probed in the runtime.
    supportedAlgorithmIDs: [-8, -7, -257],
    excludeCredentials: existing.map(credentialRef),
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    timeout: CHALLENGE_SECONDS * 1000,
  });
  await remember(ctx, options.challenge, 'register', user.id);
  return { options, challenge: options.challenge };
}

function parseResponse<T>(text: string): T {
  try {
    const value = JSON.parse(text) as unknown;
    if (value !== null && typeof value === 'object' && typeof (value as { id?: unknown }).id === 'string' && typeof (value as { response?: unknown }).response === 'object') return value as T;
  } catch {
    // Not JSON: refused below like any other malformed answer.
  }
  throw new FactorError(400, 'The browser’s answer could not be read. Try again.');
}

const NOT_ACCEPTED = 'The passkey was not accepted. Try again, or use your password.';

/** Verifies the browser's answer to `challenge` and keeps the new passkey; audited. */
export async function registerPasskey(ctx: FactorContext, rp: RelyingParty, change: FactorChange, input: { challenge: string; response: string; name: string }): Promise<{ id: string; name: string }> {
  const name = input.name.trim() || 'Passkey';
  if (name.length > NAME_MAX) throw new FactorError(400, `A passkey's name has at most ${NAME_MAX} characters.`);
  const response = parseResponse<RegistrationResponseJSON>(input.response);
  const challenge = await consumeChallenge(ctx.storage.db, sha256(input.challenge), 'register', ctx.clock.now().toISOString());
  if (!challenge || challenge.user_id !== change.user.id) throw new FactorError(400, 'This passkey request has expired or was used already. Try again.');
  let verified;
  try {
    verified = await verifyRegistrationResponse({ response, expectedChallenge: input.challenge, expectedOrigin: rp.origin, expectedRPID: rp.id, requireUserVerification: true });
  } catch {
    throw new FactorError(400, 'The passkey could not be registered: the browser’s answer did not verify.');
  }
  if (!verified.verified) throw new FactorError(400, 'The passkey could not be registered: the browser’s answer did not verify.');
  const credential = verified.registrationInfo.credential;
  const id = newId();
  await ctx.storage.db.transaction().execute(async (trx) => {
    if (await passkeyByCredential(trx, credential.id)) throw new FactorError(409, 'This passkey is registered already.');
    await insertPasskey(trx, {
      id,
      team_id: change.user.team_id,
      user_id: change.user.id,
      credential_id: credential.id,
      public_key: Buffer.from(credential.publicKey).toString('base64url'),
      counter: credential.counter,
      transports: credential.transports && credential.transports.length > 0 ? JSON.stringify(credential.transports) : null,
      name,
      created_at: ctx.clock.now().toISOString(),
      last_used_at: null,
    });
    await recordEvent(trx, ctx.clock, { teamId: change.user.team_id, actor: change.actor, requestId: change.requestId, action: 'passkey_added', resourceType: 'User', resourceId: change.user.id, detail: { passkey: id, name } });
  });
  return { id, name };
}

/** Removes one of the admin's passkeys (not their last factor while the team requires one); audited. */
export async function removePasskey(ctx: FactorContext, change: FactorChange, id: string): Promise<void> {
  await assertNotLast(ctx.storage.db, change.user, await otherFactors(ctx.storage.db, change.user.id, { passkey: id }));
  await ctx.storage.db.transaction().execute(async (trx) => {
    const removed = await deletePasskey(trx, change.user.id, id);
    if (!removed) throw new FactorError(404, 'There is no such passkey.');
    await recordEvent(trx, ctx.clock, { teamId: change.user.team_id, actor: change.actor, requestId: change.requestId, action: 'passkey_removed', resourceType: 'User', resourceId: change.user.id, detail: { passkey: id, name: removed.name } });
  });
}

/**
 * Options for signing in with a passkey: for `user` (the second step after their password: only
 * their passkeys), or for whoever holds one (no user: the browser offers its discoverable ones).
 */
export async function signInOptions(ctx: FactorContext, rp: RelyingParty, user?: Pick<UserRow, 'id'>): Promise<Ceremony<PublicKeyCredentialRequestOptionsJSON>> {
  const allow = user ? (await passkeysOf(ctx.storage.db, user.id)).map(credentialRef) : [];
  const options = await generateAuthenticationOptions({ rpID: rp.id, userVerification: 'required', timeout: CHALLENGE_SECONDS * 1000, ...(user ? { allowCredentials: allow } : {}) });
  await remember(ctx, options.challenge, 'sign_in', user?.id ?? null);
  return { options, challenge: options.challenge };
}

export interface PasskeySignIn {
  readonly challenge: string;
  readonly response: string;
  readonly requestId: string | null;
  readonly clientId: string | null;
  /** A client registered for one team: only that team's admins. */
  readonly clientTeamId?: string | null;
}

/**
 * The admin who answered `challenge` with one of their passkeys (the challenge's user, when it
 * named one), or a FactorError (401). The signature counter is kept; the sign-in is audited.
 */
export async function passkeySignIn(ctx: FactorContext, rp: RelyingParty, input: PasskeySignIn): Promise<UserRow> {
  const response = parseResponse<AuthenticationResponseJSON>(input.response);
  const ex = ctx.storage.db;
  const challenge = await consumeChallenge(ex, sha256(input.challenge), 'sign_in', ctx.clock.now().toISOString());
  if (!challenge) throw new FactorError(401, 'This passkey request has expired or was used already. Try again.');
  const passkey = await passkeyByCredential(ex, response.id);
  const user = passkey ? await userById(ex, passkey.team_id, passkey.user_id) : undefined;
  const bound = input.clientTeamId ?? null;
  if (!passkey || !user || !maySignIn(user) || (challenge.user_id !== null && challenge.user_id !== user.id) || (bound !== null && bound !== user.team_id)) {
    throw new FactorError(401, NOT_ACCEPTED);
  }
  let verified;
  try {
    verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: input.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: { id: passkey.credential_id, publicKey: Buffer.from(passkey.public_key, 'base64url'), counter: Number(passkey.counter), ...(passkey.transports ? { transports: transportsOf(passkey)! } : {}) },
      requireUserVerification: true,
    });
  } catch {
    verified = { verified: false as const };
  }
  const actor = { via: 'oauth' as const, clientId: input.clientId, userId: user.id };
  if (!verified.verified) {
    await recordEvent(ex, ctx.clock, { teamId: user.team_id, actor, requestId: input.requestId, action: 'second_factor_failed', resourceType: 'User', resourceId: user.id, detail: { method: 'passkey', passkey: passkey.id } });
    throw new FactorError(401, NOT_ACCEPTED);
  }
  await ctx.storage.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now().toISOString();
    await touchPasskey(trx, passkey.id, verified.authenticationInfo.newCounter, now);
    await recordEvent(trx, ctx.clock, { teamId: user.team_id, actor, requestId: input.requestId, action: 'sign_in', resourceType: 'User', resourceId: user.id, detail: { method: 'passkey', passkey: passkey.id } });
  });
  return user;
}
