/**
 * The RFC 9967 asynchronous-response event (`urn:ietf:params:scim:event:misc:asyncresp`) on the
 * change feed, as each reader sees it: asyncresp rows appended with recordAsyncResponse in a
 * transaction (as the async queue does) are listed by GET /v2/events with their outcome; pushed
 * as SETs that verify against /.well-known/jwks.json and carry the RFC 9967 section 2.5.1.3
 * claims (success, and error with `response`); fetched by a poll subscription; sent to a webhook
 * subscription as `request.completed`; and filtered by a subscription's `events`. On every engine.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import type { JSONWebKeySet, JWTPayload } from 'jose';
import { Webhook } from 'standardwebhooks';
import { CLI_ACTOR } from '../../src/audit/events.ts';
import type { DeliverySettings } from '../../src/events/delivery.ts';
import { recordAsyncResponse } from '../../src/events/feed.ts';
import type { AsyncResponseEvent } from '../../src/events/feed.ts';
import { setClaims } from '../../src/events/set.ts';
import type { EventRow } from '../../src/storage/repos/events.ts';
import { BASE_URL, createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { startReceiver, verifyAll } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';
import { hiddenFields, PageSession, registerAdmin } from '../support/oauth.ts';
import { until } from '../support/wait.ts';

const URI = 'urn:ietf:params:scim:event:misc:asyncresp';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
const FAST: Partial<DeliverySettings> = { pollIntervalMs: 10, backoffBaseMs: 5, backoffMaxMs: 40, timeoutMs: 2_000 };
const TXN = '734f0614e3274f288f93ac74119dcf78';
const BULK_TXN = '2d80e537a3f64622b0347b641ebc8f44';
const FAILURE = { schemas: [ERROR], scimType: 'invalidSyntax', detail: 'Request is unparsable', status: '400' };

/** A feed row as storage reads it back, for the unit checks of the renderings. */
const row = (over: Partial<EventRow>): EventRow => ({
  team_id: 'TEAM',
  seq: 7,
  at: '2026-05-01T10:00:00.000Z',
  type: 'asyncresp',
  resource_type: 'User',
  resource_id: 'U1',
  version: 3,
  changed: '[]',
  actor: JSON.stringify(CLI_ACTOR),
  txn: TXN,
  external_id: null,
  data: JSON.stringify({ method: 'PUT', version: 'W/"3"', location: `${BASE_URL}/v2/scim/Users/U1`, status: '200' }),
  members: null,
  ...over,
});

describe('setClaims of an asyncresp row', () => {
  it('RFC 9967 figure 14: the outcome as the payload, sub_id the resource, txn; the same with full', () => {
    for (const full of [false, true]) {
      const claims = setClaims(row({}), { issuer: BASE_URL, audience: 'https://app.example/events', full });
      assert.deepEqual(claims, {
        iss: BASE_URL,
        iat: Date.parse('2026-05-01T10:00:00.000Z') / 1000,
        toe: Date.parse('2026-05-01T10:00:00.000Z') / 1000,
        jti: 'TEAM.7',
        aud: 'https://app.example/events',
        txn: TXN,
        sub_id: { format: 'scim', uri: '/Users/U1' },
        seq: 7,
        events: { [URI]: { method: 'PUT', version: 'W/"3"', location: `${BASE_URL}/v2/scim/Users/U1`, status: '200' } },
      });
    }
  });

  it('RFC 9967 figure 15: an error carries response; a write that created nothing names the endpoint; a Bulk operation keeps its bulkId and txn suffix', () => {
    const failed = row({ resource_id: '', resource_type: 'Group', version: 0, txn: `${BULK_TXN}:2`, data: JSON.stringify({ method: 'POST', bulkId: 'ytrewq', status: '400', response: FAILURE }) });
    const claims = setClaims(failed, { issuer: BASE_URL, audience: 'a', full: false });
    assert.deepEqual(claims.sub_id, { format: 'scim', uri: '/Groups' });
    assert.equal(claims.txn, `${BULK_TXN}:2`);
    assert.deepEqual(claims.events, { [URI]: { method: 'POST', bulkId: 'ytrewq', status: '400', response: FAILURE } });
  });
});

