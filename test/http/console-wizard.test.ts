/**
 * The connection wizard and one-time setup links over HTTP (issue 30, item 6), on every engine.
 * Each path makes its connection and what it needs, shows the values the provider's screens ask
 * for (a secret once, by post/redirect/get), and its Test state turns from waiting to green when
 * the connection's first SCIM request arrives (method, path, status), or red with the request
 * log's reason. A setup link: made by an admin and shown once, audited; its landing changes
 * nothing; used once by a POST that opens a restricted session reaching only the wizard of its
 * team and one connection; refused when used, expired or withdrawn.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { auditEvents, updateTeamLimits } from '../../src/admin.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { EntraStandIn } from '../support/entra-standin.ts';
import { postWithAssertion } from '../support/assertions.ts';
import { until } from '../support/wait.ts';
import { CrashFrom } from '../support/storage-spy.ts';
import { adminDeps, authorizeAndApprove, hiddenFields, PageSession, postForm, registerAdmin } from '../support/oauth.ts';

const PASSWORD = 'correct horse battery staple';
const PROBE = '/v2/scim/Users?filter=userName%20eq%20%220f3e7a2c-51d4-4b8e-9a61-2c7d9e0b4f13%22';

const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** The values to paste, by key (`<code id="v-KEY">`). */
function pasted(html: string): Record<string, string> {
  return Object.fromEntries([...html.matchAll(/<code id="v-([a-z-]+)">([^<]*)<\/code>/g)].map((m) => [m[1]!, unescape(m[2]!)]));
}

async function signedIn(t: TestApp): Promise<PageSession> {
  await registerAdmin(t, 'admin@acme.example', PASSWORD);
  const page = new PageSession(t);
  const form = await page.get('/console/sign-in');
  const res = await page.post('/console/sign-in', { ...hiddenFields(form.body), username: 'admin@acme.example', password: PASSWORD });
  assert.equal(res.statusCode, 303, res.body);
  return page;
}

