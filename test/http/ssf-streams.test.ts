/**
 * The SSF 1.0 transmitter's stream management API (issue 33 item 1, OpenID Shared Signals
 * Framework 1.0 sections 7 and 8), at the HTTP level on every engine: the configuration document,
 * create (push, poll, the egress policy, the ssf.streams budget), read, update, replace, delete,
 * status (the cursor semantics of paused and disabled), subjects, verification (a feed row for
 * that stream only, min_verification_interval), authorization (401, 403, another team's stream a
 * 404), and what the existing subscription API may do to a stream.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { signalOf, SIGNAL } from '../../src/events/feed.ts';
import { signalClaims } from '../../src/events/set.ts';
import { eventsAfter, lastSeq } from '../../src/storage/repos/events.ts';
import { subjectsOf } from '../../src/storage/repos/ssf-streams.ts';
import { subscriptionById } from '../../src/storage/repos/subscriptions.ts';
import { revokeToken } from '../../src/storage/repos/tokens.ts';
import { BASE_URL, createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

const PUSH = 'urn:ietf:rfc:8935';
const POLL = 'urn:ietf:rfc:8936';
const RISC = 'https://schemas.openid.net/secevent/risc/event-type';
const CAEP = 'https://schemas.openid.net/secevent/caep/event-type';
const VERIFICATION = 'https://schemas.openid.net/secevent/ssf/event-type/verification';
const STREAM_UPDATED = 'https://schemas.openid.net/secevent/ssf/event-type/stream-updated';
const RECEIVER = 'http://127.0.0.1:9/ssf/events';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';

for (const engine of engines) {
  describe(`SSF 1.0 stream management (${engine.name})`, () => {
    let t: TestApp | undefined;
    afterEach(async () => {
      await t?.close();
      t = undefined;
    });

    const call = (token: string | undefined, method: string, url: string, body?: unknown) =>
      t!.app.inject({
        method: method as 'GET',
        url,
        headers: { ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
    const setup = async () => {
      t = await createTestApp({ engine });
      return t.tokenFor(t.team.id, ['ssf']);
    };
    const createPush = async (token: string, extra: Record<string, unknown> = {}) => {
      const r = await call(token, 'POST', '/v2/ssf/stream', { delivery: { method: PUSH, endpoint_url: RECEIVER }, events_requested: [`${RISC}/account-disabled`, `${CAEP}/session-revoked`], ...extra });
      assert.equal(r.statusCode, 201, r.body);
      return json(r);
    };
    const addUser = async (userName: string, email: string, externalId?: string) => {
      const r = await t!.request('POST', '/v2/scim/Users', { schemas: [USER], userName, emails: [{ value: email, primary: true }], ...(externalId ? { externalId } : {}) });
      assert.equal(r.statusCode, 201, r.body);
      return String(json(r).id);
    };
    const subscription = async (id: string) => (await subscriptionById(t!.storage.db, t!.team.id, id))!;

    it('an authorization_header that is not one line of visible ASCII (non-ASCII, control characters) is refused at create, PATCH and PUT with 400 invalid_request, the stream unchanged', async () => {
      const token = await setup();
      const stream = await createPush(token, { delivery: { method: PUSH, endpoint_url: RECEIVER, authorization_header: 'Bearer good\tone ~!' } });
      const id = String(stream.stream_id);
      const before = await subscription(id);
      for (const header of ['Bearer caf\u00e9', 'Bearer \u2603', 'Bearer a\u0001b', 'Bearer a\u007fb', 'Bearer a\u0085b', 'Bearer a\rb', 'Bearer a\nb']) {
        const delivery = { method: PUSH, endpoint_url: RECEIVER, authorization_header: header };
        for (const [method, body] of [
          ['POST', { delivery }],
          ['PATCH', { stream_id: id, delivery }],
          ['PUT', { stream_id: id, delivery, events_requested: [`${RISC}/account-disabled`] }],
        ] as const) {
          const bad = await call(token, method, '/v2/ssf/stream', body);
          assert.equal(bad.statusCode, 400, `${method} ${JSON.stringify(header)}: ${bad.body}`);
          assert.equal(json(bad).error, 'invalid_request');
          assert.match(String(json(bad).error_description), /authorization_header/);
        }
      }
      assert.deepEqual(await subscription(id), before, 'the stream is unchanged');
      assert.equal((json(await call(token, 'GET', '/v2/ssf/stream')) as unknown as unknown[]).length, 1, 'no stream created');
    });

    it('SSF 7.1: /.well-known/ssf-configuration names the issuer, the JWKS, both delivery methods, every endpoint and OAuth 2.0 authorization, without a token', async () => {
      t = await createTestApp({ engine });
      const r = await call(undefined, 'GET', '/.well-known/ssf-configuration');
      assert.equal(r.statusCode, 200, r.body);
      assert.match(String(r.headers['content-type']), /^application\/json/);
      assert.deepEqual(json(r), {
        spec_version: '1_0',
        issuer: BASE_URL,
        jwks_uri: `${BASE_URL}/.well-known/jwks.json`,
        delivery_methods_supported: [PUSH, POLL],
        configuration_endpoint: `${BASE_URL}/v2/ssf/stream`,
        status_endpoint: `${BASE_URL}/v2/ssf/status`,
        add_subject_endpoint: `${BASE_URL}/v2/ssf/subjects/add`,
        remove_subject_endpoint: `${BASE_URL}/v2/ssf/subjects/remove`,
        verification_endpoint: `${BASE_URL}/v2/ssf/verify`,
        authorization_schemes: [{ spec_urn: 'urn:ietf:rfc:6749' }],
        default_subjects: 'ALL',
      });
      const jwks = await call(undefined, 'GET', '/.well-known/jwks.json');
      assert.equal(jwks.statusCode, 200, 'the jwks_uri it names answers');
    });

    it('SSF 8.1.1.1: a push stream is created (201) with the transmitter-supplied properties; its authorization_header is sealed, never shown; it starts at the end of the feed', async () => {
      const token = await setup();
      await addUser('before@acme.example', 'before@acme.example');
      const stream = await createPush(token, { description: 'Receiver A', delivery: { method: PUSH, endpoint_url: RECEIVER, authorization_header: 'Bearer receiver-secret-123' }, events_requested: [`${RISC}/account-disabled`, 'urn:example:unknown', `${CAEP}/session-revoked`] });
      assert.equal(typeof stream.stream_id, 'string');
      assert.equal(stream.iss, BASE_URL);
      assert.equal(stream.aud, RECEIVER, 'no OAuth client: the audience is the endpoint');
      assert.deepEqual(stream.delivery, { method: PUSH, endpoint_url: RECEIVER });
      assert.deepEqual(stream.events_requested, [`${RISC}/account-disabled`, 'urn:example:unknown', `${CAEP}/session-revoked`]);
      assert.deepEqual(stream.events_delivered, [`${RISC}/account-disabled`, `${CAEP}/session-revoked`], 'requested and supported; unknown URIs ignored');
      assert.ok((stream.events_supported as string[]).includes(`${RISC}/account-enabled`));
      assert.equal(stream.description, 'Receiver A');
      assert.equal(stream.min_verification_interval, 30);
      assert.doesNotMatch(JSON.stringify(stream), /receiver-secret-123/);
      const row = await subscription(String(stream.stream_id));
      assert.equal(row.format, 'ssf');
      assert.equal(row.method, 'push');
      assert.equal(row.url, RECEIVER);
      assert.equal(row.cursor, await lastSeq(t!.storage.db, t!.team.id));
      assert.doesNotMatch(row.ssf!, /receiver-secret-123/, 'sealed at rest');
      assert.ok((JSON.parse(row.ssf!) as { authorizationHeader?: string }).authorizationHeader);
      const read = await call(token, 'GET', `/v2/ssf/stream?stream_id=${String(stream.stream_id)}`);
      assert.equal(read.statusCode, 200);
      assert.equal(read.headers['cache-control'], 'no-store');
      assert.deepEqual(json(read), stream);
      assert.doesNotMatch(read.body, /receiver-secret-123|authorization_header/);
    });

    it('SSF 8.1.1.1: without delivery a poll stream, whose endpoint_url the transmitter supplies; a poll endpoint_url from the receiver, an unknown method, a push without endpoint are 400', async () => {
      const token = await setup();
      const r = await call(token, 'POST', '/v2/ssf/stream', { events_requested: [`${RISC}/account-purged`] });
      assert.equal(r.statusCode, 201, r.body);
      const stream = json(r);
      assert.deepEqual(stream.delivery, { method: POLL, endpoint_url: `${BASE_URL}/v2/ssf/poll/${String(stream.stream_id)}` });
      assert.equal((await subscription(String(stream.stream_id))).method, 'poll');
      const empty = await call(token, 'POST', '/v2/ssf/stream');
      assert.equal(empty.statusCode, 201, 'no body at all: a poll stream');
      assert.deepEqual(json(empty).events_delivered, []);
      for (const body of [
        { delivery: { method: POLL, endpoint_url: 'https://receiver.example/poll' } },
        { delivery: { method: 'urn:example:carrier-pigeon' } },
        { delivery: { method: PUSH } },
        { delivery: { method: PUSH, endpoint_url: RECEIVER, authorization_header: 'Bearer a\r\nX-Injected: 1' } },
        { events_requested: 'all' },
        { description: 42 },
      ]) {
        const bad = await call(token, 'POST', '/v2/ssf/stream', body);
        assert.equal(bad.statusCode, 400, `${JSON.stringify(body)}: ${bad.body}`);
        assert.equal(json(bad).error, 'invalid_request');
        assert.equal(typeof json(bad).error_description, 'string');
      }
      const notJson = await t!.app.inject({ method: 'POST', url: '/v2/ssf/stream', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: '{"delivery":' });
      assert.equal(notJson.statusCode, 400);
      assert.equal(json(notJson).error, 'invalid_request');
      const text = await t!.app.inject({ method: 'POST', url: '/v2/ssf/stream', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/xml' }, payload: '<delivery/>' });
      assert.equal(text.statusCode, 415, text.body);
      assert.equal(json(text).error, 'invalid_request');
      const huge = await t!.app.inject({ method: 'POST', url: '/v2/ssf/stream', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify({ description: 'x'.repeat(2 * 1024 * 1024) }) });
      assert.equal(huge.statusCode, 413, huge.body.slice(0, 200));
      assert.equal(json(huge).error, 'invalid_request');
      const deep = await t!.app.inject({ method: 'POST', url: '/v2/ssf/stream', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: `${'['.repeat(200)}${']'.repeat(200)}` });
      assert.equal(deep.statusCode, 400);
      const array = await call(token, 'POST', '/v2/ssf/stream', [1, 2]);
      assert.equal(array.statusCode, 400, 'the body must be an object');
    });

    it('a push endpoint follows the egress policy of push subscriptions: a private address is refused (400) and nothing is created', async () => {
      const token = await setup();
      for (const url of ['https://10.1.2.3/events', 'http://receiver.example/events', 'not a url']) {
        const r = await call(token, 'POST', '/v2/ssf/stream', { delivery: { method: PUSH, endpoint_url: url } });
        assert.equal(r.statusCode, 400, `${url}: ${r.body}`);
        assert.match(String(json(r).error_description), /endpoint_url/);
      }
      assert.deepEqual(json(await call(token, 'GET', '/v2/ssf/stream')), []);
    });

    it('the ssf.streams budget caps a team\'s streams (403 over it, SSF 8.1.1.1), apart from its subscriptions budget', async () => {
      t = await createTestApp({ engine });
      await t.storage.db.updateTable('teams').set({ limits: JSON.stringify({ 'ssf.streams': 2, subscriptions: 1 }) }).where('id', '=', t.team.id).execute();
      const token = await t.tokenFor(t.team.id, ['ssf']);
      await createPush(token);
      assert.equal((await call(token, 'POST', '/v2/ssf/stream', {})).statusCode, 201);
      const over = await call(token, 'POST', '/v2/ssf/stream', {});
      assert.equal(over.statusCode, 403, over.body);
      assert.equal(json(over).error, 'stream_limit_reached');
      assert.match(String(json(over).error_description), /ssf\.streams/);
      assert.equal((json(await call(token, 'GET', '/v2/ssf/stream')) as unknown as unknown[]).length, 2);
      const admin = await t.tokenFor(t.team.id, ['read', 'write']);
      const sub = await t.app.inject({ method: 'POST', url: '/v2/events/subscriptions', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, payload: JSON.stringify({ method: 'poll' }) });
      assert.equal(sub.statusCode, 201, `streams do not spend the subscriptions budget: ${sub.body}`);
    });

    it('SSF 8.1.1.2: GET without stream_id lists the team\'s streams (an empty array when none); an unknown stream_id is a 404', async () => {
      const token = await setup();
      const none = await call(token, 'GET', '/v2/ssf/stream');
      assert.equal(none.statusCode, 200);
      assert.deepEqual(json(none), []);
      const a = await createPush(token);
      const b = json(await call(token, 'POST', '/v2/ssf/stream', {}));
      const all = json(await call(token, 'GET', '/v2/ssf/stream')) as unknown as Record<string, unknown>[];
      assert.deepEqual(all.map((s) => s.stream_id).sort(), [a.stream_id, b.stream_id].sort());
      const missing = await call(token, 'GET', '/v2/ssf/stream?stream_id=NOPE');
      assert.equal(missing.statusCode, 404);
      assert.equal(json(missing).error, 'not_found');
    });

    it('SSF 8.1.1.3: PATCH changes the receiver-supplied properties present, keeps the others; transmitter-supplied ones must match (400)', async () => {
      const token = await setup();
      const stream = await createPush(token, { description: 'first' });
      const id = String(stream.stream_id);
      const r = await call(token, 'PATCH', '/v2/ssf/stream', { stream_id: id, events_requested: [`${RISC}/account-enabled`, `${CAEP}/credential-change`], iss: BASE_URL, events_delivered: stream.events_delivered });
      assert.equal(r.statusCode, 200, r.body);
      const updated = json(r);
      assert.deepEqual(updated.events_delivered, [`${RISC}/account-enabled`, `${CAEP}/credential-change`]);
      assert.equal(updated.description, 'first', 'not in the request: kept');
      assert.deepEqual(updated.delivery, stream.delivery);
      for (const [body, why] of [
        [{ stream_id: id, iss: 'https://other.example' }, 'iss'],
        [{ stream_id: id, aud: 'someone-else' }, 'aud'],
        [{ stream_id: id, events_delivered: [`${RISC}/account-purged`] }, 'events_delivered'],
        [{ stream_id: id, min_verification_interval: 1 }, 'min_verification_interval'],
        [{ stream_id: id, delivery: { method: PUSH, endpoint_url: 'https://10.0.0.1/x' } }, 'endpoint_url'],
        [{ description: 'no id' }, 'stream_id'],
      ] as const) {
        const bad = await call(token, 'PATCH', '/v2/ssf/stream', body);
        assert.equal(bad.statusCode, 400, `${why}: ${bad.body}`);
        assert.match(String(json(bad).error_description), new RegExp(why));
      }
      assert.equal((await call(token, 'PATCH', '/v2/ssf/stream', { stream_id: 'NOPE', description: 'x' })).statusCode, 404);
      const moved = await call(token, 'PATCH', '/v2/ssf/stream', { stream_id: id, delivery: { method: PUSH, endpoint_url: 'http://127.0.0.1:10/other' } });
      assert.equal(moved.statusCode, 200, moved.body);
      assert.equal((await subscription(id)).url, 'http://127.0.0.1:10/other');
      assert.equal(json(moved).aud, RECEIVER, 'aud cannot be updated');
    });

    it('SSF 8.1.1.4: PUT replaces the receiver-supplied properties (a missing one is deleted; delivery is required); a push stream may become a poll stream', async () => {
      const token = await setup();
      const stream = await createPush(token, { description: 'will go', delivery: { method: PUSH, endpoint_url: RECEIVER, authorization_header: 'Bearer x' } });
      const id = String(stream.stream_id);
      const noDelivery = await call(token, 'PUT', '/v2/ssf/stream', { stream_id: id, events_requested: [`${RISC}/account-disabled`] });
      assert.equal(noDelivery.statusCode, 400, noDelivery.body);
      const r = await call(token, 'PUT', '/v2/ssf/stream', { stream_id: id, delivery: { method: POLL } });
      assert.equal(r.statusCode, 200, r.body);
      const replaced = json(r);
      assert.equal(replaced.description, undefined);
      assert.equal(replaced.events_requested, undefined);
      assert.deepEqual(replaced.events_delivered, []);
      assert.deepEqual(replaced.delivery, { method: POLL, endpoint_url: `${BASE_URL}/v2/ssf/poll/${id}` });
      const row = await subscription(id);
      assert.equal(row.method, 'poll');
      assert.equal(row.url, null);
      assert.equal((JSON.parse(row.ssf!) as { authorizationHeader?: string }).authorizationHeader, undefined, 'the push header went with the push delivery');
      const again = await call(token, 'PUT', '/v2/ssf/stream', { stream_id: id, delivery: replaced.delivery, events_requested: [`${RISC}/identifier-changed`], description: 'back' });
      assert.equal(again.statusCode, 200, 'the poll endpoint_url given back, as read, matches');
      assert.deepEqual(json(again).events_delivered, [`${RISC}/identifier-changed`]);
    });

    it('SSF 8.1.1.5: DELETE removes the stream and its subjects (204), then it is a 404; stream_id is required', async () => {
      const token = await setup();
      const userId = await addUser('gone@acme.example', 'gone@acme.example');
      const id = String((await createPush(token)).stream_id);
      assert.equal((await call(token, 'POST', '/v2/ssf/subjects/remove', { stream_id: id, subject: { format: 'opaque', id: userId } })).statusCode, 204);
      assert.equal((await subjectsOf(t!.storage.db, id)).length, 1);
      assert.equal((await call(token, 'DELETE', '/v2/ssf/stream')).statusCode, 400);
      const r = await call(token, 'DELETE', `/v2/ssf/stream?stream_id=${id}`);
      assert.equal(r.statusCode, 204, r.body);
      assert.equal((await call(token, 'GET', `/v2/ssf/stream?stream_id=${id}`)).statusCode, 404);
      assert.equal((await call(token, 'DELETE', `/v2/ssf/stream?stream_id=${id}`)).statusCode, 404);
      assert.deepEqual(await subjectsOf(t!.storage.db, id), []);
      const audit = await t!.storage.db.selectFrom('audit_events').select('action').where('resource_id', '=', id).orderBy('at').execute();
      assert.deepEqual(audit.map((a) => a.action), ['stream_created', 'stream_subject_removed', 'stream_deleted']);
    });

    it('SSF 8.1.2: status enabled, paused (events held: the cursor stays), disabled (events dropped: enabling starts after the feed\'s end); the receiver\'s own change sends no stream-updated event', async () => {
      const token = await setup();
      const id = String((await createPush(token)).stream_id);
      const start = (await subscription(id)).cursor;
      assert.deepEqual(json(await call(token, 'GET', `/v2/ssf/status?stream_id=${id}`)), { stream_id: id, status: 'enabled' });

      const paused = await call(token, 'POST', '/v2/ssf/status', { stream_id: id, status: 'paused', reason: 'maintenance' });
      assert.equal(paused.statusCode, 200, paused.body);
      assert.deepEqual(json(paused), { stream_id: id, status: 'paused', reason: 'maintenance' });
      assert.equal((await subscription(id)).state, 'paused');
      await addUser('held@acme.example', 'held@acme.example');
      const enabled = await call(token, 'POST', '/v2/ssf/status', { stream_id: id, status: 'enabled' });
      assert.deepEqual(json(enabled), { stream_id: id, status: 'enabled' });
      let row = await subscription(id);
      assert.equal(row.state, 'active');
      assert.equal(row.cursor, start, 'paused: what happened meanwhile is still ahead of the cursor');

      assert.equal((await call(token, 'POST', '/v2/ssf/status', { stream_id: id, status: 'disabled' })).statusCode, 200);
      assert.equal((await subscription(id)).state, 'paused');
      assert.equal(json(await call(token, 'GET', `/v2/ssf/status?stream_id=${id}`)).status, 'disabled');
      await addUser('dropped@acme.example', 'dropped@acme.example');
      assert.equal((await call(token, 'POST', '/v2/ssf/status', { stream_id: id, status: 'enabled' })).statusCode, 200);
      row = await subscription(id);
      assert.equal(row.state, 'active');
      assert.equal(row.cursor, await lastSeq(t!.storage.db, t!.team.id), 'disabled: what happened meanwhile is dropped');
      const rows = await eventsAfter(t!.storage.db, t!.team.id, 0, 100);
      assert.equal(rows.filter((r) => r.type === SIGNAL && signalOf(r).event === STREAM_UPDATED).length, 0);

      for (const body of [{ stream_id: id, status: 'off' }, { stream_id: id }, { status: 'paused' }, { stream_id: id, status: 'paused', reason: 7 }]) {
        assert.equal((await call(token, 'POST', '/v2/ssf/status', body)).statusCode, 400, JSON.stringify(body));
      }
      assert.equal((await call(token, 'GET', '/v2/ssf/status?stream_id=NOPE')).statusCode, 404);
      assert.equal((await call(token, 'POST', '/v2/ssf/status', { stream_id: 'NOPE', status: 'paused' })).statusCode, 404);
      assert.equal((await call(token, 'GET', '/v2/ssf/status')).statusCode, 400);
    });

    it('revoking the token that created a stream pauses it (status paused, with the reason); enabling it with another token takes it over', async () => {
      const token = await setup();
      const id = String((await createPush(token)).stream_id);
      const hash = (await subscription(id)).creator_token!;
      assert.ok(await revokeToken(t!.storage.db, hash, new Date().toISOString()));
      const other = await t!.tokenFor(t!.team.id, ['ssf']);
      const status = json(await call(other, 'GET', `/v2/ssf/status?stream_id=${id}`));
      assert.equal(status.status, 'paused');
      assert.match(String(status.reason), /credential was revoked/);
      assert.equal(json(await call(other, 'POST', '/v2/ssf/status', { stream_id: id, status: 'enabled' })).status, 'enabled');
      const row = await subscription(id);
      assert.equal(row.state, 'active');
      assert.notEqual(row.creator_token, hash, 'the enabling token took it over');
    });

    it('SSF 8.1.3: subjects added (200) and removed (204) by email (any case), iss_sub, scim uri or externalId, opaque and aliases; a subject naming nobody is answered the same (subject probing); a malformed one is 400', async () => {
      const token = await setup();
      const ann = await addUser('ann', 'Ann@Acme.example', 'ext-ann');
      const bob = await addUser('bob', 'bob@acme.example', 'ext-bob');
      const cy = await addUser('cy', 'cy@acme.example');
      const id = String((await createPush(token)).stream_id);
      const marks = async () => Object.fromEntries((await subjectsOf(t!.storage.db, id)).map((s) => [s.user_id, s.included]));
      const remove = (subject: unknown) => call(token, 'POST', '/v2/ssf/subjects/remove', { stream_id: id, subject });
      const add = (subject: unknown, verified?: boolean) => call(token, 'POST', '/v2/ssf/subjects/add', { stream_id: id, subject, ...(verified !== undefined ? { verified } : {}) });

      let r = await remove({ format: 'email', email: 'ann@ACME.example' });
      assert.equal(r.statusCode, 204, r.body);
      assert.equal(r.body, '');
      assert.deepEqual(await marks(), { [ann]: 0 });
      assert.equal((await remove({ format: 'iss_sub', iss: BASE_URL, sub: bob })).statusCode, 204);
      assert.equal((await remove({ format: 'scim', uri: `${BASE_URL}/v2/scim/Users/${cy}` })).statusCode, 204);
      assert.deepEqual(await marks(), { [ann]: 0, [bob]: 0, [cy]: 0 });

      r = await add({ format: 'scim', externalId: 'ext-ann' }, true);
      assert.equal(r.statusCode, 200, r.body);
      assert.equal(r.body, '');
      assert.equal((await add({ format: 'opaque', id: bob })).statusCode, 200);
      assert.equal((await add({ format: 'aliases', identifiers: [{ format: 'phone_number', phone_number: '+12065550100' }, { format: 'scim', uri: `/Users/${cy}` }] })).statusCode, 200);
      assert.equal((await add({ format: 'complex', user: { format: 'email', email: 'cy@acme.example' }, tenant: { format: 'opaque', id: 't1' } })).statusCode, 200);
      assert.deepEqual(await marks(), { [ann]: 1, [bob]: 1, [cy]: 1 });

      // Subjects naming nobody the team knows: the same answers, nothing written.
      for (const subject of [
        { format: 'email', email: 'nobody@acme.example' },
        { format: 'iss_sub', iss: 'https://other-issuer.example', sub: ann },
        { format: 'opaque', id: 'NO-SUCH-USER' },
        { format: 'phone_number', phone_number: '+12065550123' },
        { format: 'opaque', id },
      ]) {
        assert.equal((await remove(subject)).statusCode, 204, JSON.stringify(subject));
        assert.equal((await add(subject)).statusCode, 200, JSON.stringify(subject));
      }
      assert.deepEqual(await marks(), { [ann]: 1, [bob]: 1, [cy]: 1 });

      for (const subject of [undefined, 'ann@acme.example', { email: 'no-format@acme.example' }, { format: 'email' }, { format: 'iss_sub', iss: BASE_URL }, { format: 'scim' }, { format: 'aliases', identifiers: [] }]) {
        const bad = await call(token, 'POST', '/v2/ssf/subjects/add', { stream_id: id, ...(subject !== undefined ? { subject } : {}) });
        assert.equal(bad.statusCode, 400, `${JSON.stringify(subject)}: ${bad.body}`);
      }
      assert.equal((await add({ format: 'opaque', id: ann }, 'yes' as unknown as boolean)).statusCode, 400);
      assert.equal((await call(token, 'POST', '/v2/ssf/subjects/add', { stream_id: 'NOPE', subject: { format: 'opaque', id: ann } })).statusCode, 404);
      assert.equal((await call(token, 'POST', '/v2/ssf/subjects/remove', { stream_id: 'NOPE', subject: { format: 'opaque', id: ann } })).statusCode, 404);

      // Another team's user is nobody here.
      const other = await t!.addTeam('globex');
      const stranger = String(json(await t!.app.inject({ method: 'POST', url: '/v2/scim/Users', headers: { authorization: `Bearer ${other.token}`, 'content-type': 'application/scim+json' }, payload: JSON.stringify({ schemas: [USER], userName: 'stranger', emails: [{ value: 'ann@acme.example' }] }) })).id);
      assert.equal((await remove({ format: 'opaque', id: stranger })).statusCode, 204);
      assert.deepEqual(await marks(), { [ann]: 1, [bob]: 1, [cy]: 1 });
    });

    it('SSF 8.1.4.2: a verification request appends one verification event for that stream only, its state echoed (204); another within min_verification_interval is a 429 with Retry-After', async () => {
      const token = await setup();
      const id = String((await createPush(token)).stream_id);
      const otherStream = String((await createPush(token)).stream_id);
      const before = await lastSeq(t!.storage.db, t!.team.id);
      const r = await call(token, 'POST', '/v2/ssf/verify', { stream_id: id, state: 'VGhpcyBpcyBhbiBleGFtcGxl' });
      assert.equal(r.statusCode, 204, r.body);
      const rows = (await eventsAfter(t!.storage.db, t!.team.id, before, 100)).filter((row) => row.type === SIGNAL);
      assert.equal(rows.length, 1);
      const signal = signalOf(rows[0]!);
      assert.equal(signal.stream, id, 'for this stream only');
      assert.equal(signal.event, VERIFICATION);
      assert.deepEqual(signal.subject, { format: 'opaque', id });
      assert.deepEqual(signal.payload, { state: 'VGhpcyBpcyBhbiBleGFtcGxl' });
      const claims = signalClaims(rows[0]!, { issuer: BASE_URL, audience: RECEIVER });
      assert.deepEqual(claims.sub_id, { format: 'opaque', id });
      assert.deepEqual(claims.events, { [VERIFICATION]: { state: 'VGhpcyBpcyBhbiBleGFtcGxl' } });
      assert.equal(claims.sub, undefined, 'SSF 4.1.2: no sub claim');

      const soon = await call(token, 'POST', '/v2/ssf/verify', { stream_id: id });
      assert.equal(soon.statusCode, 429, soon.body);
      assert.equal(json(soon).error, 'too_many_requests');
      assert.ok(Number(soon.headers['retry-after']) >= 1);
      assert.equal((await call(token, 'POST', '/v2/ssf/verify', { stream_id: otherStream })).statusCode, 204, 'each stream has its own interval');
      t!.clock.advance(30_000);
      const later = await call(token, 'POST', '/v2/ssf/verify', { stream_id: id });
      assert.equal(later.statusCode, 204, later.body);
      const all = (await eventsAfter(t!.storage.db, t!.team.id, before, 100)).filter((row) => row.type === SIGNAL);
      assert.deepEqual(all.map((row) => [signalOf(row).stream, signalOf(row).payload]), [[id, { state: 'VGhpcyBpcyBhbiBleGFtcGxl' }], [otherStream, {}], [id, {}]]);
      assert.equal((await call(token, 'POST', '/v2/ssf/verify', { stream_id: id, state: 5 })).statusCode, 400);
      assert.equal((await call(token, 'POST', '/v2/ssf/verify', { stream_id: 'NOPE' })).statusCode, 404);
    });

    it('authorization: no token 401, a bad token 401, a token without the ssf scope 403 (RFC 6750 WWW-Authenticate); another team\'s stream is a 404 on every endpoint', async () => {
      const token = await setup();
      const id = String((await createPush(token)).stream_id);
      const none = await call(undefined, 'POST', '/v2/ssf/stream', {});
      assert.equal(none.statusCode, 401);
      assert.equal(json(none).error, 'invalid_token');
      assert.match(String(none.headers['www-authenticate']), /^Bearer /);
      const bad = await call('rc_at_not-a-token', 'GET', '/v2/ssf/stream');
      assert.equal(bad.statusCode, 401);
      assert.match(String(bad.headers['www-authenticate']), /invalid_token/);
      const scimToken = t!.token;
      for (const [method, url, body] of [
        ['POST', '/v2/ssf/stream', {}],
        ['GET', '/v2/ssf/stream', undefined],
        ['GET', `/v2/ssf/status?stream_id=${id}`, undefined],
        ['POST', '/v2/ssf/verify', { stream_id: id }],
        ['DELETE', `/v2/ssf/stream?stream_id=${id}`, undefined],
      ] as const) {
        const r = await call(scimToken, method, url, body);
        assert.equal(r.statusCode, 403, `${method} ${url}: ${r.body}`);
        assert.equal(json(r).error, 'insufficient_scope');
        assert.match(String(r.headers['www-authenticate']), /insufficient_scope.*scope="ssf"/);
      }
      const other = await t!.addTeam('globex');
      const theirs = await t!.tokenFor(other.team.id, ['ssf']);
      assert.deepEqual(json(await call(theirs, 'GET', '/v2/ssf/stream')), [], 'another team sees none of these streams');
      for (const [method, url, body] of [
        ['GET', `/v2/ssf/stream?stream_id=${id}`, undefined],
        ['PATCH', '/v2/ssf/stream', { stream_id: id, description: 'mine now' }],
        ['PUT', '/v2/ssf/stream', { stream_id: id, delivery: { method: POLL } }],
        ['GET', `/v2/ssf/status?stream_id=${id}`, undefined],
        ['POST', '/v2/ssf/status', { stream_id: id, status: 'disabled' }],
        ['POST', '/v2/ssf/subjects/add', { stream_id: id, subject: { format: 'opaque', id: 'x' } }],
        ['POST', '/v2/ssf/subjects/remove', { stream_id: id, subject: { format: 'opaque', id: 'x' } }],
        ['POST', '/v2/ssf/verify', { stream_id: id }],
        ['DELETE', `/v2/ssf/stream?stream_id=${id}`, undefined],
      ] as const) {
        const r = await call(theirs, method, url, body);
        assert.equal(r.statusCode, 404, `${method} ${url}: ${r.body}`);
      }
      assert.equal(json(await call(token, 'GET', `/v2/ssf/status?stream_id=${id}`)).status, 'enabled', 'untouched');
    });

    it('the subscription API shows a stream as format ssf; it may replay, resume (the transmitter re-enables: a stream-updated event) and delete it, never pause it or treat it as a subscription id of the SSF API', async () => {
      const token = await setup();
      const id = String((await createPush(token)).stream_id);
      const admin = t!.token;
      const sub = (method: string, url: string, body?: unknown) => t!.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${admin}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { payload: JSON.stringify(body) } : {}) });
      const plain = json(await sub('POST', '/v2/events/subscriptions', { method: 'poll' }));
      const listed = json(await sub('GET', '/v2/events/subscriptions')).subscriptions as Record<string, unknown>[];
      const shown = listed.find((s) => s.id === id)!;
      assert.equal(shown.format, 'ssf');
      assert.equal(shown.method, 'push');
      assert.equal(shown.url, RECEIVER);
      assert.equal(shown.events, null);

      const paused = await sub('POST', `/v2/events/subscriptions/${id}/pause`, {});
      assert.equal(paused.statusCode, 400, paused.body);
      assert.match(String(json(paused).detail), /SSF status endpoint/);
      assert.equal((await subscription(id)).state, 'active');

      assert.equal((await call(token, 'POST', '/v2/ssf/status', { stream_id: id, status: 'disabled' })).statusCode, 200);
      await addUser('meanwhile@acme.example', 'meanwhile@acme.example');
      const resumed = await sub('POST', `/v2/events/subscriptions/${id}/resume`, {});
      assert.equal(resumed.statusCode, 200, resumed.body);
      assert.deepEqual(json(await call(token, 'GET', `/v2/ssf/status?stream_id=${id}`)).status, 'enabled');
      const row = await subscription(id);
      const updates = (await eventsAfter(t!.storage.db, t!.team.id, 0, 100)).filter((r) => r.type === SIGNAL && signalOf(r).event === STREAM_UPDATED);
      assert.equal(updates.length, 1);
      assert.equal(signalOf(updates[0]!).stream, id);
      assert.deepEqual(signalOf(updates[0]!).subject, { format: 'opaque', id });
      assert.equal((signalOf(updates[0]!).payload as { status: string }).status, 'enabled');
      assert.equal(row.cursor, updates[0]!.seq - 1, 'left disabled: the cursor jumped to the feed\'s end, just before its stream-updated event');

      assert.equal((await sub('POST', `/v2/events/subscriptions/${id}/replay`, { from: 1 })).statusCode, 200);
      assert.equal((await subscription(id)).cursor, 0);
      assert.equal((await call(token, 'GET', `/v2/ssf/stream?stream_id=${String(plain.id)}`)).statusCode, 404, 'a plain subscription is no stream');
      assert.equal((await call(token, 'DELETE', `/v2/ssf/stream?stream_id=${String(plain.id)}`)).statusCode, 404);
      assert.equal((await sub('DELETE', `/v2/events/subscriptions/${id}`)).statusCode, 204);
      assert.equal((await call(token, 'GET', `/v2/ssf/stream?stream_id=${id}`)).statusCode, 404);
    });
  });
}
