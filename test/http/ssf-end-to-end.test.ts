/**
 * The SSF 1.0 transmitter end to end (issue 33), as a receiver on 127.0.0.1 sees it: it reads
 * /.well-known/ssf-configuration, creates a push stream through the stream management API with
 * its own Authorization header, asks for verification and receives the verification SET, then
 * receives each user event type (RISC account-disabled, account-enabled, account-purged,
 * identifier-changed; CAEP credential-change, session-revoked) as the team's SCIM writes happen,
 * each SET signed (ES256, checked with jose against the JWKS at the configuration's jwks_uri),
 * explicitly typed, without `sub` or `exp`, with the user's subject. Pausing holds events, which
 * arrive after the stream is enabled again; a removed subject's events are not sent; another
 * team's deactivation never reaches this stream.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import type { JSONWebKeySet, JWTPayload } from 'jose';
import type { DeliverySettings } from '../../src/events/delivery.ts';
import { ACCOUNT_DISABLED, ACCOUNT_ENABLED, ACCOUNT_PURGED, CREDENTIAL_CHANGE, IDENTIFIER_CHANGED, SESSION_REVOKED, SIGNAL_EVENT_URIS } from '../../src/events/signals.ts';
import { subscriptionById } from '../../src/storage/repos/subscriptions.ts';
import { BASE_URL, createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { startReceiver } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';
import { until } from '../support/wait.ts';

const FAST: Partial<DeliverySettings> = { pollIntervalMs: 10, backoffBaseMs: 5, backoffMaxMs: 40, timeoutMs: 5_000 };
const VERIFICATION = 'https://schemas.openid.net/secevent/ssf/event-type/verification';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const HEADER = 'Bearer acme-receiver-credential-41b7';

for (const engine of engines) {
  describe(`SSF transmitter end to end (${engine.name})`, () => {
    let t: TestApp | undefined;
    const receivers: Receiver[] = [];
    afterEach(async () => {
      await t?.close();
      t = undefined;
      for (const r of receivers.splice(0)) await r.close().catch(() => {});
    });

    it('a receiver creates a push stream, verifies it, receives every user event type signed and with its subject, holds events while paused, and never sees another team\'s', async () => {
      // A team that shows deactivated users: its DELETE removes a user, which RISC calls account-purged.
      t = await createTestApp({ engine, deactivatedUsers: 'visible', deps: { delivery: FAST } });
      await t.app.ready();
      const app = t;
      const rx = await startReceiver();
      receivers.push(rx);
      const token = await app.tokenFor(app.team.id, ['ssf']);
      const ssf = (method: string, url: string, body?: unknown, bearer = token) =>
        app.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { payload: JSON.stringify(body) } : {}) });
      const scim = (method: string, url: string, body?: unknown, bearer = app.token) =>
        app.app.inject({ method: method as 'GET', url: `/v2/scim${url}`, headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined ? { 'content-type': 'application/scim+json' } : {}) }, ...(body !== undefined ? { payload: JSON.stringify(body) } : {}) });

      // Discovery: the issuer and the keys, from the configuration document.
      const config = json(await ssf('GET', '/.well-known/ssf-configuration'));
      assert.equal(config.issuer, BASE_URL);
      const jwksUri = new URL(String(config.jwks_uri));
      assert.equal(jwksUri.origin, BASE_URL);
      const jwks = json(await app.app.inject({ method: 'GET', url: jwksUri.pathname })) as unknown as JSONWebKeySet;
      const keys = createLocalJWKSet(jwks);
      assert.equal(new URL(String(config.configuration_endpoint)).pathname, '/v2/ssf/stream');

      const created = await ssf('POST', new URL(String(config.configuration_endpoint)).pathname, { delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: rx.url, authorization_header: HEADER }, events_requested: SIGNAL_EVENT_URIS, description: 'end to end' });
      assert.equal(created.statusCode, 201, created.body);
      const stream = json(created);
      const id = String(stream.stream_id);
      assert.deepEqual([...(stream.events_delivered as string[])].sort(), [...SIGNAL_EVENT_URIS].sort());

      /** Every SET received so far, verified (signature, typ, iss, aud), once per jti, in arrival order. */
      const received = async (): Promise<JWTPayload[]> => {
        const seen = new Set<string>();
        const out: JWTPayload[] = [];
        for (const r of rx.received) {
          assert.equal(r.contentType, 'application/secevent+jwt');
          assert.equal(r.headers.authorization, HEADER, 'SSF 6.1.1: the receiver\'s authorization_header on every push');
          const { payload, protectedHeader } = await jwtVerify(r.body, keys, { issuer: String(stream.iss), audience: String(stream.aud), algorithms: ['ES256'], typ: 'secevent+jwt' });
          assert.ok(protectedHeader.kid);
          assert.equal(payload.sub, undefined, 'SSF 4.1.2: no sub claim');
          assert.equal(payload.exp, undefined, 'SSF 4.1.6: no exp claim');
          if (!seen.has(String(payload.jti))) {
            seen.add(String(payload.jti));
            out.push(payload);
          }
        }
        return out;
      };
      const typeOf = (p: JWTPayload): string => {
        const types = Object.keys(p.events as object);
        assert.equal(types.length, 1, 'SSF 4.2.1: one event per SET');
        return types[0]!;
      };
      const arrived = async (n: number, what: string) => until(async () => (await received()).length >= n, what);

      // Verification: the SET names the stream and echoes the state.
      assert.equal((await ssf('POST', '/v2/ssf/verify', { stream_id: id, state: 'e2e-state-1' })).statusCode, 204);
      await arrived(1, 'the verification event');
      const [verification] = await received();
      assert.deepEqual(verification!.sub_id, { format: 'opaque', id });
      assert.deepEqual(verification!.events, { [VERIFICATION]: { state: 'e2e-state-1' } });

      // Each user event type, from the team's SCIM writes.
      const made = await scim('POST', '/Users', { schemas: [USER], userName: 'ann', externalId: 'ann-ext', emails: [{ value: 'ann@acme.example', primary: true }], password: 'a long enough passphrase 1' });
      assert.equal(made.statusCode, 201, made.body);
      const ann = String(json(made).id);
      const patch = (op: Record<string, unknown>) => scim('PATCH', `/Users/${ann}`, { schemas: [PATCH], Operations: [op] });
      assert.equal((await patch({ op: 'replace', path: 'active', value: false })).statusCode, 200);
      assert.equal((await patch({ op: 'replace', path: 'active', value: true })).statusCode, 200);
      assert.equal((await patch({ op: 'replace', path: 'emails', value: [{ value: 'ann.new@acme.example', primary: true }] })).statusCode, 200);
      assert.equal((await scim('DELETE', `/Users/${ann}`)).statusCode, 204);
      const expected = [CREDENTIAL_CHANGE, ACCOUNT_DISABLED, SESSION_REVOKED, ACCOUNT_ENABLED, IDENTIFIER_CHANGED, ACCOUNT_PURGED, SESSION_REVOKED];
      await arrived(1 + expected.length, 'every user event');
      const userSets = (await received()).slice(1);
      assert.deepEqual(userSets.map(typeOf), expected, 'in the order of the writes');
      assert.deepEqual(new Set(userSets.map(typeOf)), new Set(SIGNAL_EVENT_URIS), 'every supported user event type arrived');
      for (const p of userSets) {
        if (typeOf(p) === IDENTIFIER_CHANGED) {
          assert.deepEqual(p.sub_id, { format: 'email', email: 'ann@acme.example' }, 'RISC: the old identifier');
          assert.deepEqual(p.events, { [IDENTIFIER_CHANGED]: { 'new-value': 'ann.new@acme.example' } });
          continue;
        }
        const subject = p.sub_id as { format: string; identifiers: Record<string, unknown>[] };
        assert.equal(subject.format, 'aliases');
        assert.deepEqual(subject.identifiers.find((i) => i.format === 'iss_sub'), { format: 'iss_sub', iss: BASE_URL, sub: ann });
        assert.deepEqual(subject.identifiers.find((i) => i.format === 'scim'), { format: 'scim', uri: `/Users/${ann}`, externalId: 'ann-ext' });
        assert.ok(subject.identifiers.some((i) => i.format === 'email'));
      }
      const writes = userSets.map((p) => p.txn);
      assert.ok(writes.every((txn) => typeof txn === 'string'), 'SSF 4.1.7: txn set');
      // The delivery log of the subscription API holds the stream's pushes, as for any subscription.
      // (A push is logged once its answer is back, just after the receiver has recorded it: wait for the log.)
      const detail = async () => json(await app.app.inject({ method: 'GET', url: `/v2/events/subscriptions/${id}`, headers: { authorization: `Bearer ${app.token}` } })) as { format: string; attempts: { status: number | null }[] };
      await until(async () => (await detail()).attempts.filter((a) => a.status === 202).length >= 1 + expected.length, 'each push accepted in the delivery log');
      assert.equal((await detail()).format, 'ssf');

      // Paused: events are held (nothing goes out), and arrive once the stream is enabled again.
      // A second stream of the team, enabled, receives the same events meanwhile: once they have
      // reached it, delivery has run past them, and the paused stream has still received nothing.
      const sibling = await startReceiver();
      receivers.push(sibling);
      assert.equal((await ssf('POST', '/v2/ssf/stream', { delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: sibling.url }, events_requested: [CREDENTIAL_CHANGE, ACCOUNT_DISABLED, SESSION_REVOKED] })).statusCode, 201);
      assert.equal(json(await ssf('POST', '/v2/ssf/status', { stream_id: id, status: 'paused', reason: 'receiver maintenance' })).status, 'paused');
      const pausedAt = (await subscriptionById(app.storage.db, app.team.id, id))!.cursor;
      const made2 = await scim('POST', '/Users', { schemas: [USER], userName: 'bob', emails: [{ value: 'bob@acme.example' }], password: 'another long passphrase 2' });
      assert.equal(made2.statusCode, 201, made2.body);
      const bob = String(json(made2).id);
      assert.equal((await scim('PATCH', `/Users/${bob}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] })).statusCode, 200);
      await sibling.waitFor(3);
      const beforeResume = (await received()).length;
      assert.equal(beforeResume, 1 + expected.length, 'nothing of bob was sent while paused');
      const paused = (await subscriptionById(app.storage.db, app.team.id, id))!;
      assert.equal(paused.state, 'paused');
      assert.equal(paused.cursor, pausedAt, 'the paused stream\'s cursor stays where it was');
      assert.equal(json(await ssf('POST', '/v2/ssf/status', { stream_id: id, status: 'enabled' })).status, 'enabled');
      await arrived(beforeResume + 3, 'the held events');
      const held = (await received()).slice(beforeResume);
      assert.deepEqual(held.map(typeOf), [CREDENTIAL_CHANGE, ACCOUNT_DISABLED, SESSION_REVOKED]);
      assert.ok(held.every((p) => (p.sub_id as { identifiers: Record<string, unknown>[] }).identifiers.some((i) => i.format === 'iss_sub' && i.sub === bob)));

      // A removed subject's events are not sent; the stream's own events are.
      const removed = await ssf('POST', '/v2/ssf/subjects/remove', { stream_id: id, subject: { format: 'email', email: 'BOB@acme.example' } });
      assert.equal(removed.statusCode, 204);
      assert.equal((await scim('PATCH', `/Users/${bob}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: true }] })).statusCode, 200);

      // Another team with its own stream: its deactivation reaches its receiver, never this one.
      const other = await app.addTeam('globex');
      const otherRx = await startReceiver();
      receivers.push(otherRx);
      const otherToken = await app.tokenFor(other.team.id, ['ssf']);
      assert.equal((await ssf('POST', '/v2/ssf/stream', { delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: otherRx.url }, events_requested: [ACCOUNT_DISABLED] }, otherToken)).statusCode, 201);
      const stranger = String(json(await scim('POST', '/Users', { schemas: [USER], userName: 'stranger', emails: [{ value: 'stranger@globex.example' }] }, other.token)).id);
      assert.equal((await scim('PATCH', `/Users/${stranger}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] }, other.token)).statusCode, 200);
      await otherRx.waitFor(1);
      const otherSet = await jwtVerify(otherRx.received[0]!.body, keys, { issuer: BASE_URL, typ: 'secevent+jwt' });
      assert.deepEqual(Object.keys(otherSet.payload.events as object), [ACCOUNT_DISABLED]);

      // A marker after both: a verification of this stream, which comes after everything before it.
      app.clock.advance(30_000);
      assert.equal((await ssf('POST', '/v2/ssf/verify', { stream_id: id, state: 'marker' })).statusCode, 204);
      await until(async () => (await received()).some((p) => (p.events as Record<string, { state?: string }>)[VERIFICATION]?.state === 'marker'), 'the marker');
      const all = await received();
      const subjectIds = (p: JWTPayload) => JSON.stringify(p.sub_id);
      assert.ok(!all.some((p) => subjectIds(p).includes(stranger)), 'another team\'s deactivation never reaches this stream');
      const afterRemoval = all.slice(beforeResume + 3);
      assert.deepEqual(afterRemoval.map(typeOf), [VERIFICATION], 'bob, removed, is not sent his account-enabled; the marker is');
    });

    it('a receiver creates a poll stream (no delivery given), verifies it and a user event, and fetches both as signed SETs from the endpoint_url the transmitter supplied; acknowledged, they are not fetched again', async () => {
      t = await createTestApp({ engine });
      const app = t;
      const token = await app.tokenFor(app.team.id, ['ssf']);
      const call = (method: string, url: string, body?: unknown, bearer = token) =>
        app.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { payload: JSON.stringify(body) } : {}) });
      const created = await call('POST', '/v2/ssf/stream', { events_requested: [ACCOUNT_DISABLED] });
      assert.equal(created.statusCode, 201, created.body);
      const stream = json(created) as { stream_id: string; aud: string; iss: string; delivery: { method: string; endpoint_url: string } };
      assert.equal(stream.delivery.method, 'urn:ietf:rfc:8936');
      const pollPath = new URL(stream.delivery.endpoint_url).pathname;
      assert.equal((await call('POST', '/v2/ssf/verify', { stream_id: stream.stream_id, state: 'poll-state' })).statusCode, 204);
      const user = String(json(await app.app.inject({ method: 'POST', url: '/v2/scim/Users', headers: { authorization: `Bearer ${app.token}`, 'content-type': 'application/scim+json' }, payload: JSON.stringify({ schemas: [USER], userName: 'dee', emails: [{ value: 'dee@acme.example' }] }) })).id);
      assert.equal((await app.app.inject({ method: 'PATCH', url: `/v2/scim/Users/${user}`, headers: { authorization: `Bearer ${app.token}`, 'content-type': 'application/scim+json' }, payload: JSON.stringify({ schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] }) })).statusCode, 200);

      const polled = await call('POST', pollPath, { returnImmediately: true, maxEvents: 10 });
      assert.equal(polled.statusCode, 200, polled.body);
      const sets = (json(polled) as { sets: Record<string, string> }).sets;
      const keys = createLocalJWKSet(json(await app.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })) as unknown as JSONWebKeySet);
      const payloads = [];
      for (const jwt of Object.values(sets)) payloads.push((await jwtVerify(jwt, keys, { issuer: stream.iss, audience: stream.aud, typ: 'secevent+jwt', algorithms: ['ES256'] })).payload);
      assert.deepEqual(payloads.map((p) => Object.keys(p.events as object)[0]).sort(), [ACCOUNT_DISABLED, VERIFICATION].sort(), 'the verification event and the one requested event type (not session-revoked)');
      const again = await call('POST', pollPath, { ack: Object.keys(sets), returnImmediately: true });
      assert.equal(again.statusCode, 200, again.body);
      assert.deepEqual((json(again) as { sets: Record<string, string> }).sets, {});
      const otherTeam = await app.addTeam('globex');
      const theirs = await app.tokenFor(otherTeam.team.id, ['ssf']);
      assert.equal((await call('POST', pollPath, { returnImmediately: true }, theirs)).statusCode, 404, 'another team cannot poll this stream');
    });
  });
}
