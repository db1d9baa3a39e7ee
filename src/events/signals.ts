/**
 * The Shared Signals a SCIM write to a user emits (issue 33, DESIGN.md section 14): OpenID RISC
 * 1.0 account and identifier events and CAEP 1.0 session and credential events, derived from the
 * user's state before and after the write, and appended to the team's feed (feed.ts appendSignal)
 * in the write's own transaction, so a signal commits exactly when its change does. Which streams
 * deliver which of them is stream-config.ts `wantedBy` (a stream takes the event types it asked
 * for); this module only decides what happened.
 *
 * The derivation looks at states, not at the request: a PATCH setting `active` false disables the
 * account like a DELETE in a team that hides deactivated users; a DELETE in a team that shows them
 * removes the user from every read (RFC 7644 section 3.6), which is RISC's account-purged.
 *
 * - RISC `account-disabled`: active before, inactive after, not deleted. `reason` only when the
 *   caller knows one of RISC's values (`hijacking`, `bulk-account`); a SCIM request carries none.
 * - RISC `account-enabled`: inactive or deleted before, active after (activate, or a PUT / PATCH
 *   setting `active` true).
 * - RISC `account-purged`: deleted by this write.
 * - RISC `identifier-changed`: an email address that identified the user (its email, the primary
 *   one else the first, or its userName where that is an email address) no longer does: neither
 *   its email nor its userName is that address now. RISC requires the subject to be the old value
 *   in the `email` format and names the new one in `new-value` (the new email, or the new
 *   userName; omitted when the email was removed). A userName that is not an email address has no
 *   RISC identifier format: no event. Compared without case, as RFC 7643 declares both attributes
 *   (caseExact false).
 * - CAEP `session-revoked`: the user's sessions ended (save() ends them when an active user is
 *   deactivated or deleted, or changes its password).
 * - CAEP `credential-change`: a password was set (`create`: the user had none), changed
 *   (`update`) or removed (`delete`: save() removes a password set before a user was made an
 *   admin); `credential_type` `password`.
 * - CAEP `assurance-level-change` does not apply: it reports a change in how a user authenticated
 *   within a session, and no SCIM write carries an authentication method or level.
 *
 * Subjects (RFC 9493): RFC 9493 `aliases` of the RFC 9967 `scim` identifier (`/Users/{id}` and the
 * externalId), the `email` identifier (when the user has an email address) and `iss_sub` (the
 * issuer and the SCIM id), so a receiver matches whichever it keeps; identifier-changed's subject
 * is the old email alone, as RISC requires. CAEP events carry `event_timestamp`,
 * `initiating_entity` and a non-empty `reason_admin`, as the CAEP interoperability profile
 * requires of session-revoked and credential-change; RISC events carry only their own claims.
 */
import type { Actor } from '../audit/events.ts';
import { appendSignal, resourcePath } from './feed.ts';
import type { ChangeType, WriteOrigin } from './feed.ts';
import { teamHasStreamsForWrite } from '../storage/repos/subscriptions.ts';
import type { UserRow } from '../storage/repos/users.ts';
import type { Executor } from '../storage/types.ts';

const RISC = 'https://schemas.openid.net/secevent/risc/event-type/';
const CAEP = 'https://schemas.openid.net/secevent/caep/event-type/';

export const ACCOUNT_DISABLED = `${RISC}account-disabled`;
export const ACCOUNT_ENABLED = `${RISC}account-enabled`;
export const ACCOUNT_PURGED = `${RISC}account-purged`;
export const IDENTIFIER_CHANGED = `${RISC}identifier-changed`;
export const SESSION_REVOKED = `${CAEP}session-revoked`;
export const CREDENTIAL_CHANGE = `${CAEP}credential-change`;

/** Every user event type Rollcall emits: what a transmitter supports (SSF `events_supported`). */
export const SIGNAL_EVENT_URIS: readonly string[] = [ACCOUNT_DISABLED, ACCOUNT_ENABLED, ACCOUNT_PURGED, IDENTIFIER_CHANGED, SESSION_REVOKED, CREDENTIAL_CHANGE];

/** RISC 1.0 account-disabled's `reason` values. */
export type DisabledReason = 'hijacking' | 'bulk-account';

