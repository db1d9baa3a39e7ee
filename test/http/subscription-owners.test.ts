/**
 * Event subscriptions belong to administrators (issue 27 item 5). A provisioning token (handed
 * to an identity provider), even one of an admin user, is refused (403, SCIM error body) on
 * every route that creates, changes or deletes a subscription; an administrator's token creates
 * one, and revoking that token pauses it in the revocation's transaction, with the reason shown
 * by the API and on the console's Events page and overview; its deliveries stop there. A
 * subscription the operator made at the command line has no creator and is never paused so.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { issueToken } from '../../src/admin.ts';
import { createSubscription } from '../../src/events/subscriptions.ts';
import { subscriptionById } from '../../src/storage/repos/subscriptions.ts';
import { ReceiverPolicy } from '../../src/events/receivers.ts';
import { createTestApp, json, LOOPBACK_RECEIVERS } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { adminDeps, hiddenFields, PageSession, passwordGrant, postForm, registerAdmin, registerClient } from '../support/oauth.ts';
import { startReceiver } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';
import { until } from '../support/wait.ts';

const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
const PASSWORD = 'correct horse battery staple';

for (const engine of engines) {
  describe(`event subscriptions belong to administrators (${engine.name})`, () => {
    let t: TestApp | undefined;
    const receivers: Receiver[] = [];
    afterEach(async () => {
      await t?.close();
      t = undefined;
      for (const r of receivers.splice(0)) await r.close().catch(() => {});
    });
    const as = (token: string, method: string, url: string, body?: unknown) =>
      t!.app.inject({
        method: method as 'GET',
        url,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });

    it('a provisioning token, even of an admin user, may look but not create, change or delete a subscription: 403 in the SCIM error shape', async () => {
      t = await createTestApp({ engine });
      const admin = await registerAdmin(t, 'admin@acme.example', PASSWORD);
      const provisioning = (await issueToken(adminDeps(t), 'acme', admin.userName, { scope: ['read', 'write'], ttlSeconds: 3600, name: 'Entra ID' })).token;
      const created = await as(provisioning, 'POST', '/v2/events/subscriptions', { url: 'https://receiver.example/events', full: true });
      assert.equal(created.statusCode, 403, created.body);
      const body = json(created);
      assert.deepEqual(body.schemas, [ERROR]);
      assert.equal(body.status, '403');
      assert.match(String(body.detail), /Only a team administrator's token manages event subscriptions; this is a provisioning token/);

      const id = String(json(await t.request('POST', '/v2/events/subscriptions', { url: 'https://receiver.example/events' }, { 'content-type': 'application/json' })).id);
      for (const [method, url, payload] of [
        ['POST', `/v2/events/subscriptions/${id}/pause`, {}],
        ['POST', `/v2/events/subscriptions/${id}/resume`, {}],
        ['POST', `/v2/events/subscriptions/${id}/replay`, { from: 1 }],
        ['DELETE', `/v2/events/subscriptions/${id}`, undefined],
      ] as const) {
        const r = await as(provisioning, method, url, payload);
        assert.equal(r.statusCode, 403, `${method} ${url}: ${r.body}`);
        assert.deepEqual(json(r).schemas, [ERROR]);
      }
      assert.equal((await as(provisioning, 'GET', '/v2/events/subscriptions')).statusCode, 200, 'reading stays a read scope matter');
      assert.equal((await as(provisioning, 'GET', `/v2/events/subscriptions/${id}`)).statusCode, 200);
    });

    it("revoking the administrator's token that created a subscription pauses it, with the reason in the API and the console; its deliveries stop; the operator's stays active", async () => {
      t = await createTestApp({ engine, deps: { delivery: { pollIntervalMs: 10, backoffBaseMs: 5, backoffMaxMs: 40, timeoutMs: 5_000 } } });
      await t.app.ready();
      const admin = await registerAdmin(t, 'admin@acme.example', PASSWORD);
      const client = await registerClient(t);
      const grant = await passwordGrant(t, client, admin);
      assert.equal(grant.statusCode, 200, grant.body);
      const adminToken = String(json(grant).access_token);

      const owned = await startReceiver();
      const witness = await startReceiver();
      receivers.push(owned, witness);
      const made = await as(adminToken, 'POST', '/v2/events/subscriptions', { url: owned.url, full: true });
      assert.equal(made.statusCode, 201, made.body);
      const id = String(json(made).id);
      // The operator's subscription, made at the command line: no creator credential.
      const operators = (await createSubscription({ storage: t.storage, clock: t.clock, receivers: new ReceiverPolicy(LOOPBACK_RECEIVERS) }, t.team, { method: 'push', url: witness.url })).subscription.id;

      assert.equal((await t.request('POST', '/v2/scim/Users', { userName: 'one@acme.example' })).statusCode, 201);
      await owned.waitFor(1);
      await witness.waitFor(1);
      // The receiver took the SET before its answer was recorded: the cursor moves once it is.
      await until(async () => json(await t!.request('GET', `/v2/events/subscriptions/${id}`)).cursor === Number(json(made).cursor) + 1, 'the first delivery to be recorded');

      const revoked = await postForm(t, '/oauth/revoke', { token: adminToken }, { client });
      assert.equal(revoked.statusCode, 200);
      const view = json(await t.request('GET', `/v2/events/subscriptions/${id}`));
      const delivered = Number(view.cursor);
      assert.equal(view.state, 'paused', 'paused with the revocation, before any delivery could notice');
      assert.match(String(view.pausedReason), /its creator's credential was revoked/);
      assert.equal(json(await t.request('GET', `/v2/events/subscriptions/${operators}`)).state, 'active');

      // Deliveries stop: the operator's subscription gets the next events, this one none.
      for (const name of ['two', 'three']) assert.equal((await t.request('POST', '/v2/scim/Users', { userName: `${name}@acme.example` })).statusCode, 201);
      await witness.waitFor(3);
      await until(async () => json(await t!.request('GET', `/v2/events/subscriptions/${operators}`)).cursor === delivered + 2, 'the witness cursor to move');
      assert.equal(owned.received.length, 1, 'nothing was pushed after the revocation');
      assert.equal(json(await t.request('GET', `/v2/events/subscriptions/${id}`)).cursor, delivered);

      // The console flags it, on the Events page and the overview.
      const page = new PageSession(t);
      const form = await page.get('/console/sign-in');
      assert.equal((await page.post('/console/sign-in', { ...hiddenFields(form.body), username: admin.userName, password: PASSWORD })).statusCode, 303);
      const events = await page.get('/console/events');
      assert.equal(events.statusCode, 200);
      assert.match(events.body, /paused<\/span>: <span dir="auto">its creator(&#39;|&#x27;|')s credential was revoked/);
      const overview = await page.get('/console');
      assert.match(overview.body, /its creator(&#39;|&#x27;|')s credential was revoked/);

      // An administrator resumes it and takes it over: it delivers again, on their authority.
      assert.equal((await t.request('POST', `/v2/events/subscriptions/${id}/resume`, {}, { 'content-type': 'application/json' })).statusCode, 200);
      await owned.waitFor(3);
    });

    it('a subscription waiting for its turn when its creator is revoked sends nothing more: its state is read again before it sends', async () => {
      // One slot, so the admin's subscription waits behind the operator's, whose request is held.
      t = await createTestApp({ engine, deps: { delivery: { pollIntervalMs: 10, backoffBaseMs: 5, backoffMaxMs: 40, timeoutMs: 60_000, leaseMs: 180_000, maxConcurrent: 1 } } });
      await t.app.ready();
      const admin = await registerAdmin(t, 'admin@acme.example', PASSWORD);
      const client = await registerClient(t);
      const adminToken = String(json(await passwordGrant(t, client, admin)).access_token);
      const owned = await startReceiver();
      const first = await startReceiver((_r, i) => (i === 0 ? 'hang' : { status: 202 }));
      receivers.push(owned, first);
      const id = String(json(await as(adminToken, 'POST', '/v2/events/subscriptions', { url: owned.url })).id);
      const operators = (await createSubscription({ storage: t.storage, clock: t.clock, receivers: new ReceiverPolicy(LOOPBACK_RECEIVERS) }, t.team, { method: 'push', url: first.url })).subscription.id;
      assert.equal((await as(adminToken, 'POST', `/v2/events/subscriptions/${id}/pause`, {})).statusCode, 200);
      assert.equal((await t.request('POST', `/v2/events/subscriptions/${operators}/pause`, {}, { 'content-type': 'application/json' })).statusCode, 200);
      for (const name of ['one', 'two', 'three']) assert.equal((await t.request('POST', '/v2/scim/Users', { userName: `${name}@acme.example` })).statusCode, 201);

      await t.request('POST', `/v2/events/subscriptions/${operators}/resume`, {}, { 'content-type': 'application/json' });
      await until(() => first.held === 1, "the operator's first SET to hold the slot");
      assert.equal((await as(adminToken, 'POST', `/v2/events/subscriptions/${id}/resume`, {})).statusCode, 200);
      await until(async () => (await subscriptionById(t!.storage.db, t!.team.id, id))?.lease_owner != null, "the admin's subscription to be claimed, waiting for its turn");

      assert.equal((await postForm(t, '/oauth/revoke', { token: adminToken }, { client })).statusCode, 200);
      first.release();
      await first.waitFor(3);
      await until(async () => (await subscriptionById(t!.storage.db, t!.team.id, id))?.lease_owner == null, 'the lease of the paused subscription to be given back');
      assert.equal(owned.received.length, 0, 'its turn came after the revocation: nothing was sent');
      assert.equal(json(await t.request('GET', `/v2/events/subscriptions/${id}`)).state, 'paused');
    });

    it("deactivating the console admin who created a subscription pauses it; another admin's session or token is untouched", async () => {
      t = await createTestApp({ engine });
      const creator = await registerAdmin(t, 'creator@acme.example', PASSWORD);
      await registerAdmin(t, 'other@acme.example', PASSWORD);
      const page = new PageSession(t);
      const form = await page.get('/console/sign-in');
      assert.equal((await page.post('/console/sign-in', { ...hiddenFields(form.body), username: creator.userName, password: PASSWORD })).statusCode, 303);
      const list = await page.get('/console/events');
      const added = await page.post('/console/events/subscriptions', { ...hiddenFields(list.body, '/console/events/subscriptions'), url: 'https://receiver.example/console' });
      assert.equal(added.statusCode, 303, added.body);
      const apiMade = String(json(await t.request('POST', '/v2/events/subscriptions', { url: 'https://receiver.example/api' }, { 'content-type': 'application/json' })).id);
      const subs = json(await t.request('GET', '/v2/events/subscriptions')).subscriptions as { id: string; url: string; state: string; pausedReason: string | null }[];
      const fromConsole = subs.find((s) => s.url === 'https://receiver.example/console')!;
      assert.equal(fromConsole.state, 'active');

      const deactivated = await t.request('PATCH', `/v2/scim/Users/${creator.id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'active', value: false }] });
      assert.equal(deactivated.statusCode, 200, deactivated.body);
      const after = json(await t.request('GET', `/v2/events/subscriptions/${fromConsole.id}`));
      assert.equal(after.state, 'paused');
      assert.match(String(after.pausedReason), /its creator's credential was revoked/);
      assert.equal(json(await t.request('GET', `/v2/events/subscriptions/${apiMade}`)).state, 'active');
    });
  });
}
