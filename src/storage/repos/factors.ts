/**
 * The admins' second factors (migration 029): passkeys, authenticator-app secrets, recovery
 * codes, the WebAuthn ceremonies' challenges, and the team's requirement. One-time artifacts
 * (a challenge, a recovery code, a TOTP time step) are consumed by one conditional statement,
 * never read and then written. No rule lives here: src/oauth/factors.ts decides.
 */
import { announceRevocation } from '../revocations.ts';
import type { Executor, PasskeysTable, RecoveryCodesTable, TotpFactorsTable, WebauthnChallengesTable } from '../types.ts';

export type PasskeyRow = PasskeysTable;
export type TotpRow = TotpFactorsTable;

/** The user's passkeys, oldest first. */
export const passkeysOf = (ex: Executor, userId: string): Promise<PasskeyRow[]> =>
  ex.selectFrom('passkeys').selectAll().where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();

/** The passkey with this credential id, whoever holds it. */
export const passkeyByCredential = (ex: Executor, credentialId: string): Promise<PasskeyRow | undefined> =>
  ex.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();

export async function insertPasskey(ex: Executor, row: PasskeyRow): Promise<void> {
  await ex.insertInto('passkeys').values(row).execute();
}

/** Deletes one passkey of the user; whether there was one. */
export async function deletePasskey(ex: Executor, userId: string, id: string): Promise<PasskeyRow | undefined> {
  return ex.deleteFrom('passkeys').where('user_id', '=', userId).where('id', '=', id).returningAll().executeTakeFirst();
}

/** Records a sign-in with a passkey: its new signature counter and when. */
export async function touchPasskey(ex: Executor, id: string, counter: number, at: string): Promise<void> {
  await ex.updateTable('passkeys').set({ counter, last_used_at: at }).where('id', '=', id).execute();
}

export const totpOf = (ex: Executor, userId: string): Promise<TotpRow | undefined> =>
  ex.selectFrom('totp_factors').selectAll().where('user_id', '=', userId).executeTakeFirst();

/** Stores a new, unconfirmed secret for the user, replacing any earlier one. */
export async function putTotp(ex: Executor, row: TotpRow): Promise<void> {
  await ex.deleteFrom('totp_factors').where('user_id', '=', row.user_id).execute();
  await ex.insertInto('totp_factors').values(row).execute();
}

export async function deleteTotp(ex: Executor, userId: string): Promise<boolean> {
  const result = await ex.deleteFrom('totp_factors').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Accepts time step `step` for the user's secret if no code of that step or a later one was
 * accepted before (confirming the secret when `confirmAt` is given): whether it was accepted.
 */
export async function consumeTotpStep(ex: Executor, userId: string, step: number, confirmAt?: string): Promise<boolean> {
  let update = ex
    .updateTable('totp_factors')
    .set({ last_step: step, ...(confirmAt !== undefined ? { confirmed_at: confirmAt } : {}) })
    .where('user_id', '=', userId)
    .where((w) => w.or([w('last_step', 'is', null), w('last_step', '<', step)]));
  update = confirmAt !== undefined ? update.where('confirmed_at', 'is', null) : update.where('confirmed_at', 'is not', null);
  const result = await update.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Replaces the user's recovery codes with these digests. */
export async function replaceRecoveryCodes(ex: Executor, rows: readonly RecoveryCodesTable[], userId: string): Promise<void> {
  await ex.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
  if (rows.length > 0) await ex.insertInto('recovery_codes').values([...rows]).execute();
}

/** Spends the recovery code with this digest, if the user holds it unused: whether it was spent. */
export async function consumeRecoveryCode(ex: Executor, userId: string, codeHash: string, at: string): Promise<boolean> {
  const result = await ex.updateTable('recovery_codes').set({ used_at: at }).where('user_id', '=', userId).where('code_hash', '=', codeHash).where('used_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The user's unused recovery codes. */
export async function recoveryCodesLeft(ex: Executor, userId: string): Promise<number> {
  const row = await ex.selectFrom('recovery_codes').select((s) => s.fn.countAll<number | string>().as('n')).where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Whether the user has a second factor: a passkey or a confirmed authenticator app. */
export async function hasSecondFactor(ex: Executor, userId: string): Promise<boolean> {
  const passkey = await ex.selectFrom('passkeys').select('id').where('user_id', '=', userId).limit(1).executeTakeFirst();
  if (passkey) return true;
  const totp = await ex.selectFrom('totp_factors').select('user_id').where('user_id', '=', userId).where('confirmed_at', 'is not', null).executeTakeFirst();
  return totp !== undefined;
}

export async function insertChallenge(ex: Executor, row: WebauthnChallengesTable, now: string): Promise<void> {
  await ex.deleteFrom('webauthn_challenges').where('expires_at', '<', now).execute();
  await ex.insertInto('webauthn_challenges').values(row).execute();
}

/** Takes the challenge with this digest, if it is live and for `purpose` (it is gone either way). */
export async function consumeChallenge(ex: Executor, challengeHash: string, purpose: WebauthnChallengesTable['purpose'], now: string): Promise<WebauthnChallengesTable | undefined> {
  const row = await ex.deleteFrom('webauthn_challenges').where('challenge_hash', '=', challengeHash).returningAll().executeTakeFirst();
  return row && row.purpose === purpose && row.expires_at > now ? row : undefined;
}

/** The team's requirement of a second factor for its admins, announced so that every bearer cache drops the old row. */
export async function setRequireSecondFactor(ex: Executor, teamId: string, required: boolean): Promise<void> {
  await ex.updateTable('teams').set({ require_second_factor: required ? 1 : 0 }).where('id', '=', teamId).execute();
  await announceRevocation(ex, { kind: 'team', id: teamId });
}
