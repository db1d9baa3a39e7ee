/**
 * Issue 34 item 3, the console's Events page with webhook subscriptions: each subscription shows
 * its format (SET or webhook), a webhook subscription's page shows its delivery log like a SET's
 * (time, seq, status, latency, error), and the page never shows the webhook secret; the add form
 * makes a webhook subscription, sealed with the key the delivery worker opens it with, and
 * redirects (post/redirect/get) to its page, which shows the secret once from a signed, HttpOnly,
 * SameSite=Strict, page-scoped, short-lived cookie bound to the admin; a reload shows and adds nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newId } from '../../src/ids.ts';
import { insertAttempt } from '../../src/storage/repos/subscriptions.ts';
import { liveWebhookKeys, WEBHOOK_SECRETS } from '../../src/events/webhook-secrets.ts';
import { masterKey } from '../../src/keys/master.ts';
import { SecretBox } from '../../src/keys/sealed.ts';
import { TEST_SECRET_KEY } from '../support/app.ts';
import { createTestApp, json } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { hiddenFields, PageSession, registerAdmin } from '../support/oauth.ts';

const PASSWORD = 'correct horse battery staple';

for (const engine of engines) {
  describe(`console events page with webhooks (${engine.name})`, () => {
    it("lists each subscription's format; a webhook's delivery log renders like a SET's; the secret is never on a page", async () => {
      const t = await createTestApp({ engine });
      try {
        await registerAdmin(t, 'admin@acme.example', PASSWORD);
        const page = new PageSession(t);
        const form = await page.get('/console/sign-in');
        assert.equal((await page.post('/console/sign-in', { ...hiddenFields(form.body), username: 'admin@acme.example', password: PASSWORD })).statusCode, 303);
        const create = async (body: Record<string, unknown>) => {
          const res = await t.request('POST', '/v2/events/subscriptions', body, { 'content-type': 'application/json' });
          assert.equal(res.statusCode, 201, res.body);
          return json(res);
        };
        await create({ url: 'https://sets.example/events' });
        const hook = await create({ url: 'https://hooks.example/events', format: 'webhook' });
        const secret = String(hook.secret);
        await insertAttempt(t.storage.db, { id: newId(), subscription_id: String(hook.id), seq: 1, at: '2026-01-01T00:00:01.000Z', status: 500, latency_ms: 12, error: 'http 500' });
        await insertAttempt(t.storage.db, { id: newId(), subscription_id: String(hook.id), seq: 1, at: '2026-01-01T00:00:02.000Z', status: 202, latency_ms: 7, error: null });

        const list = await page.get('/console/events');
        assert.equal(list.statusCode, 200);
        const rows = list.body.match(/<tr><td data-label="Receiver">[\s\S]*?<\/tr>/g) ?? [];
        assert.equal(rows.length, 2);
        assert.match(rows.find((r) => r.includes('sets.example'))!, /<td data-label="Format">SET<\/td>/);
        assert.match(rows.find((r) => r.includes('hooks.example'))!, /<td data-label="Format">webhook \(Standard Webhooks\)<\/td>/);

        const detail = await page.get(`/console/events/subscriptions/${String(hook.id)}`);
        assert.equal(detail.statusCode, 200);
        assert.match(detail.body, /<dt>Format<\/dt><dd>webhook \(Standard Webhooks\)<\/dd>/);
        assert.match(detail.body, /<td data-label="Seq">1<\/td><td data-label="Status"><span class="status-4">500<\/span><\/td><td data-label="Latency">12 ms<\/td><td data-label="Error"><code>http 500<\/code><\/td>/);
        assert.match(detail.body, /<td data-label="Seq">1<\/td><td data-label="Status">202<\/td><td data-label="Latency">7 ms<\/td>/);
        for (const body of [list.body, detail.body]) assert.equal(body.includes(secret.slice(6)), false, 'the secret is not on the page');
      } finally {
        await t.close();
      }
    });

    it('the add form makes a webhook subscription: its secret is on the redirected page once, and it opens with the servers\' master key; a SET one still redirects; a bad format is refused', async () => {
      const t = await createTestApp({ engine });
      try {
        await registerAdmin(t, 'admin@acme.example', PASSWORD);
        const page = new PageSession(t);
        const signIn = await page.get('/console/sign-in');
        assert.equal((await page.post('/console/sign-in', { ...hiddenFields(signIn.body), username: 'admin@acme.example', password: PASSWORD })).statusCode, 303);
        const submit = async (fields: [string, string][]) => {
          const hidden = hiddenFields((await page.get('/console/events')).body, '/console/events/subscriptions');
          const res = await t.app.inject({ method: 'POST', url: '/console/events/subscriptions', headers: { cookie: page.jar.header(), 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams([...Object.entries(hidden), ...fields]).toString() });
          page.jar.take(res);
          return res;
        };
        const posted = await submit([['url', 'https://hooks.example/events'], ['format', 'webhook'], ['events', 'create']]);
        assert.equal(posted.statusCode, 303, posted.body);
        assert.equal(posted.body.includes('whsec_'), false, 'the POST answer carries no secret');
        const made = await page.get(String(posted.headers.location));
        assert.equal(made.statusCode, 200, made.body);
        const secret = /<code class="wrap">(whsec_[A-Za-z0-9+/=]+)<\/code>/.exec(made.body)?.[1];
        assert.ok(secret, 'the secret is on the answer');
        assert.equal(made.headers['cache-control'], 'no-store', 'no cache may keep the page showing the secret');
        assert.match(made.body, /shown only now/);
        assert.match(made.body, /<dt>Format<\/dt><dd>webhook \(Standard Webhooks\)<\/dd>/);
        const id = String(((json(await t.request('GET', '/v2/events/subscriptions')).subscriptions) as { id: string }[])[0]!.id);
        const again = await page.get(`/console/events/subscriptions/${id}`);
        assert.equal(again.body.includes(secret.slice(6)), false, 'not shown again');
        assert.equal(again.body.includes('whsec_'), false);
        const box = new SecretBox(masterKey({ secretKey: TEST_SECRET_KEY, database: { engine: t.storage.hooks.name, sqlitePath: undefined } }), WEBHOOK_SECRETS);
        assert.deepEqual(await liveWebhookKeys(t.storage.db, box, id, new Date()), [Buffer.from(secret.slice(6), 'base64')]);

        const set = await submit([['url', 'https://sets.example/events']]);
        assert.equal(set.statusCode, 303, 'a SET subscription redirects as before');
        const bad = await submit([['url', 'https://x.example/events'], ['format', 'xml']]);
        assert.equal(bad.statusCode, 400);
        assert.match(bad.body, /format must be &quot;set&quot;/);
      } finally {
        await t.close();
      }
    });

    it('post/redirect/get: the redirect shows the secret once, a reload with the same cookie shows none and adds nothing; the cookie is HttpOnly, Strict, scoped, short-lived, and bound to the admin', async () => {
      const t = await createTestApp({ engine });
      try {
        await registerAdmin(t, 'admin@acme.example', PASSWORD);
        await registerAdmin(t, 'other@acme.example', PASSWORD);
        const signIn = async (userName: string) => {
          const session = new PageSession(t);
          const form = await session.get('/console/sign-in');
          assert.equal((await session.post('/console/sign-in', { ...hiddenFields(form.body), username: userName, password: PASSWORD })).statusCode, 303);
          return session;
        };
        const page = await signIn('admin@acme.example');
        const other = await signIn('other@acme.example');
        const hidden = hiddenFields((await page.get('/console/events')).body, '/console/events/subscriptions');
        const post = async () => {
          const res = await t.app.inject({ method: 'POST', url: '/console/events/subscriptions', headers: { cookie: page.jar.header(), 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams([...Object.entries(hidden), ['url', 'https://hooks.example/events'], ['format', 'webhook']]).toString() });
          page.jar.take(res);
          return res;
        };
        const posted = await post();
        assert.equal(posted.statusCode, 303, posted.body);
        const id = String(((json(await t.request('GET', '/v2/events/subscriptions')).subscriptions) as { id: string }[])[0]!.id);
        const path = `/console/events/subscriptions/${encodeURIComponent(id)}`;
        assert.equal(posted.headers.location, `${path}?done=created`);
        const setCookie = [posted.headers['set-cookie']].flat().find((c) => String(c).startsWith('rollcall_console_new_webhook_secret='));
        assert.ok(setCookie, 'the POST hands the secret in a cookie');
        assert.match(setCookie, /HttpOnly/);
        assert.match(setCookie, /SameSite=Strict/);
        assert.match(setCookie, new RegExp(`Path=${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(;|$)`));
        assert.match(setCookie, /Max-Age=60(;|$)/);
        const handed = setCookie.split(';')[0]!;

        // Another admin of the same team, carrying the handed cookie, sees the page but not the secret.
        const stolen = await t.app.inject({ method: 'GET', url: path, headers: { cookie: `${other.jar.header()}; ${handed}` } });
        assert.equal(stolen.statusCode, 200);
        assert.equal(stolen.body.includes('whsec_'), false, "another admin's session cannot read it");

        const first = await t.app.inject({ method: 'GET', url: String(posted.headers.location), headers: { cookie: page.jar.header() } });
        assert.equal(first.statusCode, 200);
        assert.equal(first.headers['cache-control'], 'no-store');
        assert.equal(first.body.match(/whsec_[A-Za-z0-9+/=]+/g)?.length, 1, 'the secret is shown once');
        const cleared = [first.headers['set-cookie']].flat().find((c) => String(c).startsWith('rollcall_console_new_webhook_secret='));
        assert.ok(cleared && /Expires=Thu, 01 Jan 1970/i.test(cleared), 'the GET that shows it clears the cookie');
        // A reload from the same browser (its jar took the clear) shows nothing and adds nothing.
        page.jar.take(first);
        assert.equal(page.jar.header().includes('rollcall_console_new_webhook_secret='), false);
        const reload = await t.app.inject({ method: 'GET', url: String(posted.headers.location), headers: { cookie: page.jar.header() } });
        assert.equal(reload.statusCode, 200);
        assert.equal(reload.body.includes('whsec_'), false, 'a reload shows no secret');
        assert.equal(((json(await t.request('GET', '/v2/events/subscriptions')).subscriptions) as unknown[]).length, 1, 'one subscription');
      } finally {
        await t.close();
      }
    });
  });
}
