/**
 * The console's client page over HTTP (DESIGN.md sections 9 and 11), on both engines: only the
 * admins of the client's own team see it or change it (any other team's admin, and any client
 * bound to no team, get 404 and change nothing); CSRF on its forms; a new secret is handed to
 * the redirected page once in a short-lived, HttpOnly, SameSite=Strict cookie scoped to the
 * page, and a second GET shows it no more; a sixth live secret is refused on the page; every
 * change is audited as the console's admin.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createClient } from '../../src/admin.ts';
import { createTestApp } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { adminDeps, hiddenFields, PageSession, registerAdmin } from '../support/oauth.ts';

const PASSWORD = 'correct horse battery staple';

async function signedIn(t: TestApp, userName: string, team: string): Promise<PageSession> {
  await registerAdmin(t, userName, PASSWORD, team);
  const page = new PageSession(t);
  const form = await page.get('/console/sign-in');
  const res = await page.post('/console/sign-in', { ...hiddenFields(form.body), username: userName, password: PASSWORD, ...(team !== t.team.name ? { team } : {}) });
  assert.equal(res.statusCode, 303, res.body);
  return page;
}

const secretCount = async (t: TestApp, clientId: string) =>
  Number((await t.storage.db.selectFrom('oauth_client_secrets').select((eb) => eb.fn.countAll<number>().as('n')).where('client_id', '=', clientId).where('revoked_at', 'is', null).executeTakeFirstOrThrow()).n);

for (const engine of engines) {
  describe(`console client page (HTTP), on ${engine.name}`, () => {
    let t: TestApp;
    let clientId: string;
    let path: string;
    beforeEach(async () => {
      t = await createTestApp({ engine });
      clientId = (await createClient(adminDeps(t), { name: 'Entra', redirectUris: [], team: t.team.name })).client_id;
      path = `/console/connections/clients/${clientId}`;
    });
    afterEach(() => t.close());

    it('adds a secret by post/redirect/get, shown once; revokes after confirmation; both audited as the console admin', async () => {
      const page = await signedIn(t, 'admin@acme.example', t.team.name);
      const connections = await page.get('/console/connections');
      assert.ok(connections.body.includes(`href="${path}"`), 'linked from the connections page');
      const shown = await page.get(path);
      assert.equal(shown.statusCode, 200);
      assert.ok(shown.body.includes('https://rollcall.test/oauth/token') && shown.body.includes('https://rollcall.test/v2/scim'));
      const added = await page.post(`${path}/secrets`, { ...hiddenFields(shown.body, `${path}/secrets`), name: 'second', expiresIn: '365' });
      assert.equal(added.statusCode, 303, added.body);
      assert.equal(added.headers.location, path);
      const cookie = ([] as string[]).concat(added.headers['set-cookie'] ?? []).find((c) => c.startsWith('rollcall_console_new_secret='));
      assert.ok(cookie, 'the secret is handed to the next page');
      assert.match(cookie, /HttpOnly/);
      assert.match(cookie, /SameSite=Strict/);
      assert.match(cookie, new RegExp(`Path=${path}(;|$)`));
      assert.match(cookie, /Max-Age=60/);
      const once = await page.get(path);
      const secret = /<code id="new-secret">(rc_cs_[A-Za-z0-9_-]{43})<\/code>/.exec(once.body)?.[1];
      assert.ok(secret, 'the new secret is shown');
      const again = await page.get(path);
      assert.ok(!again.body.includes(secret!) && !again.body.includes('id="new-secret"'), 'shown only once');
      assert.equal(await secretCount(t, clientId), 2);

      const secretId = /data-secret-id="([A-Z0-9]{20})"><td data-label="Name"><span class="wrap" dir="auto">second</.exec(again.body)?.[1];
      assert.ok(secretId);
      const confirm = await page.get(`${path}/secrets/${secretId}/revoke`);
      assert.equal(confirm.statusCode, 200);
      assert.equal(await secretCount(t, clientId), 2, 'the confirmation page revokes nothing');
      const revoked = await page.post(`${path}/secrets/${secretId}/revoke`, hiddenFields(confirm.body, `${path}/secrets/${secretId}/revoke`));
      assert.equal(revoked.statusCode, 303);
      assert.equal(await secretCount(t, clientId), 1);

      const trail = await t.storage.db.selectFrom('audit_events').select(['action', 'actor', 'detail']).where('resource_id', '=', clientId).execute();
      for (const action of ['client_secret_added', 'client_secret_revoked']) {
        const row = trail.find((r) => r.action === action);
        assert.ok(row, action);
        assert.equal((JSON.parse(row.actor) as { via: string }).via, 'console');
        assert.ok(!row.detail.includes(secret!));
      }
    });

    it("another team's admin, and any admin for a client bound to no team, get 404 and change nothing", async () => {
      await t.addTeam('globex');
      const other = await signedIn(t, 'admin@globex.example', 'globex');
      const own = await signedIn(t, 'admin@acme.example', t.team.name);
      const ownPage = await own.get(path);
      const csrf = hiddenFields(ownPage.body, `${path}/secrets`)._csrf!;
      const otherCsrf = hiddenFields((await other.get('/console/connections')).body, '/console/connections')._csrf!;
      assert.ok(csrf);
      assert.equal((await other.get(path)).statusCode, 404);
      assert.equal((await other.post(`${path}/secrets`, { _csrf: otherCsrf, name: 'intruder' })).statusCode, 404);
      const secretId = /data-secret-id="([A-Z0-9]{20})"/.exec(ownPage.body)![1]!;
      assert.equal((await other.get(`${path}/secrets/${secretId}/revoke`)).statusCode, 404);
      assert.equal((await other.post(`${path}/secrets/${secretId}/revoke`, { _csrf: otherCsrf })).statusCode, 404);
      assert.equal(await secretCount(t, clientId), 1);

      const unbound = (await createClient(adminDeps(t), { name: 'Okta', redirectUris: ['https://okta.example/cb'] })).client_id;
      assert.equal((await own.get(`/console/connections/clients/${unbound}`)).statusCode, 404);
      assert.equal((await own.get('/console/connections/clients/NOSUCHCLIENT00000000')).statusCode, 404);
    });

    it('CSRF: a form without its token is refused and adds nothing; a sixth live secret is refused on the page', async () => {
      const page = await signedIn(t, 'admin@acme.example', t.team.name);
      assert.equal((await page.post(`${path}/secrets`, { name: 'no csrf' })).statusCode, 403);
      assert.equal(await secretCount(t, clientId), 1);
      for (let i = 0; i < 4; i++) {
        const shown = await page.get(path);
        assert.equal((await page.post(`${path}/secrets`, { ...hiddenFields(shown.body, `${path}/secrets`), name: i === 0 ? '<script>alert(1)</script>' : `s${i}` })).statusCode, 303);
      }
      const shown = await page.get(path);
      assert.ok(shown.body.includes('&lt;script&gt;alert(1)&lt;/script&gt;') && !shown.body.includes('<script>alert(1)'), 'a hostile secret name is shown as text');
      const sixth = await page.post(`${path}/secrets`, { ...hiddenFields(shown.body, `${path}/secrets`), name: 'sixth' });
      assert.equal(sixth.statusCode, 400);
      assert.match(sixth.body, /already has 5 live secrets/);
      const tooLong = await page.post(`${path}/secrets`, { ...hiddenFields((await page.get(path)).body, `${path}/secrets`), expiresIn: '5000' });
      assert.equal(tooLong.statusCode, 400);
      assert.equal(await secretCount(t, clientId), 5);
    });
  });
}