const connectionCount = async (t: TestApp) => Number((await t.storage.db.selectFrom('connections').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

for (const engine of engines) {
  describe(`connection wizard (HTTP), on ${engine.name}`, () => {
    let t: TestApp;
    let page: PageSession;
    beforeEach(async () => {
      t = await createTestApp({ engine });
      page = await signedIn(t);
    });
    afterEach(() => t.close());

    /** Fills in path `path`'s form and follows the redirect: the connection's page, the secret on it once. */
    async function make(path: string, fields: Record<string, string>, session = page, base = '/console/connect'): Promise<{ url: string; first: LightMyRequestResponse; values: Record<string, string> }> {
      const form = await session.get(`${base}/${path}`);
      assert.equal(form.statusCode, 200, form.body);
      const made = await session.post(`${base}/${path}`, { ...hiddenFields(form.body, `${base}/${path}`), ...fields });
      assert.equal(made.statusCode, 303, made.body);
      const url = String(made.headers.location);
      assert.match(url, new RegExp(`^${base}/connections/[A-Z0-9]{20}$`));
      const first = await session.get(url);
      assert.equal(first.statusCode, 200, first.body);
      return { url, first, values: pasted(first.body) };
    }

    /** The Test state's fragment, once it is no longer waiting. */
    async function tested(url: string, session = page): Promise<string> {
      let body = '';
      await until(async () => {
        const res = await session.get(`${url}/test`);
        assert.equal(res.statusCode, 200, res.body);
        body = res.body;
        return !body.includes('data-state="waiting"');
      }, 'the Test state to change');
      return body;
    }

    const scimGet = (token: string, url = PROBE) => t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });

    for (const [path, tokenKey, labels] of [
      ['entra-token', 'token', ['Tenant URL', 'Secret Token']],
      ['okta-token', 'token', ['SCIM connector base URL', 'Unique identifier field for users', 'Authorization: Bearer']],
      ['generic-token', 'token', ['SCIM base URL', 'Bearer token']],
    ] as const) {
      it(`${path}: a connection with a token shown once; Test waits, then turns green with the first request`, async () => {
        const { url, first, values } = await make(path, { name: `${path} production` });
        for (const label of labels) assert.ok(first.body.includes(label), label);
        const token = values[tokenKey]!;
        assert.match(token, /^rc_at_/);
        assert.equal(values['tenant-url'] ?? values['base-url'], 'https://rollcall.test/v2/scim');
        assert.match(first.body, /data-copy="v-token"/);
        const again = await page.get(url);
        assert.equal(pasted(again.body)[tokenKey], undefined, 'a reload shows the token no more');
        assert.match(again.body, /Shown once, when the connection was made/);
        assert.match((await page.get(`${url}/test`)).body, /data-state="waiting"/);
        assert.equal((await scimGet(token)).statusCode, 200);
        const green = await tested(url);
        assert.match(green, /data-state="ok"/);
        assert.ok(green.includes('GET /v2/scim/Users?filter=userName'), green);
        assert.match(green, /<strong>200<\/strong>/);
        const audit = await auditEvents(adminDeps(t), t.team.name, undefined, 50);
        assert.ok(audit.some((a) => a.action === 'connection_created'));
        assert.ok(audit.some((a) => a.action === 'token_issued'));
      });
    }

    it('entra-gallery-secret: a client of the connection with a secret shown once; client credentials then SCIM turn Test green', async () => {
      const { url, values } = await make('entra-gallery-secret', { name: 'Entra ID production' });
      assert.equal(values['token-endpoint'], 'https://rollcall.test/oauth/token');
      assert.match(values['client-id']!, /^[A-Z0-9]{20}$/);
      assert.match(values['client-secret']!, /^rc_cs_/);
      assert.equal(pasted((await page.get(url)).body)['client-secret'], undefined);
      const granted = await postForm(t, '/oauth/token', { grant_type: 'client_credentials', client_id: values['client-id']!, client_secret: values['client-secret']! }, { auth: 'none' });
      assert.equal(granted.statusCode, 200, granted.body);
      assert.equal(json(granted).expires_in, 3600, 'Entra asks for 60 to 360 minutes');
      assert.equal((await scimGet(String(json(granted).access_token))).statusCode, 200);
      assert.match(await tested(url), /data-state="ok"/);
    });

    it('entra-gallery-federation: a client trusting the tenant; an Entra-signed assertion then SCIM turn Test green', async () => {
      const entra = await EntraStandIn.start(() => t.clock.now());
      try {
        const { url, first, values } = await make('entra-gallery-federation', { name: 'Entra ID federated', issuer: entra.issuer, subject: entra.objectId });
        assert.equal(values.issuer, entra.issuer);
        assert.equal(values.subject, entra.objectId);
        assert.equal(values['client-secret'], undefined);
        assert.doesNotMatch(first.body, /rc_cs_/);
        const clientId = values['client-id']!;
        const granted = await postWithAssertion(t, '/oauth/token', await entra.assertion({ audience: clientId }), { grant_type: 'client_credentials', client_id: clientId });
        assert.equal(granted.statusCode, 200, granted.body);
        assert.equal((await scimGet(String(json(granted).access_token))).statusCode, 200);
        assert.match(await tested(url), /data-state="ok"/);
      } finally {
        await entra.close();
      }
    });

    it('entra-gallery-federation: the tenant ID gives Entra\'s issuer; a malformed one is refused on the form and writes nothing', async () => {
      const form = await page.get('/console/connect/entra-gallery-federation');
      const refused = await page.post('/console/connect/entra-gallery-federation', { ...hiddenFields(form.body, '/console/connect/entra-gallery-federation'), name: 'Entra', tenantId: 'not-a-guid', subject: 'abc' });
      assert.equal(refused.statusCode, 400);
      assert.match(refused.body, /Directory \(tenant\) ID is a GUID/);
      assert.equal(await connectionCount(t), 0);
      const tenant = '72f988bf-86f1-41af-91ab-2d7cd011db47';
      const { values } = await make('entra-gallery-federation', { name: 'Entra', tenantId: tenant, subject: 'd3c7a1f0-0000-4000-8000-000000000001' });
      assert.equal(values.issuer, `https://login.microsoftonline.com/${tenant}/v2.0`);
    });

    it('a credential refused (the team\'s client.credentials budget) leaves no connection, no client and no audit row of either', async () => {
      await updateTeamLimits(adminDeps(t), t.team.name, [{ name: 'client.credentials', value: 0 }]);
      const form = await page.get('/console/connect/entra-gallery-federation');
      const res = await page.post('/console/connect/entra-gallery-federation', { ...hiddenFields(form.body, '/console/connect/entra-gallery-federation'), name: 'Entra', tenantId: '72f988bf-86f1-41af-91ab-2d7cd011db47', subject: 'abc' });
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.body, /client\.credentials/);
      assert.equal(await connectionCount(t), 0);
      assert.equal((await t.storage.db.selectFrom('oauth_clients').selectAll().execute()).length, 0);
      const audit = await auditEvents(adminDeps(t), t.team.name, undefined, 50);
      assert.deepEqual(audit.filter((a) => a.action.startsWith('connection_') || a.action.startsWith('client_')).map((a) => a.action), [], 'one transaction: nothing made, nothing deleted');
      const retried = await page.post('/console/connect/entra-gallery-federation', { ...hiddenFields(res.body, '/console/connect/entra-gallery-federation'), name: 'Entra', tenantId: '72f988bf-86f1-41af-91ab-2d7cd011db47', subject: 'abc' });
      assert.equal(retried.statusCode, 400, 'the name is still free: refused for the budget again, not as taken');
      assert.match(retried.body, /client\.credentials/);
    });

    it('okta-code: a client for Okta\'s redirect URI; the authorization code flow then SCIM turn Test green', async () => {
      const redirect = 'https://acme-admin.okta.com/admin/app/cpc/rollcall/oauth/callback';
      const { url, values } = await make('okta-code', { name: 'Okta production', redirectUri: redirect });
      assert.equal(values['authorize-endpoint'], 'https://rollcall.test/oauth/authorize');
      assert.equal(values['token-endpoint'], 'https://rollcall.test/oauth/token');
      assert.equal(values['redirect-uri'], redirect);
      assert.equal(values.scopes, 'read write');
      const back = await authorizeAndApprove(t, { response_type: 'code', client_id: values['client-id']!, redirect_uri: redirect, scope: values.scopes!, state: 'okta-state' }, { userName: 'admin@acme.example', password: PASSWORD });
      const code = back.searchParams.get('code')!;
      const granted = await postForm(t, '/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: redirect }, { client: { id: values['client-id']!, secret: values['client-secret']! } });
      assert.equal(granted.statusCode, 200, granted.body);
      assert.equal((await scimGet(String(json(granted).access_token))).statusCode, 200);
      assert.match(await tested(url), /data-state="ok"/);
    });

    it('okta-code: a redirect URI that is not https is refused on the form', async () => {
      const form = await page.get('/console/connect/okta-code');
      const res = await page.post('/console/connect/okta-code', { ...hiddenFields(form.body, '/console/connect/okta-code'), name: 'Okta', redirectUri: 'http://okta.example/callback' });
      assert.equal(res.statusCode, 400);
      assert.match(res.body, /must use https/);
      assert.equal(await connectionCount(t), 0);
    });

    it('a failing first request turns Test red with the request log\'s reason', async () => {
      const { url, values } = await make('generic-token', { name: 'script' });
      const res = await scimGet(values.token!, '/v2/scim/Users?filter=userName%20zz%20%22x%22');
      assert.equal(res.statusCode, 400);
      const red = await tested(url);
      assert.match(red, /data-state="failed"/);
      assert.match(red, /<strong>400<\/strong>/);
      assert.match(red, /invalidFilter: /);
      assert.ok(red.includes(String(json(res).detail).slice(0, 30).replace(/&/g, '&amp;').replace(/"/g, '&quot;')), red);
    });

    it('names are unique per team (409 on the form); a hostile name is escaped; forms need the CSRF token', async () => {
      const hostile = '<script>alert(1)</script> "Entra"';
      const { first } = await make('entra-token', { name: hostile });
      assert.ok(!first.body.includes('<script>alert(1)</script>'));
      const form = await page.get('/console/connect/okta-token');
      const again = await page.post('/console/connect/okta-token', { ...hiddenFields(form.body, '/console/connect/okta-token'), name: hostile.toUpperCase() });
      assert.equal(again.statusCode, 409, again.body);
      const noCsrf = await page.post('/console/connect/okta-token', { name: 'Okta' });
      assert.equal(noCsrf.statusCode, 403);
      assert.equal(await connectionCount(t), 1);
      assert.equal((await page.get('/console/connect/connections/AAAAAAAAAAAAAAAAAAAA')).statusCode, 404);
      assert.equal((await page.get('/console/connect/no-such-path')).statusCode, 404);
    });

    describe('setup links', () => {
      /** Makes a link on the wizard's page; returns its URL's path, shown once. */
      async function makeLink(recipient = 'it@acme.example', hours = '72'): Promise<string> {
        const start = await page.get('/console/connect');
        const made = await page.post('/console/connect/links', { ...hiddenFields(start.body, '/console/connect/links'), recipient, hours });
        assert.equal(made.statusCode, 303, made.body);
        assert.equal(made.headers.location, '/console/connect');
        const shown = await page.get('/console/connect');
        const link = /<code id="setup-link">([^<]+)<\/code>/.exec(shown.body)?.[1];
        assert.ok(link, 'the link is shown once');
        assert.equal(/<code id="setup-link">/.exec((await page.get('/console/connect')).body), null, 'and not on a reload');
        assert.ok(link.startsWith('https://rollcall.test/console/setup/rc_setup_'));
        return new URL(link).pathname;
      }

      /** Opens the link in a fresh browser: its landing, then the button. */
      async function use(path: string): Promise<{ colleague: PageSession; res: LightMyRequestResponse }> {
        const colleague = new PageSession(t);
        const landing = await colleague.get(path);
        if (landing.statusCode !== 200) return { colleague, res: landing };
        const res = await colleague.post(path, hiddenFields(landing.body, path));
        return { colleague, res };
      }

      it('is made and shown once, audited; its landing changes nothing; used once it opens only the wizard of its team', async () => {
        const path = await makeLink();
        const secret = path.split('/').pop()!;
        assert.doesNotMatch(JSON.stringify(await t.storage.db.selectFrom('setup_links').selectAll().execute()), new RegExp(secret), 'kept only as a hash');
        const viewer = new PageSession(t);
        assert.equal((await viewer.get(path)).statusCode, 200);
        assert.equal((await viewer.get(path)).statusCode, 200, 'a GET (a mail scanner) does not use the link');
        const { colleague, res } = await use(path);
        assert.equal(res.statusCode, 303, res.body);
        assert.equal(res.headers.location, '/console/setup/wizard');
        const cookie = ([] as string[]).concat(res.headers['set-cookie'] ?? []).find((c) => c.startsWith('rollcall_setup='));
        assert.ok(cookie);
        assert.match(cookie, /HttpOnly/);
        assert.match(cookie, /SameSite=Strict/);
        assert.match(cookie, /Path=\/console\/setup(;|$)/);
        const wizard = await colleague.get('/console/setup/wizard');
        assert.equal(wizard.statusCode, 200);
        assert.match(wizard.body, /Microsoft Entra ID/);
        assert.doesNotMatch(wizard.body, /href="\/console\/users"/, 'no console navigation');
        assert.doesNotMatch(wizard.body, /okta-code/, 'the code flow needs an admin: not offered');
        assert.equal((await colleague.get('/console/setup/wizard/okta-code')).statusCode, 404);
        for (const other of ['/console', '/console/users', '/console/connect', '/console/connections', '/console/settings', '/console/audit']) {
          const res = await colleague.get(other);
          assert.equal(res.statusCode, 303, other);
          assert.equal(res.headers.location, '/console/sign-in', other);
        }
        const second = await use(path);
        assert.equal(second.res.statusCode, 410);
        assert.match(second.res.body, /used already/);

        const { url, values } = await make('entra-token', { name: 'Entra via link' }, colleague, '/console/setup/wizard');
        assert.match(values.token!, /^rc_at_/);
        assert.equal((await colleague.get('/console/setup/wizard')).headers.location, url, 'one connection per link');
        assert.equal((await colleague.get('/console/setup/wizard/okta-token')).headers.location, url);
        assert.equal((await scimGet(values.token!)).statusCode, 200);
        assert.match(await tested(url, colleague), /data-state="ok"/);
        const audit = await auditEvents(adminDeps(t), t.team.name, undefined, 100);
        const made = audit.find((a) => a.action === 'setup_link_created');
        const used = audit.find((a) => a.action === 'setup_link_used');
        assert.ok(made && used);
        const created = audit.find((a) => a.action === 'connection_created' && JSON.stringify(a.detail).includes('Entra via link'));
        assert.ok(created);
        assert.equal((created.actor as { setupLinkId?: string }).setupLinkId, used.resourceId);
      });

      it('an expired link and a withdrawn one are refused; withdrawing ends the session it opened', async () => {
        const expiring = await makeLink('a@acme.example', '24');
        const path = await makeLink('b@acme.example');
        const { colleague, res } = await use(path);
        assert.equal(res.statusCode, 303);
        assert.equal((await colleague.get('/console/setup/wizard')).statusCode, 200);
        const start = await page.get('/console/connect');
        const revoke = /href="(\/console\/connect\/links\/[A-Z0-9]{20}\/revoke)"/.exec(start.body)?.[1];
        assert.ok(revoke);
        const confirm = await page.get(revoke);
        assert.match(confirm.body, /wizard session it opened ends now/);
        const done = await page.post(revoke, hiddenFields(confirm.body, revoke));
        assert.equal(done.statusCode, 303);
        assert.equal((await colleague.get('/console/setup/wizard')).statusCode, 401);
        const unused = await makeLink('c@acme.example');
        const again = await page.get('/console/connect');
        // Newest first: the link just made.
        const revokeUnused = [...again.body.matchAll(/href="(\/console\/connect\/links\/[A-Z0-9]{20}\/revoke)"/g)][0]![1]!;
        const confirmUnused = await page.get(revokeUnused);
        await page.post(revokeUnused, hiddenFields(confirmUnused.body, revokeUnused));
        const withdrawn = await use(unused);
        assert.equal(withdrawn.res.statusCode, 410);
        assert.match(withdrawn.res.body, /withdrawn/);
        assert.equal((await new PageSession(t).get('/console/setup/rc_setup_nonsense')).statusCode, 404);
        const audit = await auditEvents(adminDeps(t), t.team.name, undefined, 100);
        assert.equal(audit.filter((a) => a.action === 'setup_link_revoked').length, 2);

        assert.equal((await new PageSession(t).get(expiring)).statusCode, 200, 'still usable within its 24 hours');
        t.clock.advance(25 * 3_600_000);
        const expired = await use(expiring);
        assert.equal(expired.res.statusCode, 410);
        assert.match(expired.res.body, /expired/);
      });
    });
  });

  describe(`connection wizard: one transaction per path, on ${engine.name}`, () => {
    const crash = new CrashFrom();
    let t: TestApp;
    let page: PageSession;
    beforeEach(async () => {
      crash.disarm();
      t = await createTestApp({ engine, wrapStorage: (s) => crash.wrap(s) });
      page = await signedIn(t);
    });
    afterEach(async () => {
      crash.disarm();
      await t.close();
    });

    /** What the wizard left in the team: connections, clients, tokens, and the audit rows of connections and credentials. */
    async function left() {
      const audit = await auditEvents(adminDeps(t), t.team.name, undefined, 100);
      return {
        connections: await connectionCount(t),
        clients: (await t.storage.db.selectFrom('oauth_clients').select('id').execute()).length,
        tokens: (await t.storage.db.selectFrom('provisioning_tokens').select('id').execute()).length,
        audit: audit.map((a) => a.action).filter((a) => a.startsWith('connection_') || a.startsWith('client_') || a === 'token_issued'),
      };
    }

    for (const [path, fields, at] of [
      ['generic-token', { name: 'Script' }, 'the token'],
      ['entra-gallery-secret', { name: 'Entra' }, 'the client'],
      ['entra-gallery-federation', { name: 'Entra', tenantId: '72f988bf-86f1-41af-91ab-2d7cd011db47', subject: 'abc' }, 'the federated credential'],
    ] as const) {
      it(`${path}: a crash before ${at} is written leaves no connection, nothing of it and no audit row`, async () => {
        const form = await page.get(`/console/connect/${path}`);
        const table = at === 'the token' ? 'provisioning_tokens' : at === 'the client' ? 'oauth_clients' : 'client_federations';
        crash.arm((node) => node.includes('"InsertQueryNode"') && node.includes(`"${table}"`));
        const res = await page.post(`/console/connect/${path}`, { ...hiddenFields(form.body, `/console/connect/${path}`), ...fields });
        assert.ok(crash.crashed, 'the crash happened');
        crash.disarm();
        assert.equal(res.statusCode, 500);
        assert.deepEqual(await left(), { connections: 0, clients: 0, tokens: 0, audit: [] });
      });
    }

    it('from a setup link: a crash as the link records its connection leaves no connection, and the link can still make one', async () => {
      const start = await page.get('/console/connect');
      const made = await page.post('/console/connect/links', { ...hiddenFields(start.body, '/console/connect/links'), recipient: 'it@acme.example', hours: '72' });
      assert.equal(made.statusCode, 303, made.body);
      const link = new URL(/<code id="setup-link">([^<]+)<\/code>/.exec((await page.get('/console/connect')).body)![1]!).pathname;
      const colleague = new PageSession(t);
      const landing = await colleague.get(link);
      assert.equal((await colleague.post(link, hiddenFields(landing.body, link))).statusCode, 303);
      const form = await colleague.get('/console/setup/wizard/generic-token');
      assert.equal(form.statusCode, 200, form.body);
      crash.arm((node) => node.includes('"UpdateQueryNode"') && node.includes('"setup_links"') && node.includes('"connection_id"'));
      const res = await colleague.post('/console/setup/wizard/generic-token', { ...hiddenFields(form.body, '/console/setup/wizard/generic-token'), name: 'Script' });
      assert.ok(crash.crashed, 'the crash happened');
      crash.disarm();
      assert.equal(res.statusCode, 500);
      assert.deepEqual(await left(), { connections: 0, clients: 0, tokens: 0, audit: [] });
      const again = await colleague.get('/console/setup/wizard/generic-token');
      const retried = await colleague.post('/console/setup/wizard/generic-token', { ...hiddenFields(again.body, '/console/setup/wizard/generic-token'), name: 'Script' });
      assert.equal(retried.statusCode, 303, retried.body);
      assert.deepEqual((await left()).audit, ['connection_created', 'token_issued']);
    });
  });
}
