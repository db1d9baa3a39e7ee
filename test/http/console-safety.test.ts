/**
 * Issue 30, item 5 at the HTTP level, on both engines: every form that issues a secret answers
 * with a redirect and shows the secret once (a client secret, a webhook secret, a password link);
 * every destructive action asks first, on a page that says what will happen and how much, and
 * only that page's form acts: "replay from 1" counts the events it would re-send, deleting a
 * subscription counts the events that will never be sent, revoking a client secret counts the
 * tokens that end with it. A POST without the confirmation goes to the confirmation page and
 * changes nothing.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createClient } from '../../src/admin.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { adminDeps, hiddenFields, PageSession, registerAdmin } from '../support/oauth.ts';

const PASSWORD = 'correct horse battery staple';

async function signedIn(t: TestApp): Promise<PageSession> {
  await registerAdmin(t, 'admin@acme.example', PASSWORD);
  const page = new PageSession(t);
  const form = await page.get('/console/sign-in');
  assert.equal((await page.post('/console/sign-in', { ...hiddenFields(form.body), username: 'admin@acme.example', password: PASSWORD })).statusCode, 303);
  return page;
}

async function subscribe(t: TestApp, body: Record<string, unknown>): Promise<string> {
  const res = await t.request('POST', '/v2/events/subscriptions', body, { 'content-type': 'application/json' });
  assert.equal(res.statusCode, 201, res.body);
  return String(json(res).id);
}

async function users(t: TestApp, n: number): Promise<void> {
  for (let i = 0; i < n; i++) assert.equal((await t.request('POST', '/v2/scim/Users', { userName: `u${i}@acme.example` })).statusCode, 201);
}

const cursorOf = async (t: TestApp, id: string) => Number(json(await t.request('GET', `/v2/events/subscriptions/${id}`)).cursor);

for (const engine of engines) {
  describe(`console safety (HTTP), on ${engine.name}`, () => {
    let t: TestApp;
    let page: PageSession;
    beforeEach(async () => {
      t = await createTestApp({ engine });
      page = await signedIn(t);
    });
    afterEach(() => t.close());

    it('"replay from 1" asks first, counting the events it re-sends; only the confirmation acts', async () => {
      const id = await subscribe(t, { url: 'https://app.example/events' });
      await users(t, 12);
      // The feed holds 13 events: the admin's creation, then the 12 users.
      const done = await page.get(`/console/events/subscriptions/${id}`);
      assert.match(done.body, /<form method="get" action="\/console\/events\/subscriptions\/[A-Z0-9]+\/replay"/, 'the replay form leads to its confirmation');
      const confirm = await page.get(`/console/events/subscriptions/${id}/replay?from=1`);
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, /Re-send <strong>13 events<\/strong> \(seq 1 to 13\) to <span class="wrap">https:\/\/app\.example\/events<\/span>\?/);
      assert.match(confirm.body, /<button type="submit" class="danger">Re-send 13 events<\/button>/);
      const only = await page.get(`/console/events/subscriptions/${id}/replay?from=10`);
      assert.match(only.body, /Re-send <strong>4 events<\/strong> \(seq 10 to 13\)/);
      const filtered = await subscribe(t, { url: 'https://deletes.example/events', events: ['delete'] });
      assert.match((await page.get(`/console/events/subscriptions/${filtered}/replay?from=1`)).body, /Re-send <strong>0 events<\/strong>/, 'counts only the events it takes');

      // A POST without the confirmation goes to the confirmation page and changes nothing.
      const cursor = await cursorOf(t, id);
      const csrf = hiddenFields(confirm.body, `/console/events/subscriptions/${id}/replay`)._csrf!;
      const unconfirmed = await page.post(`/console/events/subscriptions/${id}/replay`, { _csrf: csrf, from: '1' });
      assert.equal(unconfirmed.statusCode, 303);
      assert.equal(unconfirmed.headers.location, `/console/events/subscriptions/${id}/replay?from=1`);
      assert.equal(await cursorOf(t, id), cursor);
      const replayed = await page.post(`/console/events/subscriptions/${id}/replay`, hiddenFields(confirm.body, `/console/events/subscriptions/${id}/replay`));
      assert.equal(replayed.statusCode, 303);
      assert.equal(await cursorOf(t, id), 0, 'replayed from 1');
    });

    it('deleting a subscription asks first, counting the events that will never be sent; only the confirmation deletes', async () => {
      const id = await subscribe(t, { url: 'https://app.example/events' });
      await users(t, 3);
      const detail = await page.get(`/console/events/subscriptions/${id}`);
      assert.match(detail.body, /<form method="get" action="\/console\/events\/subscriptions\/[A-Z0-9]+\/delete"/);
      const confirm = await page.get(`/console/events/subscriptions/${id}/delete`);
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, /Delete the subscription to <span class="wrap">https:\/\/app\.example\/events<\/span> \(SET\)\? <strong>3 pending events<\/strong> will never be sent/);
      const csrf = hiddenFields(confirm.body, `/console/events/subscriptions/${id}/delete`)._csrf!;
      const unconfirmed = await page.post(`/console/events/subscriptions/${id}/delete`, { _csrf: csrf });
      assert.equal(unconfirmed.statusCode, 303);
      assert.equal(unconfirmed.headers.location, `/console/events/subscriptions/${id}/delete`);
      assert.equal((await t.request('GET', `/v2/events/subscriptions/${id}`)).statusCode, 200, 'not deleted');
      const deleted = await page.post(`/console/events/subscriptions/${id}/delete`, hiddenFields(confirm.body, `/console/events/subscriptions/${id}/delete`));
      assert.equal(deleted.statusCode, 303);
      assert.equal((await t.request('GET', `/v2/events/subscriptions/${id}`)).statusCode, 404);
      assert.equal((await page.get(`/console/events/subscriptions/${id}/delete`)).statusCode, 404);
    });

    it('a webhook secret is issued by post/redirect/get and shown once', async () => {
      const events = await page.get('/console/events');
      const created = await page.post('/console/events/subscriptions', { ...hiddenFields(events.body, '/console/events/subscriptions'), url: 'https://hooks.example/in', format: 'webhook' });
      assert.equal(created.statusCode, 303);
      const location = String(created.headers.location);
      const shown = await page.get(location);
      const secret = /<code class="wrap">(whsec_[A-Za-z0-9+/=]+)<\/code>/.exec(shown.body)?.[1];
      assert.ok(secret, 'the secret is shown after the redirect');
      const again = await page.get(location);
      assert.ok(!again.body.includes(secret!), 'and only once');
      assert.equal((await t.storage.db.selectFrom('event_subscriptions').select('id').execute()).length, 1, 'a reload made nothing');
    });

    it("revoking a client secret asks first, counting the live tokens that end with it", async () => {
      const client = await createClient(adminDeps(t), { name: 'Entra', redirectUris: [], team: t.team.name });
      const path = `/console/connections/clients/${client.client_id}`;
      for (let i = 0; i < 2; i++) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/oauth/token',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}` },
          payload: 'grant_type=client_credentials',
        });
        assert.equal(res.statusCode, 200, res.body);
      }
      const secretId = /data-secret-id="([A-Z0-9]{20})"/.exec((await page.get(path)).body)![1]!;
      const confirm = await page.get(`${path}/secrets/${secretId}/revoke`);
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, /<strong id="revoke-tokens">2 live tokens<\/strong> \(access and refresh\) issued with it end with it, on every server\./);
    });

    it('a password link is issued by post/redirect/get and shown once', async () => {
      const shown = await page.get('/console/admins');
      const added = await page.post('/console/admins', { ...hiddenFields(shown.body, '/console/admins'), userName: 'new@acme.example' });
      assert.equal(added.statusCode, 303);
      const first = await page.get('/console/admins');
      assert.match(first.body, /id="password-link"/);
      assert.doesNotMatch((await page.get('/console/admins')).body, /id="password-link"/);
      assert.equal((await t.storage.db.selectFrom('admin_password_links').selectAll().execute()).length, 1, 'a reload made no second link');
    });
  });
}