for (const engine of engines) {
  describe(`the asyncresp event (${engine.name})`, () => {
    let t: TestApp | undefined;
    const receivers: Receiver[] = [];
    afterEach(async () => {
      await t?.close();
      t = undefined;
      for (const r of receivers.splice(0)) await r.close().catch(() => {});
    });
    // The reference webhook library checks webhook-timestamp against the real clock: the test clock starts now.
    const open = async (delivery: Partial<DeliverySettings> | false) => {
      t = await createTestApp({ engine, clockStart: Date.now(), deps: { delivery } });
      await t.app.ready();
      return t;
    };
    const receiver = async () => {
      const r = await startReceiver();
      receivers.push(r);
      return r;
    };
    const subscribe = async (app: TestApp, body: Record<string, unknown>) => {
      const r = await app.request('POST', '/v2/events/subscriptions', body, { 'content-type': 'application/json' });
      assert.equal(r.statusCode, 201, r.body);
      return json(r);
    };
    const jwks = async (app: TestApp) => (await app.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json() as JSONWebKeySet;
    /** One created user (a create event), then a successful PUT of it and a failed Bulk POST, as the queue records them. */
    const recordSome = async (app: TestApp): Promise<string> => {
      const created = await app.request('POST', '/v2/scim/Users', { userName: 'bjensen@acme.example' });
      assert.equal(created.statusCode, 201);
      const id = String(json(created).id);
      const events: AsyncResponseEvent[] = [
        { teamId: app.team.id, txn: TXN, actor: CLI_ACTOR, resourceType: 'User', resourceId: id, outcome: { method: 'PUT', version: 'W/"2"', location: `${BASE_URL}/v2/scim/Users/${id}`, status: '200' } },
        { teamId: app.team.id, txn: `${BULK_TXN}:1`, actor: CLI_ACTOR, resourceType: 'User', resourceId: null, outcome: { method: 'POST', bulkId: 'qwerty', status: '400', response: FAILURE } },
      ];
      for (const event of events) await app.storage.db.transaction().execute((trx) => recordAsyncResponse({ clock: app.clock }, trx, event));
      return id;
    };
    const checkClaims = (payloads: readonly JWTPayload[], id: string) => {
      assert.deepEqual(payloads.map((p) => p.txn), [TXN, `${BULK_TXN}:1`]);
      assert.deepEqual(payloads.map((p) => p.sub_id), [{ format: 'scim', uri: `/Users/${id}` }, { format: 'scim', uri: '/Users' }]);
      assert.deepEqual(payloads[0]!.events, { [URI]: { method: 'PUT', version: 'W/"2"', location: `${BASE_URL}/v2/scim/Users/${id}`, status: '200' } });
      assert.deepEqual(payloads[1]!.events, { [URI]: { method: 'POST', bulkId: 'qwerty', status: '400', response: FAILURE } });
      for (const p of payloads) {
        assert.equal(typeof p.iat, 'number');
        assert.match(String(p.jti), new RegExp(`^${t!.team.id}\\.\\d+$`));
      }
    };

    it('GET /v2/events lists asyncresp rows with their outcome; a poll subscription gets them as SETs, filtered by events', async () => {
      const app = await open(false);
      const all = await subscribe(app, { method: 'poll' });
      const onlyAsync = await subscribe(app, { method: 'poll', events: ['asyncresp'] });
      const byUri = await subscribe(app, { method: 'poll', events: [URI] });
      const onlyChanges = await subscribe(app, { method: 'poll', events: ['create', 'put', 'patch'] });
      assert.deepEqual(json(await app.request('GET', `/v2/events/subscriptions/${String(byUri.id)}`)).events, ['asyncresp']);
      const id = await recordSome(app);

      const page = json(await app.request('GET', '/v2/events?after=0'));
      const events = page.events as Record<string, unknown>[];
      assert.deepEqual(events.map((e) => [e.seq, e.change, e.event]), [
        [1, 'create', 'urn:ietf:params:scim:event:prov:create:notice'],
        [2, 'asyncresp', URI],
        [3, 'asyncresp', URI],
      ]);
      assert.deepEqual({ ...events[1], at: undefined, actor: undefined }, {
        seq: 2,
        at: undefined,
        event: URI,
        change: 'asyncresp',
        resourceType: 'User',
        id,
        externalId: null,
        version: 'W/"2"',
        changed: [],
        actor: undefined,
        txn: TXN,
        outcome: { method: 'PUT', version: 'W/"2"', location: `${BASE_URL}/v2/scim/Users/${id}`, status: '200' },
      });
      assert.equal(events[2]!.id, '');
      assert.equal('version' in events[2]!, false);
      assert.deepEqual(events[2]!.outcome, { method: 'POST', bulkId: 'qwerty', status: '400', response: FAILURE });

      const keys = createLocalJWKSet(await jwks(app));
      const poll = async (sub: Record<string, unknown>) => {
        const r = await app.app.inject({
          method: 'POST',
          url: '/v2/events/poll',
          headers: { authorization: `Bearer ${String(sub.pollToken)}`, 'content-type': 'application/json' },
          payload: JSON.stringify({ returnImmediately: true }),
        });
        assert.equal(r.statusCode, 200, r.body);
        const sets = (r.json() as { sets: Record<string, string> }).sets;
        const payloads: JWTPayload[] = [];
        for (const set of Object.values(sets)) payloads.push((await jwtVerify(set, keys, { issuer: BASE_URL, audience: `${BASE_URL}/v2/events/poll/${String(sub.id)}` })).payload);
        return payloads;
      };
      assert.deepEqual((await poll(all)).map((p) => p.seq), [1, 2, 3]);
      checkClaims(await poll(onlyAsync), id);
      checkClaims(await poll(byUri), id);
      const changes = await poll(onlyChanges);
      assert.deepEqual(changes.map((p) => Object.keys(p.events as object)), [['urn:ietf:params:scim:event:prov:create:notice']]);
    });

    it('push: a SET subscription receives signed asyncresp SETs; a webhook subscription gets request.completed; one filtered to other types gets none', async () => {
      const app = await open(FAST);
      const sets = await receiver();
      const hooks = await receiver();
      const others = await receiver();
      await subscribe(app, { url: sets.url });
      const hook = await subscribe(app, { url: hooks.url, format: 'webhook', events: ['asyncresp'] });
      const other = await subscribe(app, { url: others.url, events: ['create', 'delete'] });
      const id = await recordSome(app);

      await sets.waitFor(3);
      const payloads = await verifyAll(sets.received, await jwks(app), { issuer: BASE_URL, audience: sets.url });
      assert.deepEqual(payloads.map((p) => p.seq), [1, 2, 3]);
      checkClaims(payloads.slice(1), id);

      await hooks.waitFor(2);
      const verifier = new Webhook(String(hook.secret));
      const bodies = hooks.received.map(
        (r) =>
          verifier.verify(r.body, { 'webhook-id': String(r.headers['webhook-id']), 'webhook-timestamp': String(r.headers['webhook-timestamp']), 'webhook-signature': String(r.headers['webhook-signature']) }) as Record<string, unknown>,
      );
      assert.deepEqual(
        bodies.map((b) => ({ ...b, timestamp: undefined })),
        [
          {
            type: 'request.completed',
            timestamp: undefined,
            data: {
              sequence: 2,
              event: URI,
              transaction: TXN,
              resource: { type: 'User', id, location: `${BASE_URL}/v2/scim/Users/${id}`, version: 'W/"2"' },
              changed: [],
              outcome: { method: 'PUT', version: 'W/"2"', location: `${BASE_URL}/v2/scim/Users/${id}`, status: '200' },
            },
          },
          {
            type: 'request.completed',
            timestamp: undefined,
            data: { sequence: 3, event: URI, transaction: `${BULK_TXN}:1`, resource: { type: 'User', id: '', location: `${BASE_URL}/v2/scim/Users` }, changed: [], outcome: { method: 'POST', bulkId: 'qwerty', status: '400', response: FAILURE } },
          },
        ],
      );
      assert.deepEqual(hooks.received.map((r) => r.headers['webhook-id']), [`evt_${app.team.id}_2`, `evt_${app.team.id}_3`]);

      // The filtered subscription passes over both asyncresp events: its cursor reaches 3 with one request sent.
      await until(async () => json(await app.request('GET', `/v2/events/subscriptions/${String(other.id)}`)).cursor === 3, 'the filtered cursor to pass the asyncresp events');
      assert.equal(others.received.length, 1);
      const [created] = await verifyAll(others.received, await jwks(app), { issuer: BASE_URL, audience: others.url });
      assert.deepEqual(Object.keys(created!.events as object), ['urn:ietf:params:scim:event:prov:create:notice']);
    });

    it("the console's add form offers asyncresp, and a subscription made with it ticked filters on it", async () => {
      const app = await open(false);
      await registerAdmin(app, 'admin@acme.example', 'correct horse battery staple');
      const page = new PageSession(app);
      const signIn = await page.get('/console/sign-in');
      assert.equal((await page.post('/console/sign-in', { ...hiddenFields(signIn.body), username: 'admin@acme.example', password: 'correct horse battery staple' })).statusCode, 303);
      const form = await page.get('/console/events');
      assert.match(form.body, /<input type="checkbox" name="events" value="asyncresp">/);
      const hidden = hiddenFields(form.body, '/console/events/subscriptions');
      const created = await app.app.inject({
        method: 'POST',
        url: '/console/events/subscriptions',
        headers: { cookie: page.jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams([...Object.entries(hidden), ['url', 'https://app.example/completions'], ['events', 'asyncresp']]).toString(),
      });
      assert.equal(created.statusCode, 303, created.body);
      const list = json(await app.request('GET', '/v2/events/subscriptions')).subscriptions as { url: string; events: string[] }[];
      assert.deepEqual(list.map((s) => [s.url, s.events]), [['https://app.example/completions', ['asyncresp']]]);
    });

    it('a subscription asking for an unknown event name is a 400 naming asyncresp among the choices', async () => {
      const app = await open(false);
      const r = await app.request('POST', '/v2/events/subscriptions', { method: 'poll', events: ['asyncResp'] }, { 'content-type': 'application/json' });
      assert.equal(r.statusCode, 400);
      assert.match(String(json(r).detail), /asyncresp/);
    });
  });
}
