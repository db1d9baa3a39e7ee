/**
 * Shared Signals from SCIM writes (issue 33 item 2), over HTTP on each engine: with an SSF stream
 * in the team (a row inserted as the stream API will), each SCIM write to a user appends its RISC
 * and CAEP signals to the team's feed in the write's transaction, rendered as SSF SETs by
 * signalClaims; a team without a stream gets none; a write that fails leaves none; a stream takes
 * only the event types it asked for.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SIGNAL, signalOf } from '../../src/events/feed.ts';
import { signalClaims } from '../../src/events/set.ts';
import {
  ACCOUNT_DISABLED,
  ACCOUNT_ENABLED,
  ACCOUNT_PURGED,
  CREDENTIAL_CHANGE,
  IDENTIFIER_CHANGED,
  SESSION_REVOKED,
  SIGNAL_EVENT_URIS,
} from '../../src/events/signals.ts';
import { wantedBy } from '../../src/events/stream-config.ts';
import type { StreamConfig } from '../../src/events/stream-config.ts';
import { newId } from '../../src/ids.ts';
import { CLI_ACTOR } from '../../src/audit/events.ts';
import { PasswordHasher } from '../../src/oauth/passwords.ts';
import { removeGrantFromUsers } from '../../src/scim/grants.ts';
import { loadTeamTypes } from '../../src/scim/team-schemas.ts';
import { teamById } from '../../src/storage/repos/teams.ts';
import type { Storage } from '../../src/storage/connect.ts';
import { eventsAfter } from '../../src/storage/repos/events.ts';
import type { EventRow } from '../../src/storage/repos/events.ts';
import { insertSubscription } from '../../src/storage/repos/subscriptions.ts';
import type { SubscriptionRow } from '../../src/storage/repos/subscriptions.ts';
import { hooksOf, hot, StorageCarrier } from '../../src/storage/statements.ts';
import type { Statements } from '../../src/storage/statements.ts';
import { BASE_URL, createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { seedCatalog } from '../support/catalog.ts';
import { engines } from '../support/engines.ts';

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const AUD = 'https://receiver.example/ssf';
const T = '2026-01-01T00:00:00.000Z';

/** An SSF stream of the team, as the stream API stores one (migration 025, stream-config.ts). */
function stream(teamId: string, eventsDelivered: readonly string[] = SIGNAL_EVENT_URIS): SubscriptionRow {
  const config: StreamConfig = { aud: AUD, eventsRequested: eventsDelivered, eventsDelivered, status: 'enabled' };
  return {
    id: newId(), team_id: teamId, method: 'poll', url: null, events: null, full: 0, state: 'active', paused_reason: null, cursor: 0,
    failures: 0, failing_since: null, next_attempt_at: T, lease_owner: null, lease_until: null, secret_hash: null, created_at: T, updated_at: T,
    creator_token: null, creator_user: null, format: 'ssf', webhook_secret: null, webhook_previous_secret: null, webhook_previous_until: null,
    ssf: JSON.stringify(config),
  };
}

/** Reads the team's feed from where it last stopped: the Shared Signal rows appended since. */
function follower(storage: Storage, teamId: string): () => Promise<EventRow[]> {
  let seen = 0;
  return async () => {
    const rows = await eventsAfter(storage.db, teamId, seen, 1000);
    seen = rows.at(-1)?.seq ?? seen;
    return rows.filter((r) => r.type === SIGNAL);
  };
}

const claimsOf = (row: EventRow) => signalClaims(row, { issuer: BASE_URL, audience: AUD });
const eventOf = (row: EventRow): string => signalOf(row).event;

/** The subject every user signal but identifier-changed carries: RFC 9493 aliases. */
const aliases = (id: string, email: string | undefined, externalId?: string) => ({
  format: 'aliases',
  identifiers: [
    { format: 'scim', uri: `/Users/${id}`, ...(externalId ? { externalId } : {}) },
    ...(email ? [{ format: 'email', email }] : []),
    { format: 'iss_sub', iss: BASE_URL, sub: id },
  ],
});