/** What the signals need of a user at one moment. */
export interface UserSnapshot {
  readonly id: string;
  readonly userName: string;
  readonly externalId: string | null;
  readonly active: boolean;
  /** Removed from every read: a DELETE in a team that shows deactivated users. */
  readonly deleted: boolean;
  /** The user's email address (primaryEmail), if it has one. */
  readonly email: string | undefined;
  readonly hasPassword: boolean;
}

/** One write to a user, as the signals see it. */
export interface UserTransition {
  /** The feed's name for the write (the SCIM method, or activate / deactivate / delete). */
  readonly change: ChangeType;
  /** The user before the write; undefined when it creates the user. */
  readonly before: UserSnapshot | undefined;
  readonly after: UserSnapshot;
  /** Whether the write set a password (a new hash). */
  readonly passwordSet: boolean;
  /** Why an account is disabled, when the caller knows it. */
  readonly disabledReason?: DisabledReason;
  /** When the write happened (ISO 8601). */
  readonly at: string;
  readonly actor: Actor;
}

/** One Shared Signal of a write: the event type, the SET's `sub_id`, the event's payload. */
export interface UserSignal {
  readonly event: string;
  readonly subject: Readonly<Record<string, unknown>>;
  readonly payload: Readonly<Record<string, unknown>>;
}

/** An addr-spec in its plainest form: RFC 9493's `email` format takes nothing else. */
const EMAIL = /^[^\s@]+@[^\s@]+$/;
const asEmail = (value: unknown): string | undefined => (typeof value === 'string' && EMAIL.test(value) ? value : undefined);
const sameIdentifier = (a: string, b: string | undefined): boolean => b !== undefined && a.toLowerCase() === b.toLowerCase();

/**
 * The email address a user is known by: its primary email, else its first (RFC 7643 section
 * 4.1.2 `emails`), when it is an email address.
 */
export function primaryEmail(document: Readonly<Record<string, unknown>>): string | undefined {
  const emails = Array.isArray(document.emails) ? (document.emails as unknown[]).filter((e): e is Record<string, unknown> => typeof e === 'object' && e !== null) : [];
  const chosen = emails.find((e) => e.primary === true && asEmail(e.value) !== undefined) ?? emails.find((e) => asEmail(e.value) !== undefined);
  return asEmail(chosen?.value);
}

/** A stored user row (and its parsed document) as the signals see it. */
export const userSnapshot = (row: Pick<UserRow, 'id' | 'user_name' | 'external_id' | 'active' | 'deleted_at' | 'password_hash'>, document: Readonly<Record<string, unknown>>): UserSnapshot => ({
  id: row.id,
  userName: row.user_name,
  externalId: row.external_id,
  active: row.active === 1,
  deleted: row.deleted_at !== null,
  email: primaryEmail(document),
  hasPassword: row.password_hash !== null,
});

/** The user's RFC 9493 subject: aliases of its scim, email and iss_sub identifiers. */
export function userSubject(issuer: string, user: UserSnapshot): Record<string, unknown> {
  return {
    format: 'aliases',
    identifiers: [
      { format: 'scim', uri: resourcePath('User', user.id), ...(user.externalId !== null ? { externalId: user.externalId } : {}) },
      ...(user.email !== undefined ? [{ format: 'email', email: user.email }] : []),
      { format: 'iss_sub', iss: issuer, sub: user.id },
    ],
  };
}

/** How each way in to a write is named in a CAEP `reason_admin`. */
const CHANNEL: Readonly<Record<Actor['via'], string>> = { scim: 'through SCIM', oauth: 'through Rollcall sign-in', cli: 'with the Rollcall CLI', console: 'in the Rollcall console' };

/** CAEP 1.0 section 2's optional claims, as Rollcall fills them for a user's CAEP event. */
function caepClaims(t: UserTransition, reason: string): Record<string, unknown> {
  return {
    event_timestamp: Math.floor(Date.parse(t.at) / 1000),
    // A user acting on its own account is the user; every other writer administers it.
    initiating_entity: t.actor.userId !== null && t.actor.userId === t.after.id ? 'user' : 'admin',
    reason_admin: { en: `${reason} ${CHANNEL[t.actor.via]} (${t.change})` },
  };
}

/**
 * The email addresses that identified the user before the write and no longer do (neither its
 * email nor its userName now), each once, with what replaced it: the new email for the old email,
 * the new userName for the old userName (none when that is no email address: an email identifier's
 * new value is an address).
 */
