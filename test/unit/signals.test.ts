/**
 * The RISC 1.0 and CAEP 1.0 signals a write to a user emits (events/signals.ts, issue 33 item 2):
 * each event type from the transitions that cause it, none from a change that concerns no
 * receiver, RFC 9493 subjects, and a property over arbitrary transitions.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Actor } from '../../src/audit/events.ts';
import {
  ACCOUNT_DISABLED,
  ACCOUNT_ENABLED,
  ACCOUNT_PURGED,
  CREDENTIAL_CHANGE,
  IDENTIFIER_CHANGED,
  primaryEmail,
  SESSION_REVOKED,
  SIGNAL_EVENT_URIS,
  userSignals,
  userSnapshot,
  userSubject,
} from '../../src/events/signals.ts';
import type { UserSignal, UserSnapshot, UserTransition } from '../../src/events/signals.ts';

const ISS = 'https://rollcall.test';
const AT = '2026-11-27T10:00:00.000Z';
const SCIM_ACTOR: Actor = { via: 'scim', clientId: null, userId: null };

const user = (over: Partial<UserSnapshot> = {}): UserSnapshot => ({
  id: 'U1',
  userName: 'ada@acme.example',
  externalId: 'ext-1',
  active: true,
  deleted: false,
  email: 'ada@acme.example',
  hasPassword: true,
  ...over,
});

const transition = (before: UserSnapshot | undefined, after: UserSnapshot, over: Partial<UserTransition> = {}): UserTransition => ({
  change: 'patch',
  before,
  after,
  passwordSet: false,
  at: AT,
  actor: SCIM_ACTOR,
  ...over,
});

const events = (signals: readonly UserSignal[]): string[] => signals.map((s) => s.event);
const one = (signals: readonly UserSignal[], event: string): UserSignal => {
  const found = signals.filter((s) => s.event === event);
  assert.equal(found.length, 1, `one ${event} in ${events(signals).join(', ')}`);
  return found[0]!;
};

describe('user signals: the account state (RISC 1.0 sections 2.2 to 2.4)', () => {
  it('deactivation (PATCH active false, or DELETE in a team that hides deactivated users): account-disabled and session-revoked, subject the user', () => {
    for (const change of ['patch', 'put', 'deactivate'] as const) {
      const signals = userSignals(ISS, transition(user(), user({ active: false }), { change }));
      assert.deepEqual(events(signals), [ACCOUNT_DISABLED, SESSION_REVOKED]);
      assert.deepEqual(signals[0]!.payload, {}, 'no reason: a SCIM request carries none of RISC reasons');
      assert.deepEqual(signals[0]!.subject, userSubject(ISS, user({ active: false })));
      assert.deepEqual(signals[1]!.payload, {
        event_timestamp: Date.parse(AT) / 1000,
        initiating_entity: 'admin',
        reason_admin: { en: `Account deactivated through SCIM (${change})` },
      });
    }
  });

  it('account-disabled carries RISC reason when the caller knows it', () => {
    const signals = userSignals(ISS, transition(user(), user({ active: false }), { disabledReason: 'hijacking' }));
    assert.deepEqual(one(signals, ACCOUNT_DISABLED).payload, { reason: 'hijacking' });
  });

  it('reactivation (activate, PATCH or PUT active true): account-enabled only', () => {
    for (const change of ['activate', 'patch', 'put'] as const) {
      assert.deepEqual(events(userSignals(ISS, transition(user({ active: false }), user(), { change }))), [ACCOUNT_ENABLED]);
    }
  });

  it('DELETE in a team that shows deactivated users purges: account-purged, and session-revoked when the user was active', () => {
    const purged = userSignals(ISS, transition(user(), user({ active: false, deleted: true }), { change: 'delete' }));
    assert.deepEqual(events(purged), [ACCOUNT_PURGED, SESSION_REVOKED]);
    assert.deepEqual(purged[0]!.payload, {});
    assert.equal((purged[1]!.payload.reason_admin as Record<string, string>).en, 'Account deleted through SCIM (delete)');
    // Deactivated first, deleted afterwards: its sessions already ended.
    assert.deepEqual(events(userSignals(ISS, transition(user({ active: false }), user({ active: false, deleted: true }), { change: 'delete' }))), [ACCOUNT_PURGED]);
  });

  it('activate restores a deleted user: account-enabled', () => {
    assert.deepEqual(events(userSignals(ISS, transition(user({ active: false, deleted: true }), user(), { change: 'activate' }))), [ACCOUNT_ENABLED]);
  });

  it('the same DELETE in each team mode: hiding, a deactivation (account-disabled); showing, a deletion (account-purged)', () => {
    const hiding = userSignals(ISS, transition(user(), user({ active: false }), { change: 'deactivate' }));
    const showing = userSignals(ISS, transition(user(), user({ active: false, deleted: true }), { change: 'delete' }));
    assert.deepEqual(events(hiding), [ACCOUNT_DISABLED, SESSION_REVOKED]);
    assert.deepEqual(events(showing), [ACCOUNT_PURGED, SESSION_REVOKED]);
  });
});

describe('user signals: identifiers (RISC 1.0 section 2.5)', () => {
  it('a changed email: identifier-changed, subject the old email (RISC: email format, old value), new-value the new one', () => {
    const signals = userSignals(ISS, transition(user({ userName: 'ada' }), user({ userName: 'ada', email: 'ada.l@acme.example' })));
    assert.deepEqual(signals, [{ event: IDENTIFIER_CHANGED, subject: { format: 'email', email: 'ada@acme.example' }, payload: { 'new-value': 'ada.l@acme.example' } }]);
  });

  it('an email removed: identifier-changed without new-value (optional); an email added where there was none: nothing (no old value)', () => {
    assert.deepEqual(userSignals(ISS, transition(user({ userName: 'ada' }), user({ userName: 'ada', email: undefined }))), [
      { event: IDENTIFIER_CHANGED, subject: { format: 'email', email: 'ada@acme.example' }, payload: {} },
    ]);
    assert.deepEqual(userSignals(ISS, transition(user({ userName: 'ada', email: undefined }), user({ userName: 'ada' }))), []);
  });

  it('a userName that is an email address: its change is identifier-changed; one that is not has no RISC format: nothing', () => {
    assert.deepEqual(userSignals(ISS, transition(user({ email: undefined }), user({ email: undefined, userName: 'ada.l@acme.example' }))), [
      { event: IDENTIFIER_CHANGED, subject: { format: 'email', email: 'ada@acme.example' }, payload: { 'new-value': 'ada.l@acme.example' } },
    ]);
    assert.deepEqual(userSignals(ISS, transition(user({ userName: 'ada' }), user({ userName: 'lovelace' }))), []);
    // From an address to a plain name: the address is gone, with no new address to name.
    assert.deepEqual(userSignals(ISS, transition(user({ email: undefined }), user({ email: undefined, userName: 'ada' }))), [
      { event: IDENTIFIER_CHANGED, subject: { format: 'email', email: 'ada@acme.example' }, payload: {} },
    ]);
  });

  it('userName and email, both the old address, changed together: one event for that address (the email new value)', () => {
    const signals = userSignals(ISS, transition(user(), user({ userName: 'al@acme.example', email: 'lovelace@acme.example' })));
    assert.deepEqual(signals, [{ event: IDENTIFIER_CHANGED, subject: { format: 'email', email: 'ada@acme.example' }, payload: { 'new-value': 'lovelace@acme.example' } }]);
  });

  it('userName and email, different addresses, both changed: one event each', () => {
    const signals = userSignals(ISS, transition(user({ userName: 'a@id.example' }), user({ userName: 'b@id.example', email: 'c@acme.example' })));
    assert.deepEqual(signals.map((s) => [s.subject.email, s.payload['new-value']]), [
      ['ada@acme.example', 'c@acme.example'],
      ['a@id.example', 'b@id.example'],
    ]);
  });

  it('an address that still identifies the user (its email or its userName now) did not change: nothing for it', () => {
    // userName moves off the address the email still is.
    assert.deepEqual(userSignals(ISS, transition(user(), user({ userName: 'al@acme.example' }))), []);
    // The email moves off the address the userName still is.
    assert.deepEqual(userSignals(ISS, transition(user(), user({ email: 'al@acme.example' }))), []);
    // The two swap addresses.
    assert.deepEqual(userSignals(ISS, transition(user({ userName: 'a@x.example', email: 'b@x.example' }), user({ userName: 'b@x.example', email: 'a@x.example' }))), []);
  });

  it('a change of case only is no change (RFC 7643: userName and emails are caseExact false)', () => {
    assert.deepEqual(userSignals(ISS, transition(user(), user({ userName: 'Ada@Acme.example', email: 'ADA@acme.example' }))), []);
  });

  it('identifier-changed comes first: the signals after it name the user by its new identifiers', () => {
    const after = user({ active: false, email: 'new@acme.example', userName: 'ada' });
    const signals = userSignals(ISS, transition(user({ userName: 'ada' }), after));
    assert.deepEqual(events(signals), [IDENTIFIER_CHANGED, ACCOUNT_DISABLED, SESSION_REVOKED]);
    assert.deepEqual(signals[1]!.subject, userSubject(ISS, after));
  });

  it('a purge changes no identifier (the user is gone)', () => {
    assert.deepEqual(events(userSignals(ISS, transition(user(), user({ active: false, deleted: true, email: 'x@acme.example' }), { change: 'delete' }))), [ACCOUNT_PURGED, SESSION_REVOKED]);
  });
});

describe('user signals: credentials and sessions (CAEP 1.0 sections 3.1 and 3.3)', () => {
  it('a password set at creation: credential-change create, no session to revoke', () => {
    const signals = userSignals(ISS, transition(undefined, user(), { change: 'create', passwordSet: true }));
    assert.deepEqual(signals, [
      {
        event: CREDENTIAL_CHANGE,
        subject: userSubject(ISS, user()),
        payload: { credential_type: 'password', change_type: 'create', event_timestamp: Date.parse(AT) / 1000, initiating_entity: 'admin', reason_admin: { en: 'Password set through SCIM (create)' } },
      },
    ]);
  });

  it('a changed password: credential-change update and session-revoked (save() ends the sessions)', () => {
    const signals = userSignals(ISS, transition(user(), user(), { passwordSet: true }));
    assert.deepEqual(events(signals), [CREDENTIAL_CHANGE, SESSION_REVOKED]);
    assert.equal(signals[0]!.payload.change_type, 'update');
    assert.deepEqual(signals[1]!.payload.reason_admin, { en: 'Password changed through SCIM (patch)' });
  });

  it('a first password for an existing user: change_type create', () => {
    assert.equal(one(userSignals(ISS, transition(user({ hasPassword: false }), user(), { passwordSet: true })), CREDENTIAL_CHANGE).payload.change_type, 'create');
  });

  it('a password removed (a user made an admin, who sets their own): credential-change delete and session-revoked', () => {
    const signals = userSignals(ISS, transition(user(), user({ hasPassword: false })));
    assert.deepEqual(events(signals), [CREDENTIAL_CHANGE, SESSION_REVOKED]);
    assert.equal(signals[0]!.payload.change_type, 'delete');
    assert.deepEqual(signals[0]!.payload.reason_admin, { en: 'Password removed through SCIM (patch)' });
    assert.deepEqual(signals[1]!.payload.reason_admin, { en: 'Password removed through SCIM (patch)' });
  });

  it('a password set on an inactive user: credential-change only (its sessions ended when it was deactivated)', () => {
    assert.deepEqual(events(userSignals(ISS, transition(user({ active: false }), user({ active: false }), { passwordSet: true }))), [CREDENTIAL_CHANGE]);
  });

  it('deactivated with a new password in one write: one session-revoked', () => {
    assert.deepEqual(events(userSignals(ISS, transition(user(), user({ active: false }), { passwordSet: true, change: 'put' }))), [ACCOUNT_DISABLED, CREDENTIAL_CHANGE, SESSION_REVOKED]);
  });

  it('initiating_entity: the user acting on its own account is `user`, any other writer `admin`; the channel is in reason_admin', () => {
    const self = userSignals(ISS, transition(user(), user(), { passwordSet: true, actor: { via: 'oauth', clientId: 'c', userId: 'U1' } }));
    assert.deepEqual(self.map((s) => s.payload.initiating_entity), ['user', 'user']);
    assert.deepEqual(self[0]!.payload.reason_admin, { en: 'Password changed through Rollcall sign-in (patch)' });
    const other = userSignals(ISS, transition(user(), user(), { passwordSet: true, actor: { via: 'console', clientId: null, userId: 'ADMIN' } }));
    assert.deepEqual(other.map((s) => s.payload.initiating_entity), ['admin', 'admin']);
  });
});

describe('user signals: nothing for changes that concern no receiver', () => {
  it('a created user without a password (active or not), an unchanged user, a changed title', () => {
    assert.deepEqual(userSignals(ISS, transition(undefined, user(), { change: 'create' })), []);
    assert.deepEqual(userSignals(ISS, transition(undefined, user({ active: false }), { change: 'create' })), []);
    assert.deepEqual(userSignals(ISS, transition(user(), user(), { change: 'put' })), []);
    // Roles, entitlements, names, title: the snapshot does not even see them.
    const row = { id: 'U1', user_name: 'ada', external_id: null, active: 1, deleted_at: null, password_hash: 'h' };
    assert.deepEqual(userSignals(ISS, transition(userSnapshot(row, { title: 'Eng', roles: [{ value: 'a' }] }), userSnapshot(row, { title: 'Lead', roles: [] }))), []);
  });

  it('deactivating an inactive user, or activating an active one', () => {
    assert.deepEqual(userSignals(ISS, transition(user({ active: false }), user({ active: false }), { change: 'deactivate' })), []);
    assert.deepEqual(userSignals(ISS, transition(user(), user(), { change: 'activate' })), []);
  });
});

describe('user signals: subjects (RFC 9493, RFC 9967 scim)', () => {
  it('aliases of scim (with externalId), email and iss_sub', () => {
    assert.deepEqual(userSubject(ISS, user()), {
      format: 'aliases',
      identifiers: [
        { format: 'scim', uri: '/Users/U1', externalId: 'ext-1' },
        { format: 'email', email: 'ada@acme.example' },
        { format: 'iss_sub', iss: ISS, sub: 'U1' },
      ],
    });
  });

  it('no email identifier without an email address; no externalId member without one', () => {
    assert.deepEqual(userSubject(ISS, user({ email: undefined, externalId: null })), {
      format: 'aliases',
      identifiers: [
        { format: 'scim', uri: '/Users/U1' },
        { format: 'iss_sub', iss: ISS, sub: 'U1' },
      ],
    });
  });

  it('the email: the primary one, else the first; values that are no email address are passed over', () => {
    assert.equal(primaryEmail({ emails: [{ value: 'a@x.example' }, { value: 'b@x.example', primary: true }] }), 'b@x.example');
    assert.equal(primaryEmail({ emails: [{ value: 'a@x.example', type: 'work' }, { value: 'b@x.example' }] }), 'a@x.example');
    assert.equal(primaryEmail({ emails: [{ value: 'n/a', primary: true }, { value: 'c@x.example' }] }), 'c@x.example');
    assert.equal(primaryEmail({ emails: [{ value: 'not an address' }] }), undefined);
    assert.equal(primaryEmail({ emails: 'a@x.example' }), undefined);
    assert.equal(primaryEmail({}), undefined);
  });
});

describe('user signals: property over arbitrary transitions', () => {
  const address = fc.constantFrom('a@x.example', 'A@X.example', 'b@x.example', 'c@y.example');
  const snapshot = fc.record({
    id: fc.constant('U1'),
    userName: fc.oneof(address, fc.constantFrom('ada', 'bob')),
    externalId: fc.option(fc.constant('e1'), { nil: null }),
    active: fc.boolean(),
    deleted: fc.boolean(),
    email: fc.option(address, { nil: undefined }),
    hasPassword: fc.boolean(),
  });
  const transitions = fc.record({
    before: fc.option(snapshot, { nil: undefined }),
    after: snapshot,
    passwordSet: fc.boolean(),
    change: fc.constantFrom('create', 'put', 'patch', 'delete', 'activate', 'deactivate' as const),
  });

  it('each signal is supported and follows its rule; subjects are well formed; nothing without a change', () => {
    fc.assert(
      fc.property(transitions, (input) => {
        const t = transition(input.before, input.after, { passwordSet: input.passwordSet, change: input.change });
        // A password is removed when the write sets none and the user had one before and has none after.
        const removed = !t.passwordSet && input.before?.hasPassword === true && !input.after.hasPassword;
        const credential = t.passwordSet || removed;
        const signals = userSignals(ISS, t);
        const activeLive = (u: UserSnapshot | undefined) => u !== undefined && !u.deleted && u.active;
        const { before, after } = t;
        for (const s of signals) assert.ok(SIGNAL_EVENT_URIS.includes(s.event));
        // At most one account state event, and each exactly when its rule holds.
        assert.ok(signals.filter((s) => [ACCOUNT_DISABLED, ACCOUNT_ENABLED, ACCOUNT_PURGED].includes(s.event)).length <= 1);
        assert.equal(events(signals).includes(ACCOUNT_PURGED), before !== undefined && !before.deleted && after.deleted);
        assert.equal(events(signals).includes(ACCOUNT_DISABLED), activeLive(before) && !after.deleted && !after.active);
        assert.equal(events(signals).includes(ACCOUNT_ENABLED), before !== undefined && !activeLive(before) && activeLive(after));
        assert.equal(events(signals).includes(CREDENTIAL_CHANGE), credential);
        if (credential) assert.equal(one(signals, CREDENTIAL_CHANGE).payload.change_type, removed ? 'delete' : input.before?.hasPassword === true ? 'update' : 'create');
        assert.equal(signals.filter((s) => s.event === SESSION_REVOKED).length, activeLive(before) && (!activeLive(after) || credential) ? 1 : 0);
        for (const s of signals) {
          if (s.event === IDENTIFIER_CHANGED) {
            // RISC: the old value, in the email format; something did change.
            assert.equal(s.subject.format, 'email');
            const old = String(s.subject.email).toLowerCase();
            assert.ok(old === before?.email?.toLowerCase() || old === before?.userName.toLowerCase());
            assert.notEqual(String(s.payload['new-value'] ?? '').toLowerCase(), old);
            if (s.payload['new-value'] !== undefined) assert.match(String(s.payload['new-value']), /^[^\s@]+@[^\s@]+$/);
            assert.ok(old !== after.email?.toLowerCase() && old !== after.userName.toLowerCase(), 'the old address no longer identifies the user');
          } else {
            assert.deepEqual(s.subject, userSubject(ISS, after));
            const ids = s.subject.identifiers as { format: string }[];
            assert.ok(ids.every((i) => ['scim', 'email', 'iss_sub'].includes(i.format)), 'no nested aliases (RFC 9493 section 3.2.7)');
          }
          if (s.event === SESSION_REVOKED || s.event === CREDENTIAL_CHANGE) assert.ok(Object.keys(s.payload.reason_admin as object).length > 0, 'CAEP interoperability profile: reason_admin');
        }
        // A write that changes nothing a receiver sees emits nothing.
        if (before !== undefined && !credential && JSON.stringify(before).toLowerCase() === JSON.stringify(after).toLowerCase()) assert.deepEqual(signals, []);
      }),
      { numRuns: 2000 },
    );
  });
});
