/**
 * Second factors of the admins who sign in (issue 30 item 7): an authenticator app (TOTP,
 * RFC 6238 through totp.ts), passkeys (passkeys.ts), single-use recovery codes, and a team's
 * requirement that its admins have one. The rule every sign-in page follows (the console's and
 * the authorization pages'), after the password: an admin with a factor must pass it; an admin of
 * a team that requires one but has none is sent to set one up first (`secondFactorStep`).
 *
 * - The TOTP secret is sealed at rest (KeyStore.box, bound to the user); a code is accepted within
 *   ±1 step, and a step once accepted never again (one conditional UPDATE), so a code cannot be
 *   replayed. An unconfirmed secret is no factor until a code proves the app holds it.
 * - Recovery codes are shown once, stored as SHA-256 digests, each spent by one conditional UPDATE.
 * - Codes typed at sign-in are limited like passwords (limits.ts reserveSignIn, keyed by the
 *   user), so guessing is slowed the same way.
 * - Every change writes its audit row in its own transaction.
 * It owns no HTTP and no SQL (storage/repos/factors.ts).
 */
import { randomBytes, randomInt } from 'node:crypto';
import { recordEvent } from '../audit/events.ts';
import type { Actor, AuditAction } from '../audit/events.ts';
import type { Clock } from '../clock.ts';
import { sha256 } from '../ids.ts';
import type { SecretBox } from '../keys/sealed.ts';
import {
  consumeRecoveryCode,
  consumeTotpStep,
  deletePasskey,
  deleteTotp,
  hasSecondFactor,
  passkeysOf,
  putTotp,
  recoveryCodesLeft,
  replaceRecoveryCodes,
  setRequireSecondFactor,
  totpOf,
} from '../storage/repos/factors.ts';
import { deleteSessionsOfUser } from '../storage/repos/sessions.ts';
import { transact } from '../storage/statements.ts';
import { teamById } from '../storage/repos/teams.ts';
import type { TeamRow } from '../storage/repos/teams.ts';
import type { UserRow } from '../storage/repos/users.ts';
import type { Db, Executor } from '../storage/types.ts';
import type { Limits } from './limits.ts';
import { matchingSteps, otpauthUri, base32Encode } from './totp.ts';

/** The use the TOTP secrets' sealing key is derived for (KeyStore.box). */
export const TOTP_SECRETS = 'totp secrets';

export const RECOVERY_CODES = 10;

export interface FactorContext {
  readonly storage: { readonly db: Db };
  readonly clock: Clock;
  /** Seals the TOTP secrets (KeyStore.box(TOTP_SECRETS)). */
  readonly box: SecretBox;
  readonly limits: Limits;
}

/** Who changes a factor, for the audit row. */
export interface FactorChange {
  readonly user: Pick<UserRow, 'id' | 'team_id' | 'user_name'>;
  readonly actor: Actor;
  readonly requestId: string | null;
}

/** A request to change factors the rules refuse (the message is for the admin). */
export class FactorError extends Error {
  readonly status: 400 | 401 | 404 | 409;
  constructor(status: 400 | 401 | 404 | 409, message: string) {
    super(message);
    this.status = status;
  }
}

/** What the sign-in asks of an admin after the password. */
export type FactorStep = 'none' | 'verify' | 'enroll';

const requires = (team: Pick<TeamRow, 'require_second_factor'> | undefined): boolean => team?.require_second_factor === 1;

/** After the password: pass a factor (has one), set one up (the team requires one), or nothing more. */
export async function secondFactorStep(ex: Executor, user: Pick<UserRow, 'id' | 'team_id'>): Promise<FactorStep> {
  if (await hasSecondFactor(ex, user.id)) return 'verify';
  return requires(await teamById(ex, user.team_id)) ? 'enroll' : 'none';
}

/** Whether a signed-in admin must set up a factor before anything else (the team requires one; they have none). */
export async function mustEnroll(ex: Executor, team: Pick<TeamRow, 'require_second_factor'>, userId: string): Promise<boolean> {
  return requires(team) && !(await hasSecondFactor(ex, userId));
}

