/**
 * What a one-time setup link can and cannot lead to (review of issue 30, findings 1, 3 and 4),
 * over HTTP on every engine:
 * - the token a link's wizard hands out provisions people but cannot make an admin who signs in
 *   (SCIM 403; the rule itself: connection-admin-guard.test.ts);
 * - the link's secret, a path segment (/console/setup/rc_setup_…), is never written to the log;
 * - the links an admin sent end with the admin: removed as admin on the console's Admins page,
 *   deactivated, or deleted, their unused links are withdrawn and the wizard sessions their links
 *   opened end; another admin's links go on.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { redactUrl } from '../../src/http/request-log.ts';
import { createTestApp } from '../support/app.ts';
import type { TestApp, TestAppOptions } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { hiddenFields, PageSession, registerAdmin } from '../support/oauth.ts';

const PASSWORD = 'correct horse battery staple';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';

async function signedIn(t: TestApp, userName: string): Promise<{ page: PageSession; id: string }> {
  const { id } = await registerAdmin(t, userName, PASSWORD);
  const page = new PageSession(t);
  const form = await page.get('/console/sign-in');
  const res = await page.post('/console/sign-in', { ...hiddenFields(form.body), username: userName, password: PASSWORD });
  assert.equal(res.statusCode, 303, res.body);
  return { page, id };
}

/** Makes a link on the wizard's page; answers its URL's path, shown once. */
async function makeLink(page: PageSession, recipient = 'it@acme.example'): Promise<string> {
  const start = await page.get('/console/connect');
  const made = await page.post('/console/connect/links', { ...hiddenFields(start.body, '/console/connect/links'), recipient, hours: '72' });
  assert.equal(made.statusCode, 303, made.body);
  const link = /<code id="setup-link">([^<]+)<\/code>/.exec((await page.get('/console/connect')).body)?.[1];
  assert.ok(link?.includes('/console/setup/rc_setup_'), 'the link is shown once');
  return new URL(link!).pathname;
}

/** Opens the link in a fresh browser: its landing, then its button. */
async function use(t: TestApp, path: string): Promise<{ colleague: PageSession; res: LightMyRequestResponse }> {
  const colleague = new PageSession(t);
  const landing = await colleague.get(path);
  if (landing.statusCode !== 200) return { colleague, res: landing };
  return { colleague, res: await colleague.post(path, hiddenFields(landing.body, path)) };
}

async function withApp(engine: (typeof engines)[number], options: Omit<TestAppOptions, 'engine'>, body: (t: TestApp) => Promise<void>): Promise<void> {
  const t = await createTestApp({ engine, ...options });
  try {
    await body(t);
  } finally {
    await t.close();
  }
}