function changedIdentifiers(before: UserSnapshot, after: UserSnapshot): { old: string; next: string | undefined }[] {
  const changes: { old: string; next: string | undefined }[] = [];
  const dropped = (old: string | undefined): old is string =>
    old !== undefined && !sameIdentifier(old, after.email) && !sameIdentifier(old, after.userName) && !changes.some((c) => sameIdentifier(c.old, old));
  if (dropped(before.email)) changes.push({ old: before.email, next: after.email });
  const oldName = asEmail(before.userName);
  if (dropped(oldName)) changes.push({ old: oldName, next: asEmail(after.userName) });
  return changes;
}

/**
 * The signals of one write to a user, in the order a receiver should apply them: identifier
 * changes first (later subjects carry the new identifiers), then the account's state, the
 * credential, and the sessions.
 */
export function userSignals(issuer: string, t: UserTransition): UserSignal[] {
  const { before, after } = t;
  const subject = userSubject(issuer, after);
  const signals: UserSignal[] = [];
  const live = (u: UserSnapshot | undefined): boolean => u !== undefined && !u.deleted;
  const activeNow = (u: UserSnapshot | undefined): boolean => live(u) && u!.active;

  if (before !== undefined && live(after)) {
    for (const { old, next } of changedIdentifiers(before, after)) {
      signals.push({ event: IDENTIFIER_CHANGED, subject: { format: 'email', email: old }, payload: next !== undefined ? { 'new-value': next } : {} });
    }
  }
  if (before !== undefined && !before.deleted && after.deleted) {
    signals.push({ event: ACCOUNT_PURGED, subject, payload: {} });
  } else if (activeNow(before) && live(after) && !after.active) {
    signals.push({ event: ACCOUNT_DISABLED, subject, payload: t.disabledReason !== undefined ? { reason: t.disabledReason } : {} });
  } else if (before !== undefined && !activeNow(before) && activeNow(after)) {
    signals.push({ event: ACCOUNT_ENABLED, subject, payload: {} });
  }
  // A password goes only when a user is made an admin without one (scim/users.ts withoutEarlierPassword).
  const removed = !t.passwordSet && before?.hasPassword === true && !after.hasPassword;
  if (t.passwordSet) {
    const update = before?.hasPassword === true;
    signals.push({
      event: CREDENTIAL_CHANGE,
      subject,
      payload: { credential_type: 'password', change_type: update ? 'update' : 'create', ...caepClaims(t, update ? 'Password changed' : 'Password set') },
    });
  } else if (removed) {
    signals.push({ event: CREDENTIAL_CHANGE, subject, payload: { credential_type: 'password', change_type: 'delete', ...caepClaims(t, 'Password removed') } });
  }
  // save() ends an active user's sessions when it is deactivated or deleted, or its password changes or goes.
  if (activeNow(before) && (!activeNow(after) || t.passwordSet || removed)) {
    const reason = after.deleted ? 'Account deleted' : !after.active ? 'Account deactivated' : t.passwordSet ? 'Password changed' : 'Password removed';
    signals.push({ event: SESSION_REVOKED, subject, payload: caepClaims(t, reason) });
  }
  return signals;
}

/** Who writes, and the issuer its iss_sub subjects name (the public base URL, every SET's `iss`). */
export interface SignalOrigin extends WriteOrigin {
  readonly baseUrl: string;
}

/**
 * Appends the write's signals to the team's feed, in the write's transaction, when the team has
 * an SSF stream (read in the same transaction, under a share lock on the team's row that orders
 * it with a stream's creation: teamHasStreamsForWrite; a write that emits nothing reads nothing). Each
 * row names the user and its new version; its `txn` is the write's request id, shared by the
 * signals of one write as SSF 1.0 allows.
 */
export async function recordUserSignals(origin: SignalOrigin, ex: Executor, transition: Omit<UserTransition, 'actor'>, version: number): Promise<void> {
  const signals = userSignals(origin.baseUrl, { ...transition, actor: origin.actor });
  if (signals.length === 0 || !(await teamHasStreamsForWrite(ex, origin.team.id))) return;
  for (const s of signals) {
    await appendSignal(origin, ex, {
      teamId: origin.team.id,
      resourceType: 'User',
      resourceId: transition.after.id,
      version,
      externalId: transition.after.externalId,
      actor: origin.actor,
      txn: origin.requestId,
      event: s.event,
      subject: s.subject,
      payload: s.payload,
    });
  }
}