/** The factors an admin has: what the Security page lists and the sign-in's second step offers. */
export interface FactorsView {
  readonly passkeys: readonly { readonly id: string; readonly name: string; readonly createdAt: string; readonly lastUsedAt: string | null }[];
  /** 'pending': a secret was made but no code has confirmed it yet. */
  readonly totp: 'off' | 'pending' | 'on';
  readonly recoveryCodesLeft: number;
}

export async function factorsOf(ex: Executor, userId: string): Promise<FactorsView> {
  const [passkeys, totp, left] = await Promise.all([passkeysOf(ex, userId), totpOf(ex, userId), recoveryCodesLeft(ex, userId)]);
  return {
    passkeys: passkeys.map((p) => ({ id: p.id, name: p.name, createdAt: p.created_at, lastUsedAt: p.last_used_at })),
    totp: totp === undefined ? 'off' : totp.confirmed_at === null ? 'pending' : 'on',
    recoveryCodesLeft: left,
  };
}

const sealContext = (userId: string): string => `totp:${userId}`;

const audit = (ex: Executor, clock: Clock, change: FactorChange, action: AuditAction, detail: Record<string, unknown> = {}) =>
  recordEvent(ex, clock, { teamId: change.user.team_id, actor: change.actor, requestId: change.requestId, action, resourceType: 'User', resourceId: change.user.id, detail });

/** Starts setting up an authenticator app: a new secret, unconfirmed (replacing an unconfirmed one). */
export async function beginTotp(ctx: FactorContext, user: Pick<UserRow, 'id' | 'team_id'>): Promise<void> {
  const existing = await totpOf(ctx.storage.db, user.id);
  if (existing?.confirmed_at) throw new FactorError(409, 'An authenticator app is set up already; remove it before setting up another.');
  const secret = randomBytes(20);
  await putTotp(ctx.storage.db, { user_id: user.id, team_id: user.team_id, secret: ctx.box.seal(sealContext(user.id), secret), created_at: ctx.clock.now().toISOString(), confirmed_at: null, last_step: null });
}

/** The unconfirmed secret's text and otpauth:// URI, for the admin to give their app; undefined when none waits. */
export async function pendingTotp(ctx: FactorContext, user: Pick<UserRow, 'id' | 'user_name'>, issuer: string): Promise<{ secret: string; uri: string } | undefined> {
  const row = await totpOf(ctx.storage.db, user.id);
  if (!row || row.confirmed_at !== null) return undefined;
  const key = ctx.box.open(sealContext(user.id), row.secret);
  return { secret: base32Encode(key), uri: otpauthUri(issuer, user.user_name, key) };
}

const WRONG_CODE = 'That code is not right (or was used already). Enter the code your app shows now.';

/** Confirms the unconfirmed secret with a code from the app: from now on it is a factor. */
export async function confirmTotp(ctx: FactorContext, change: FactorChange, code: string): Promise<void> {
  const row = await totpOf(ctx.storage.db, change.user.id);
  if (!row || row.confirmed_at !== null) throw new FactorError(409, 'There is no authenticator app waiting to be confirmed; start again.');
  const key = ctx.box.open(sealContext(change.user.id), row.secret);
  const steps = matchingSteps(key, code.replace(/\s/g, ''), ctx.clock.now().getTime());
  const confirmed = await ctx.storage.db.transaction().execute(async (trx) => {
    const now = ctx.clock.now().toISOString();
    for (const step of steps) {
      if (await consumeTotpStep(trx, change.user.id, step, now)) {
        await audit(trx, ctx.clock, change, 'totp_enabled');
        return true;
      }
    }
    return false;
  });
  if (!confirmed) throw new FactorError(400, WRONG_CODE);
}

/** Whether the admin may lose one factor: not their last one while the team requires one. */
export async function assertNotLast(ex: Executor, user: Pick<UserRow, 'id' | 'team_id'>, remaining: number): Promise<void> {
  if (remaining > 0) return;
  if (requires(await teamById(ex, user.team_id))) throw new FactorError(409, 'Your team requires a second factor for its admins: add another one before removing this one.');
}