for (const engine of engines) {
  describe(`setup links: what they lead to and how long they last (${engine.name})`, () => {
    it("the link's wizard token provisions people but cannot make an admin; the link's secret is not logged", async () => {
      const lines: string[] = [];
      await withApp(engine, { config: { logLevel: 'info' }, logStream: { write: (line) => void lines.push(line) } }, async (t) => {
        const { page } = await signedIn(t, 'admin@acme.example');
        const path = await makeLink(page);
        const secret = path.split('/').pop()!;
        const { colleague, res } = await use(t, path);
        assert.equal(res.statusCode, 303, res.body);
        assert.equal((await use(t, path)).res.statusCode, 410, 'a second use is refused (and logged)');

        const form = await colleague.get('/console/setup/wizard/generic-token');
        const made = await colleague.post('/console/setup/wizard/generic-token', { ...hiddenFields(form.body, '/console/setup/wizard/generic-token'), name: 'Via link' });
        assert.equal(made.statusCode, 303, made.body);
        const token = /<code id="v-token">(rc_at_[^<]+)<\/code>/.exec((await colleague.get(String(made.headers.location))).body)?.[1];
        assert.ok(token);
        const scim = (body: unknown) => t.app.inject({ method: 'POST', url: '/v2/scim/Users', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' }, payload: JSON.stringify(body) });
        const mallory = await scim({ schemas: [USER], userName: 'mallory', userType: 'admin', password: 'correct horse battery' });
        assert.equal(mallory.statusCode, 403, mallory.body);
        assert.match(mallory.body, /cannot make a user an admin/);
        const signIn = new PageSession(t);
        const signInForm = await signIn.get('/console/sign-in');
        assert.equal((await signIn.post('/console/sign-in', { ...hiddenFields(signInForm.body), username: 'mallory', password: 'correct horse battery' })).statusCode, 401);
        assert.equal((await scim({ schemas: [USER], userName: 'new.hire@acme.example', userType: 'Employee' })).statusCode, 201, 'provisioning goes on');

        const log = lines.join('');
        assert.ok(log.includes('/console/setup/[redacted]'), 'the requests are logged, their secret redacted');
        assert.ok(!log.includes(secret), 'the link\'s secret is nowhere in the log');
        assert.ok(!log.includes('rc_setup_'), 'nor any part of it');
      });
    });

    it('redactUrl hides a secret-shaped path segment, however it is spelled, and leaves ids alone', () => {
      assert.equal(redactUrl('/console/setup/rc_setup_abc-DEF_123'), '/console/setup/[redacted]');
      assert.equal(redactUrl('/console/setup/%72c_setup_abc?x=1&token=t'), '/console/setup/[redacted]?x=1&token=[redacted]');
      assert.equal(redactUrl('/console/setup/rc%5Fsetup%5Fabc'), '/console/setup/[redacted]');
      assert.equal(redactUrl('/console/users/AAAAAAAAAAAAAAAAAAAA?q=ann_b'), '/console/users/AAAAAAAAAAAAAAAAAAAA?q=ann_b');
      assert.equal(redactUrl('/v2/scim/Users/some_user_id'), '/v2/scim/Users/some_user_id');
    });

    /** Admin A sends two links (one used, its session open; one unused), admin B one; `end` ends A. */
    async function linksEndWithTheirAdmin(options: Omit<TestAppOptions, 'engine'>, end: (t: TestApp, a: string, b: PageSession) => Promise<void>): Promise<void> {
      await withApp(engine, options, async (t) => {
        const a = await signedIn(t, 'a@acme.example');
        const b = await signedIn(t, 'b@acme.example');
        const used = await makeLink(a.page, 'used@acme.example');
        const unused = await makeLink(a.page, 'unused@acme.example');
        const others = await makeLink(b.page, 'other@acme.example');
        const { colleague, res } = await use(t, used);
        assert.equal(res.statusCode, 303);
        assert.equal((await colleague.get('/console/setup/wizard')).statusCode, 200);

        await end(t, a.id, b.page);

        assert.equal((await colleague.get('/console/setup/wizard')).statusCode, 401, 'the session the link opened ended');
        const refused = await use(t, unused);
        assert.equal(refused.res.statusCode, 410);
        assert.match(refused.res.body, /withdrawn/);
        assert.equal((await use(t, others)).res.statusCode, 303, "another admin's link works on");
        const connect = await b.page.get('/console/connect');
        assert.equal(connect.statusCode, 200);
      });
    }

    it("removing the admin on the Admins page withdraws the links they sent and ends their links' sessions", async () => {
      await linksEndWithTheirAdmin({}, async (_t, a, b) => {
        const path = `/console/admins/${a}/remove`;
        const confirm = await b.get(path);
        assert.equal(confirm.statusCode, 200, confirm.body);
        const removed = await b.post(path, hiddenFields(confirm.body, path));
        assert.equal(removed.statusCode, 303, removed.body);
      });
    });

    it('deactivating the admin (SCIM) withdraws their links', async () => {
      await linksEndWithTheirAdmin({}, async (t, a) => {
        const res = await t.request('PATCH', `/v2/scim/Users/${a}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'active', value: false }] });
        assert.equal(res.statusCode, 200, res.body);
      });
    });

    it('deleting the admin (SCIM DELETE in a team that shows deactivated users) withdraws their links', async () => {
      await linksEndWithTheirAdmin({ deactivatedUsers: 'visible' }, async (t, a) => {
        assert.equal((await t.request('DELETE', `/v2/scim/Users/${a}`)).statusCode, 204);
      });
    });
  });
}