const replace = (path: string, value: unknown) => ({ schemas: [PATCH], Operations: [{ op: 'replace', path, value }] });

for (const engine of engines) {
  describe(`Shared Signals from SCIM writes (${engine.name})`, () => {
    it('a team that hides deactivated users: each write its RISC / CAEP signals, rendered as SSF SETs', async () => {
      const t = await createTestApp({ engine });
      try {
        await insertSubscription(t.storage.db, stream(t.team.id));
        const next = follower(t.storage, t.team.id);
        const write = async (method: string, url: string, body: unknown, requestId: string, status: number) => {
          const res = await t.request(method, url, body, { 'x-request-id': requestId });
          assert.equal(res.statusCode, status, res.body);
          return res;
        };

        const created = json(await write('POST', '/v2/scim/Users', { userName: 'ada@id.acme.example', externalId: 'ext-ada', emails: [{ value: 'ada@acme.example', primary: true }], password: 'correct horse battery staple' }, 'req-create', 201));
        const id = String(created.id);
        let rows = await next();
        assert.deepEqual(rows.map(eventOf), [CREDENTIAL_CHANGE]);
        assert.deepEqual([rows[0]!.resource_type, rows[0]!.resource_id, rows[0]!.version, rows[0]!.external_id, rows[0]!.txn], ['User', id, 1, 'ext-ada', 'req-create']);
        const created0 = claimsOf(rows[0]!);
        assert.deepEqual(Object.keys(created0).sort(), ['aud', 'events', 'iat', 'iss', 'jti', 'sub_id', 'txn']);
        assert.equal(created0.iss, BASE_URL);
        assert.equal(created0.aud, AUD);
        assert.equal(created0.jti, `${t.team.id}.${rows[0]!.seq}`);
        assert.equal(created0.txn, 'req-create');
        assert.deepEqual(created0.sub_id, aliases(id, 'ada@acme.example', 'ext-ada'));
        const change = (created0.events as Record<string, Record<string, unknown>>)[CREDENTIAL_CHANGE]!;
        assert.deepEqual(Object.keys(created0.events as object), [CREDENTIAL_CHANGE], 'one event per SET');
        assert.equal(change.credential_type, 'password');
        assert.equal(change.change_type, 'create');
        assert.equal(change.initiating_entity, 'admin');
        assert.equal(change.event_timestamp, created0.iat);
        assert.ok((change.reason_admin as Record<string, string>).en);
        assert.equal(JSON.stringify(rows).includes('correct horse'), false, 'no password in a signal');

        // A change no receiver needs: no signal.
        await write('PATCH', `/v2/scim/Users/${id}`, replace('title', 'Engineer'), 'req-title', 200);
        assert.deepEqual(await next(), []);

        // Deactivation by PATCH: account-disabled and session-revoked, one txn.
        await write('PATCH', `/v2/scim/Users/${id}`, replace('active', false), 'req-off', 200);
        rows = await next();
        assert.deepEqual(rows.map(eventOf), [ACCOUNT_DISABLED, SESSION_REVOKED]);
        assert.deepEqual(rows.map((r) => [r.version, r.txn]), [[3, 'req-off'], [3, 'req-off']]);
        assert.deepEqual(claimsOf(rows[0]!).events, { [ACCOUNT_DISABLED]: {} });
        const revoked = (claimsOf(rows[1]!).events as Record<string, Record<string, unknown>>)[SESSION_REVOKED]!;
        assert.deepEqual(revoked.reason_admin, { en: 'Account deactivated through SCIM (patch)' });
        assert.deepEqual(claimsOf(rows[1]!).sub_id, aliases(id, 'ada@acme.example', 'ext-ada'));

        // Reactivation by PATCH (the hidden user's one way back besides activate).
        await write('PATCH', `/v2/scim/Users/${id}`, replace('active', true), 'req-on', 200);
        assert.deepEqual((await next()).map(eventOf), [ACCOUNT_ENABLED]);

        // A new email: identifier-changed, subject the old address.
        await write('PATCH', `/v2/scim/Users/${id}`, replace('emails', [{ value: 'ada.l@acme.example', primary: true }]), 'req-email', 200);
        rows = await next();
        assert.deepEqual(rows.map(eventOf), [IDENTIFIER_CHANGED]);
        assert.deepEqual(claimsOf(rows[0]!).sub_id, { format: 'email', email: 'ada@acme.example' });
        assert.deepEqual(claimsOf(rows[0]!).events, { [IDENTIFIER_CHANGED]: { 'new-value': 'ada.l@acme.example' } });

        // A new userName (an email address, not the user's email): identifier-changed too.
        await write('PATCH', `/v2/scim/Users/${id}`, replace('userName', 'lovelace@id.acme.example'), 'req-name', 200);
        rows = await next();
        assert.deepEqual(rows.map((r) => claimsOf(r).sub_id), [{ format: 'email', email: 'ada@id.acme.example' }]);
        assert.deepEqual(claimsOf(rows[0]!).events, { [IDENTIFIER_CHANGED]: { 'new-value': 'lovelace@id.acme.example' } });
        // The email set to the userName's address: the old email no longer identifies the user.
        await write('PATCH', `/v2/scim/Users/${id}`, replace('emails', [{ value: 'lovelace@id.acme.example' }]), 'req-email-2', 200);
        assert.deepEqual((await next()).map((r) => [claimsOf(r).sub_id, claimsOf(r).events]), [
          [{ format: 'email', email: 'ada.l@acme.example' }, { [IDENTIFIER_CHANGED]: { 'new-value': 'lovelace@id.acme.example' } }],
        ]);
        // The userName moved off an address the email still is: nothing.
        await write('PATCH', `/v2/scim/Users/${id}`, replace('userName', 'ada'), 'req-name-2', 200);
        assert.deepEqual(await next(), []);

        // A new password: credential-change update and session-revoked.
        await write('PATCH', `/v2/scim/Users/${id}`, replace('password', 'another horse battery staple'), 'req-pw', 200);
        rows = await next();
        assert.deepEqual(rows.map(eventOf), [CREDENTIAL_CHANGE, SESSION_REVOKED]);
        assert.equal(signalOf(rows[0]!).payload.change_type, 'update');
        assert.deepEqual(signalOf(rows[1]!).payload.reason_admin, { en: 'Password changed through SCIM (patch)' });
        assert.deepEqual(signalOf(rows[1]!).subject, aliases(id, 'lovelace@id.acme.example', 'ext-ada'));

        // DELETE in a team that hides deactivated users deactivates: account-disabled, not purged.
        await write('DELETE', `/v2/scim/Users/${id}`, undefined, 'req-delete', 204);
        rows = await next();
        assert.deepEqual(rows.map(eventOf), [ACCOUNT_DISABLED, SESSION_REVOKED]);
        assert.deepEqual(signalOf(rows[1]!).payload.reason_admin, { en: 'Account deactivated through SCIM (deactivate)' });

        await write('PUT', `/v2/scim/Users/${id}/activate`, undefined, 'req-activate', 200);
        rows = await next();
        assert.deepEqual(rows.map(eventOf), [ACCOUNT_ENABLED]);
        assert.equal(rows[0]!.version, 11);

        // The SCIM feed's own events are all there, in the same transactions.
        const scim = (await eventsAfter(t.storage.db, t.team.id, 0, 1000)).filter((r) => r.type !== SIGNAL);
        assert.deepEqual(scim.map((r) => r.type), ['create', 'patch', 'patch', 'patch', 'patch', 'patch', 'patch', 'patch', 'patch', 'deactivate', 'activate']);
      } finally {
        await t.close();
      }
    });

    it('a team that shows deactivated users: DELETE purges (account-purged); activate restores (account-enabled); a PUT that deactivates', async () => {
      const t = await createTestApp({ engine, deactivatedUsers: 'visible' });
      try {
        await insertSubscription(t.storage.db, stream(t.team.id));
        const next = follower(t.storage, t.team.id);
        const a = String(json(await t.request('POST', '/v2/scim/Users', { userName: 'alan' })).id);
        assert.deepEqual(await next(), [], 'no password, no signal');

        assert.equal((await t.request('DELETE', `/v2/scim/Users/${a}`)).statusCode, 204);
        let rows = await next();
        assert.deepEqual(rows.map(eventOf), [ACCOUNT_PURGED, SESSION_REVOKED]);
        assert.deepEqual(claimsOf(rows[0]!).events, { [ACCOUNT_PURGED]: {} });
        assert.deepEqual(claimsOf(rows[0]!).sub_id, aliases(a, undefined));

        assert.equal((await t.request('PUT', `/v2/scim/Users/${a}/activate`)).statusCode, 200);
        assert.deepEqual((await next()).map(eventOf), [ACCOUNT_ENABLED]);

        // Deactivated by PUT (still shown), then deleted: disabled, then purged alone.
        assert.equal((await t.request('PUT', `/v2/scim/Users/${a}`, { userName: 'alan', active: false })).statusCode, 200);
        assert.deepEqual((await next()).map(eventOf), [ACCOUNT_DISABLED, SESSION_REVOKED]);
        assert.equal((await t.request('DELETE', `/v2/scim/Users/${a}`)).statusCode, 204);
        assert.deepEqual((await next()).map(eventOf), [ACCOUNT_PURGED]);
      } finally {
        await t.close();
      }
    });

    it('a team without a stream gets no signal; another team\'s stream changes nothing for it', async () => {
      const t = await createTestApp({ engine });
      try {
        const other = await t.addTeam('beta');
        await insertSubscription(t.storage.db, stream(other.team.id));
        const id = String(json(await t.request('POST', '/v2/scim/Users', { userName: 'ada@acme.example', password: 'correct horse battery staple' })).id);
        await t.request('PATCH', `/v2/scim/Users/${id}`, replace('active', false));
        await t.request('PUT', `/v2/scim/Users/${id}/activate`);
        await t.request('PATCH', `/v2/scim/Users/${id}`, replace('userName', 'lovelace@acme.example'));
        await t.request('DELETE', `/v2/scim/Users/${id}`);
        const feed = await eventsAfter(t.storage.db, t.team.id, 0, 1000);
        assert.deepEqual(feed.map((r) => r.type), ['create', 'patch', 'activate', 'patch', 'deactivate']);
        assert.deepEqual(await eventsAfter(t.storage.db, other.team.id, 0, 1000), []);
      } finally {
        await t.close();
      }
    });

    it('a stream takes only the event types it asked for (stream-config.ts wantedBy over the rows written)', async () => {
      const t = await createTestApp({ engine });
      try {
        const narrow = stream(t.team.id, [ACCOUNT_DISABLED]);
        await insertSubscription(t.storage.db, narrow);
        const next = follower(t.storage, t.team.id);
        const id = String(json(await t.request('POST', '/v2/scim/Users', { userName: 'ada@acme.example', password: 'correct horse battery staple' })).id);
        await t.request('PATCH', `/v2/scim/Users/${id}`, replace('active', false));
        const rows = await next();
        assert.deepEqual(rows.map(eventOf), [CREDENTIAL_CHANGE, ACCOUNT_DISABLED, SESSION_REVOKED]);
        assert.deepEqual(rows.filter(wantedBy(narrow)).map(eventOf), [ACCOUNT_DISABLED]);
      } finally {
        await t.close();
      }
    });

    it('roles and entitlements concern no receiver: a PATCH of roles, and a catalog entry removed from its holders (grants.ts), signal nothing', async () => {
      const t = await createTestApp({ engine });
      try {
        await seedCatalog(t.storage, t.team.id, { roles: [{ value: 'admin' }, { value: 'viewer' }] });
        await insertSubscription(t.storage.db, stream(t.team.id));
        const next = follower(t.storage, t.team.id);
        const id = String(json(await t.request('POST', '/v2/scim/Users', { userName: 'ada@acme.example', roles: [{ value: 'admin' }] })).id);
        assert.equal((await t.request('PATCH', `/v2/scim/Users/${id}`, replace('roles', [{ value: 'admin' }, { value: 'viewer' }]))).statusCode, 200);
        const team = (await teamById(t.storage.db, t.team.id))!;
        const ctx = { storage: t.storage, clock: t.clock, baseUrl: BASE_URL, team, actor: CLI_ACTOR, requestId: 'req-force', cursorSecret: 'test', passwords: new PasswordHasher(), types: await loadTeamTypes(t.storage.db, team.id) };
        await t.storage.db.transaction().execute(async (trx) => assert.equal(await removeGrantFromUsers(ctx, trx, 'role', 'admin'), 1));
        const rows = await eventsAfter(t.storage.db, t.team.id, 0, 1000);
        assert.deepEqual(rows.map((r) => r.type), ['create', 'patch', 'patch'], 'the SCIM events, and no signal');
        assert.deepEqual(await next(), []);
      } finally {
        await t.close();
      }
    });

    it('a write that fails after its signals were appended leaves none (one transaction), and the user unchanged', async () => {
      // The counters' upsert (the last statement of a user write) runs, then fails while `failing`.
      const failing = { on: false };
      const wrap = (storage: Storage): Storage => {
        const inner = hot(storage.db);
        const afterwards = async <T>(name: string, ran: Promise<T>): Promise<T> => {
          const result = await ran;
          if (failing.on && name === 'addTeamCounts') throw new Error('injected failure after the counter bump');
          return result;
        };
        const statements: Statements = {
          all: (ex, def, params) => afterwards(def.name, inner.all(ex, def, params)),
          first: (ex, def, params) => afterwards(def.name, inner.first(ex, def, params)),
          shaped: (ex, query) => inner.shaped(ex, query),
          run: (ex, def, params) => afterwards(def.name, inner.run(ex, def, params)),
          write: (ex, def, params) => afterwards(def.name, inner.write(ex, def, params)),
        };
        return { ...storage, db: storage.db.withPlugin(new StorageCarrier(statements, hooksOf(storage.db))) };
      };
      const t: TestApp = await createTestApp({ engine, wrapStorage: wrap });
      try {
        await insertSubscription(t.storage.db, stream(t.team.id));
        const next = follower(t.storage, t.team.id);
        const id = String(json(await t.request('POST', '/v2/scim/Users', { userName: 'ada@acme.example' })).id);
        await next();
        failing.on = true;
        try {
          assert.equal((await t.request('PATCH', `/v2/scim/Users/${id}`, replace('active', false))).statusCode, 500);
          assert.equal((await t.request('POST', '/v2/scim/Users', { userName: 'bob@acme.example', password: 'correct horse battery staple' })).statusCode, 500);
        } finally {
          failing.on = false;
        }
        assert.deepEqual(await next(), []);
        assert.equal(json(await t.request('GET', `/v2/scim/Users/${id}`)).active, true);
        // The same write, not failing, signals.
        await t.request('PATCH', `/v2/scim/Users/${id}`, replace('active', false));
        assert.deepEqual((await next()).map(eventOf), [ACCOUNT_DISABLED, SESSION_REVOKED]);
      } finally {
        await t.close();
      }
    });
  });
}