/** Counts the factors an admin keeps besides the one being removed. */
export async function otherFactors(ex: Executor, userId: string, removing: 'totp' | { passkey: string }): Promise<number> {
  const view = await factorsOf(ex, userId);
  const passkeys = view.passkeys.filter((p) => removing === 'totp' || p.id !== removing.passkey).length;
  return passkeys + (removing !== 'totp' && view.totp === 'on' ? 1 : 0);
}

export async function removeTotp(ctx: FactorContext, change: FactorChange): Promise<void> {
  await assertNotLast(ctx.storage.db, change.user, await otherFactors(ctx.storage.db, change.user.id, 'totp'));
  await ctx.storage.db.transaction().execute(async (trx) => {
    if (!(await deleteTotp(trx, change.user.id))) throw new FactorError(404, 'No authenticator app is set up.');
    await audit(trx, ctx.clock, change, 'totp_removed');
  });
}

/** Recovery codes read `xxxxx-xxxxx`, from letters and digits that are not confused with each other. */
const CODE_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const normalCode = (code: string): string => code.toLowerCase().replace(/[^a-z0-9]/g, '');

function newRecoveryCode(): string {
  const chars = Array.from({ length: 10 }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join('');
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

/** New recovery codes (the earlier ones stop working); returned once, kept only as digests. */
export async function newRecoveryCodes(ctx: FactorContext, change: FactorChange): Promise<string[]> {
  if (!(await hasSecondFactor(ctx.storage.db, change.user.id))) throw new FactorError(409, 'Set up a passkey or an authenticator app first: recovery codes stand in for one of them.');
  const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
  const now = ctx.clock.now().toISOString();
  await ctx.storage.db.transaction().execute(async (trx) => {
    const rows = codes.map((code) => ({ user_id: change.user.id, code_hash: sha256(`recovery:${normalCode(code)}`), team_id: change.user.team_id, created_at: now, used_at: null }));
    await replaceRecoveryCodes(trx, rows, change.user.id);
    await audit(trx, ctx.clock, change, 'recovery_codes_generated', { count: codes.length });
  });
  return codes;
}

export interface SecondFactorMeta {
  readonly address: string;
  readonly requestId: string | null;
  readonly clientId: string | null;
}

/**
 * The second step of a sign-in with a typed code: six digits are an authenticator app's code,
 * anything else a recovery code. Counted like a password (429 while the user is locked out from
 * this address); a failure is audited (`second_factor_failed`), a pass is the sign-in's `sign_in`
 * row (the password step writes none for an admin with a factor: accounts.ts). Whether it passed.
 */
export async function passCode(ctx: FactorContext, user: Pick<UserRow, 'id' | 'team_id' | 'user_name'>, typed: string, meta: SecondFactorMeta): Promise<boolean> {
  const code = typed.trim();
  if (code.length === 0 || code.length > 64) return false;
  const attempt = await ctx.limits.reserveSignIn(`second factor\u0000${user.id}`, meta.address);
  const change: FactorChange = { user, actor: { via: 'oauth', clientId: meta.clientId, userId: user.id }, requestId: meta.requestId };
  let passed: boolean;
  try {
    passed = await ctx.storage.db.transaction().execute(async (trx) => {
      const now = ctx.clock.now();
      const digits = code.replace(/\s/g, '');
      if (/^[0-9]{6}$/.test(digits)) {
        const row = await totpOf(trx, user.id);
        if (!row || row.confirmed_at === null) return false;
        const key = ctx.box.open(sealContext(user.id), row.secret);
        for (const step of matchingSteps(key, digits, now.getTime())) {
          if (await consumeTotpStep(trx, user.id, step)) {
            await audit(trx, ctx.clock, change, 'sign_in', { method: 'form', secondFactor: 'totp' });
            return true;
          }
        }
        return false;
      }
      if (!(await consumeRecoveryCode(trx, user.id, sha256(`recovery:${normalCode(code)}`), now.toISOString()))) return false;
      await audit(trx, ctx.clock, change, 'recovery_code_used', { left: await recoveryCodesLeft(trx, user.id) });
      await audit(trx, ctx.clock, change, 'sign_in', { method: 'form', secondFactor: 'recovery code' });
      return true;
    });
  } catch (error) {
    await attempt.abandoned();
    throw error;
  }
  if (passed) {
    await attempt.succeeded();
    return true;
  }
  await attempt.failed();
  await audit(ctx.storage.db, ctx.clock, change, 'second_factor_failed', { method: 'code' });
  return false;
}

/**
 * Turns the team's requirement of a second factor on or off. The admin turning it on must have
 * one (or they would be sent to set one up at once).
 */
export async function setTeamRequirement(ctx: FactorContext, change: FactorChange, team: Pick<TeamRow, 'id' | 'require_second_factor'>, required: boolean): Promise<void> {
  if (requires(team) === required) return;
  if (required && !(await hasSecondFactor(ctx.storage.db, change.user.id))) throw new FactorError(409, 'Set up a passkey or an authenticator app for yourself first (Security), then require one of every admin.');
  await ctx.storage.db.transaction().execute(async (trx) => {
    await setRequireSecondFactor(trx, team.id, required);
    await recordEvent(trx, ctx.clock, { teamId: team.id, actor: change.actor, requestId: change.requestId, action: 'team_updated', resourceType: 'Team', resourceId: team.id, detail: { requireSecondFactor: required } });
  });
}

/** What an operator's reset of an admin's second factors removed. */
export interface FactorsReset {
  readonly passkeys: number;
  /** An authenticator app, set up or only begun. */
  readonly totp: boolean;
  /** Unused recovery codes. */
  readonly recoveryCodes: number;
  /** Sessions ended (console and authorization pages, pending sign-ins too). */
  readonly sessionsEnded: number;
}

/**
 * The way back in for an admin who lost every factor and every recovery code: another admin (the
 * console's Admins page) or the operator (`rollcall user reset-factors`) removes their passkeys,
 * their authenticator app and their recovery codes and ends their sessions, in one transaction
 * with its audit row. Their password still works; should their team require a second factor,
 * their next sign-in sends them to set one up (`secondFactorStep`: 'enroll').
 */
export async function resetSecondFactors(storage: { readonly db: Db }, clock: Clock, change: FactorChange): Promise<FactorsReset> {
  return transact(storage.db, async (trx) => {
    const userId = change.user.id;
    const passkeys = await passkeysOf(trx, userId);
    for (const passkey of passkeys) await deletePasskey(trx, userId, passkey.id);
    const totp = await deleteTotp(trx, userId);
    const recoveryCodes = await recoveryCodesLeft(trx, userId);
    await replaceRecoveryCodes(trx, [], userId);
    const sessionsEnded = await deleteSessionsOfUser(trx, userId);
    const removed: FactorsReset = { passkeys: passkeys.length, totp, recoveryCodes, sessionsEnded };
    await audit(trx, clock, change, 'second_factors_reset', { userName: change.user.user_name, ...removed });
    return removed;
  });
}

/** "2 passkeys, the authenticator app and 8 recovery codes", or "nothing" (the CLI's and the console's words). */
export function factorsText(f: Pick<FactorsReset, 'passkeys' | 'totp' | 'recoveryCodes'>): string {
  const parts = [
    ...(f.passkeys > 0 ? [`${f.passkeys} ${f.passkeys === 1 ? 'passkey' : 'passkeys'}`] : []),
    ...(f.totp ? ['the authenticator app'] : []),
    ...(f.recoveryCodes > 0 ? [`${f.recoveryCodes} unused recovery ${f.recoveryCodes === 1 ? 'code' : 'codes'}`] : []),
  ];
  if (parts.length === 0) return 'no second factor';
  return parts.length === 1 ? parts[0]! : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
}
