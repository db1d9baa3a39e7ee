/**
 * Issue 34 item 3, the console's Events page with webhook subscriptions: each subscription shows
 * its format (SET or webhook), a webhook subscription's page shows its delivery log like a SET's
 * (time, seq, status, latency, error), and the page never shows the webhook secret; the add form
 * makes a webhook subscription and shows its secret on that answer only, sealed with the key the
 * delivery worker opens it with.
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
        const rows = list.body.match(/<tr><td class="wrap" data-label="Receiver">[\s\S]*?<\/tr>/g) ?? [];
        assert.equal(rows.length, 2);
        assert.match(rows.find((r) => r.includes('sets.example'))!, /<td data-label="Format">SET<\/td>/);
        assert.match(rows.find((r) => r.includes('hooks.example'))!, /<td data-label="Format">webhook \(Standard Webhooks\)<\/td>/);

        const detail = await page.get(`/console/events/subscriptions/${String(hook.id)}`);
        assert.equal(detail.statusCode, 200);
        assert.match(detail.body, /<dt>Format<\/dt><dd>webhook \(Standard Webhooks\)<\/dd>/);
        assert.match(detail.body, /<td data-label="Seq">1<\/td><td data-label="Status" class="status-4">500<\/td><td data-label="Latency">12 ms<\/td><td data-label="Error" class="wrap"><code>http 500<\/code><\/td>/);
        assert.match(detail.body, /<td data-label="Seq">1<\/td><td data-label="Status" class="">202<\/td><td data-label="Latency">7 ms<\/td>/);
        for (const body of [list.body, detail.body]) assert.equal(body.includes(secret.slice(6)), false, 'the secret is not on the page');
      } finally {
        await t.close();
      }
    });

    it('the add form makes a webhook subscription: its secret is on that answer only, and it opens with the servers\' master key; a SET one still redirects; a bad format is refused', async () => {
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
        const made = await submit([['url', 'https://hooks.example/events'], ['format', 'webhook'], ['events', 'create']]);
        assert.equal(made.statusCode, 201, made.body);
        const secret = /<code class="wrap">(whsec_[A-Za-z0-9+/=]+)<\/code>/.exec(made.body)?.[1];
        assert.ok(secret, 'the secret is on the answer');
        assert.equal(made.headers['cache-control'], 'no-store', 'no cache may keep the page showing the secret');
        assert.match(made.body, /shown only now/);
        assert.match(made.body, /<dt>Format<\/dt><dd>webhook \(Standard Webhooks\)<\/dd>/);
        const id = String(((json(await t.request('GET', '/v2/events/subscriptions')).subscriptions) as { id: string }[])[0]!.id);
        const again = await page.get(`/console/events/subscriptions/${id}`);
        assert.equal(again.body.includes(secret.slice(6)), false, 'not shown again');
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
  });
}
