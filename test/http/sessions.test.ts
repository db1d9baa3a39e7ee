/**
 * Issue 13 item 7: browser sessions are server-side. A password change, a deactivation, losing
 * `admin` and a sign-out each end a session at once: the old cookie (or a copy of it) gets the
 * sign-in page, never the consent page, and a decision posted with it mints no code. Expiry
 * still works, and two app instances on one database see the same revocation. On every engine.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { buildApp } from '../../src/app.ts';
import type { FastifyInstance } from 'fastify';
import { createTestApp, TEST_CONFIG } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { hiddenFields, PageSession, registerAdmin, registerClient } from '../support/oauth.ts';
import type { TestClient } from '../support/oauth.ts';

const REDIRECT = 'https://app.example/callback';
const SIGN_IN = /<h1 id="title">Sign in<\/h1>/;
const CONSENT = /Allow Acme Sync to access acme\?/;

async function codesIssued(t: TestApp): Promise<number> {
  const row = await t.storage.db.selectFrom('oauth_codes').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

for (const engine of engines) {
  describe(`browser sessions end at once (${engine.name})`, () => {
    let t: TestApp;
    let client: TestClient;
    let admin: { id: string; userName: string; password: string };
    let second: FastifyInstance | undefined;
    afterEach(async () => {
      await second?.close();
      second = undefined;
      await t.close();
    });

    const setup = async () => {
      t = await createTestApp({ engine });
      client = await registerClient(t, [REDIRECT]);
      admin = await registerAdmin(t);
    };
    const url = () => `/oauth/authorize?${new URLSearchParams({ client_id: client.id, redirect_uri: REDIRECT, response_type: 'code', state: 's' }).toString()}`;

    /** Signs in through the pages; returns the browser and the consent page's decision fields. */
    async function signedIn(app: Pick<TestApp, 'app'> = t): Promise<{ browser: PageSession; decision: Record<string, string> }> {
      const browser = new PageSession(app);
      const page = await browser.get(url());
      const posted = await browser.post('/oauth/authorize', { ...hiddenFields(page.body), username: admin.userName, password: admin.password });
      assert.equal(posted.statusCode, 303, posted.body);
      const consent = await browser.get(url());
      assert.match(consent.body, CONSENT);
      return { browser, decision: hiddenFields(consent.body, '/oauth/authorize/decision') };
    }

    /** The old cookie gets the sign-in page, and approving with it mints no code. */
    async function assertEnded(browser: PageSession, decision: Record<string, string>): Promise<void> {
      const before = await codesIssued(t);
      const page = await browser.get(url());
      assert.equal(page.statusCode, 200);
      assert.match(page.body, SIGN_IN);
      assert.doesNotMatch(page.body, CONSENT);
      const approved = await browser.post('/oauth/authorize/decision', { ...decision, decision: 'approve' });
      assert.equal(approved.statusCode, 401, approved.body);
      assert.equal(approved.headers.location, undefined, 'no redirect carrying a code');
      assert.match(approved.body, SIGN_IN);
      assert.equal(await codesIssued(t), before, 'no code was minted');
    }

    const patchUser = (operations: unknown[]) =>
      t.request('PATCH', `/v2/scim/Users/${admin.id}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: operations });

    it('a password change ends the session (the old cookie gets the sign-in page, never a code)', async () => {
      await setup();
      const { browser, decision } = await signedIn();
      const res = await patchUser([{ op: 'replace', path: 'password', value: 'a completely new password' }]);
      assert.equal(res.statusCode, 200, res.body);
      await assertEnded(browser, decision);
    });

    it('a deactivation ends the session', async () => {
      await setup();
      const { browser, decision } = await signedIn();
      assert.equal((await patchUser([{ op: 'replace', path: 'active', value: false }])).statusCode, 200);
      await assertEnded(browser, decision);
    });

    it('losing admin (userType no longer admin) ends the session, and regaining it does not revive it', async () => {
      await setup();
      const { browser, decision } = await signedIn();
      assert.equal((await patchUser([{ op: 'replace', path: 'userType', value: 'employee' }])).statusCode, 200);
      await assertEnded(browser, decision);
      assert.equal((await patchUser([{ op: 'replace', path: 'userType', value: 'admin' }])).statusCode, 200);
      assert.match((await browser.get(url())).body, SIGN_IN);
    });

    it('sign-out ends the session: a copy of the old cookie is dead at once', async () => {
      await setup();
      const { browser, decision } = await signedIn();
      const copy = browser.on(t);
      const out = await browser.post('/oauth/signout', decision);
      assert.equal(out.statusCode, 303);
      await assertEnded(copy, decision);
    });

    it('a session still expires after 30 minutes', async () => {
      await setup();
      const { browser, decision } = await signedIn();
      t.clock.advance(29 * 60 * 1000);
      assert.match((await browser.get(url())).body, CONSENT);
      t.clock.advance(2 * 60 * 1000);
      await assertEnded(browser, decision);
    });

    it('two instances on one database: a sign-out on one and a password change through the other end the session on both', async () => {
      await setup();
      second = await buildApp({ config: TEST_CONFIG, storage: t.storage, clock: t.clock });
      const other = { app: second };
      // Signed in on instance one, the session works on instance two.
      const first = await signedIn();
      const there = first.browser.on(other);
      assert.match((await there.get(url())).body, CONSENT);
      await first.browser.post('/oauth/signout', first.decision);
      assert.match((await there.get(url())).body, SIGN_IN, 'signed out on one instance, ended on the other');

      // Signed in on instance two; the password changes through instance one's SCIM API.
      const again = await signedIn(other);
      assert.match((await again.browser.on(t).get(url())).body, CONSENT);
      const changed = await t.request('PATCH', `/v2/scim/Users/${admin.id}`, {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [{ op: 'replace', path: 'password', value: 'yet another new password' }],
      });
      assert.equal(changed.statusCode, 200);
      assert.match((await again.browser.get(url())).body, SIGN_IN);
      assert.match((await again.browser.on(t).get(url())).body, SIGN_IN);
    });
  });
}
