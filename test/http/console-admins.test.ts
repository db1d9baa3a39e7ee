/**
 * Issue 30, item 3 at the HTTP level, on both engines: the console's Admins page lists the team's
 * admins (userType admin) and only them; an admin is added (an existing user made one, or a new
 * user) with a one-time password link shown once (post/redirect/get); the link sets the password
 * once (hashed at rest, expiring after 24 hours, audited) and the admin then signs in; an admin
 * is removed only from a confirmation page, never oneself, never the last admin who signs in;
 * an application's tokens for the team are revoked from a confirmation page that counts them,
 * and its tokens for another team keep working. Another team's admin sees and changes nothing.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createClient, createTeamUser } from '../../src/admin.ts';
import { sha256 } from '../../src/ids.ts';
import { createTestApp } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { adminDeps, hiddenFields, PageSession, postForm, registerAdmin, scimStatus } from '../support/oauth.ts';

const PASSWORD = 'correct horse battery staple';

async function signIn(t: TestApp, userName: string, password = PASSWORD, team?: string): Promise<PageSession> {
  const page = new PageSession(t);
  const form = await page.get('/console/sign-in');
  const res = await page.post('/console/sign-in', { ...hiddenFields(form.body), username: userName, password, ...(team ? { team } : {}) });
  assert.equal(res.statusCode, 303, res.body);
  return page;
}

async function signedIn(t: TestApp, userName = 'admin@acme.example', team = t.team.name): Promise<PageSession> {
  await registerAdmin(t, userName, PASSWORD, team);
  return signIn(t, userName, PASSWORD, team !== t.team.name ? team : undefined);
}

const audit = async (t: TestApp, action: string) =>
  t.storage.db.selectFrom('audit_events').select(['actor', 'resource_id', 'detail']).where('action', '=', action).where('team_id', '=', t.team.id).execute();

/** Adds an admin through the page; answers the link shown on the redirected page. */
async function addAdmin(page: PageSession, userName: string): Promise<{ link: string; body: string }> {
  const shown = await page.get('/console/admins');
  const added = await page.post('/console/admins', { ...hiddenFields(shown.body, '/console/admins'), userName });
  assert.equal(added.statusCode, 303, added.body);
  assert.equal(added.headers.location, '/console/admins');
  const cookie = ([] as string[]).concat(added.headers['set-cookie'] ?? []).find((c) => c.startsWith('rollcall_console_password_link='));
  assert.ok(cookie, 'the link rides to the next page in a cookie');
  assert.match(cookie, /HttpOnly/);
  assert.match(cookie, /SameSite=Strict/);
  assert.match(cookie, /Path=\/console\/admins(;|$)/);
  const next = await page.get('/console/admins');
  const link = /<code id="password-link" class="wrap">(https:\/\/rollcall\.test\/console\/password\?token=rc_pw_[A-Za-z0-9_-]{43})<\/code>/.exec(next.body)?.[1];
  assert.ok(link, 'the link is shown');
  return { link: link!, body: next.body };
}

/** Opens a password link and sets `password` through its form. */
async function useLink(t: TestApp, link: string, password: string, repeat = password) {
  const browser = new PageSession(t);
  const path = link.replace('https://rollcall.test', '');
  const opened = await browser.get(path);
  if (opened.statusCode !== 200) return opened;
  return browser.post('/console/password', { ...hiddenFields(opened.body, '/console/password'), password, repeat });
}

for (const engine of engines) {
  describe(`console admins and applications (HTTP), on ${engine.name}`, () => {
    let t: TestApp;
    beforeEach(async () => {
      t = await createTestApp({ engine });
    });
    afterEach(() => t.close());

    it('lists the admins only; makes an existing user an admin and creates a new one, each with a link shown once; the link sets the password once', async () => {
      const page = await signedIn(t);
      await createTeamUser(adminDeps(t), 'acme', 'ada@acme.example', {});
      await createTeamUser(adminDeps(t), 'acme', 'plain@acme.example', {});
      const list = await page.get('/console/admins');
      assert.equal(list.statusCode, 200);
      assert.match(list.body, /admin@acme\.example/);
      assert.doesNotMatch(list.body, /plain@acme\.example|ada@acme\.example/, 'only admins are listed');
      assert.match(list.body, /aria-current="page">Admins &amp; apps</);

      const promoted = await addAdmin(page, 'ada@acme.example');
      assert.match(promoted.body, /ada@acme\.example<\/span> is now an admin|ada@acme\.example is now an admin/);
      assert.match(promoted.body, /no password yet/);
      const again = await page.get('/console/admins');
      assert.ok(!again.body.includes(promoted.link) && !again.body.includes('id="password-link"'), 'the link is shown only once');
      const token = new URL(promoted.link).searchParams.get('token')!;
      const stored = await t.storage.db.selectFrom('admin_password_links').selectAll().execute();
      assert.equal(stored.length, 1);
      assert.equal(stored[0]!.token_hash, sha256(token), 'hashed at rest');
      assert.ok(!JSON.stringify(stored).includes(token));
      assert.equal(Date.parse(stored[0]!.expires_at) - Date.parse(stored[0]!.created_at), 24 * 3_600_000, 'expires after 24 hours');

      // A short password is refused on the link's page, and the link still works afterwards.
      const short = await useLink(t, promoted.link, 'too short');
      assert.equal(short.statusCode, 400);
      assert.match(short.body, /at least 12 characters/);
      const differ = await useLink(t, promoted.link, 'a long enough password', 'another long password');
      assert.equal(differ.statusCode, 400);
      assert.match(differ.body, /The two passwords differ/);
      const set = await useLink(t, promoted.link, 'ada has a new password');
      assert.equal(set.statusCode, 303, set.body);
      assert.equal(set.headers.location, '/console/sign-in?ended=1');
      await signIn(t, 'ada@acme.example', 'ada has a new password');
      const twice = await useLink(t, promoted.link, 'ada tries a second time');
      assert.equal(twice.statusCode, 410, 'the link works once');
      assert.match(twice.body, /used already, it expired/);

      const created = await addAdmin(page, 'new.admin@acme.example');
      assert.match(created.body, /Admin new\.admin@acme\.example created/);
      assert.equal((await useLink(t, created.link, 'the new admin password')).statusCode, 303);
      await signIn(t, 'new.admin@acme.example', 'the new admin password');
      const user = await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent('userName eq "new.admin@acme.example"')}`);
      assert.equal(user.json().Resources[0].userType, 'admin');

      const added = await audit(t, 'admin_added');
      assert.equal(added.length, 2);
      assert.ok(added.every((r) => (JSON.parse(r.actor) as { via: string }).via === 'console'));
      assert.equal((await audit(t, 'admin_password_link_issued')).length, 2);
      const reset = await audit(t, 'admin_password_reset');
      assert.equal(reset.length, 2);
      assert.ok(!JSON.stringify(reset).includes(token), 'the audit trail holds no link');
    });

    it('refuses an empty name, an admin already, a taken link after expiry, and a new link ends the earlier one', async () => {
      const page = await signedIn(t);
      const shown = await page.get('/console/admins');
      const empty = await page.post('/console/admins', { ...hiddenFields(shown.body, '/console/admins'), userName: '  ' });
      assert.equal(empty.statusCode, 400);
      assert.match(empty.body, /Enter the user name/);
      const already = await page.post('/console/admins', { ...hiddenFields((await page.get('/console/admins')).body, '/console/admins'), userName: 'admin@acme.example' });
      assert.equal(already.statusCode, 409);
      assert.match(already.body, /is an admin already/);

      const first = await addAdmin(page, 'bo@acme.example');
      const boId = String((await t.storage.db.selectFrom('users').select('id').where('user_name', '=', 'bo@acme.example').executeTakeFirstOrThrow()).id);
      const list = await page.get('/console/admins');
      const action = `/console/admins/${boId}/password-link`;
      const made = await page.post(action, hiddenFields(list.body, action));
      assert.equal(made.statusCode, 303);
      const second = /<code id="password-link" class="wrap">([^<]+)<\/code>/.exec((await page.get('/console/admins')).body)?.[1];
      assert.ok(second && second !== first.link);
      assert.equal((await useLink(t, first.link, 'bo sets a password')).statusCode, 410, 'a newer link replaces the earlier one');
      t.clock.advance(24 * 3_600_000 + 1000);
      assert.equal((await useLink(t, second!, 'bo sets a password')).statusCode, 410, 'expired after 24 hours');
      assert.equal((await new PageSession(t).get('/console/password?token=rc_pw_nonsense')).statusCode, 410);
      assert.equal((await new PageSession(t).post('/console/password', { token: 'x', password: 'p', repeat: 'p' })).statusCode, 403, 'CSRF');
    });

    it('removes an admin only after confirmation, never oneself; their session ends and the user stays', async () => {
      const page = await signedIn(t);
      const other = await registerAdmin(t, 'other@acme.example', PASSWORD);
      const otherPage = await signIn(t, 'other@acme.example');
      const self = String((await t.storage.db.selectFrom('users').select('id').where('user_name', '=', 'admin@acme.example').executeTakeFirstOrThrow()).id);

      const own = await page.get(`/console/admins/${self}/remove`);
      assert.equal(own.statusCode, 409);
      assert.match(own.body, /You cannot remove yourself/);
      const confirm = await page.get(`/console/admins/${other.id}/remove`);
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, /Remove <strong dir="auto">other@acme\.example<\/strong> as an admin\?/);
      assert.match(confirm.body, /1 other admin can still sign in/);
      assert.equal((await otherPage.get('/console')).statusCode, 200, 'the confirmation page changes nothing');
      const removed = await page.post(`/console/admins/${other.id}/remove`, hiddenFields(confirm.body, `/console/admins/${other.id}/remove`));
      assert.equal(removed.statusCode, 303);
      assert.equal(removed.headers.location, '/console/admins?done=removed');
      assert.match((await page.get('/console/admins?done=removed')).body, /Admin removed/);
      assert.equal((await otherPage.get('/console')).statusCode, 303, "the removed admin's session ended");
      const row = await t.storage.db.selectFrom('users').select(['user_type', 'active']).where('id', '=', other.id).executeTakeFirstOrThrow();
      assert.deepEqual([row.user_type, row.active], [null, 1], 'the user stays, without the admin userType');
      assert.equal((await audit(t, 'admin_removed')).length, 1);

    });

    it('two admins removing each other at once: one succeeds, one admin who signs in is left', async () => {
      const page = await signedIn(t);
      const other = await registerAdmin(t, 'other@acme.example', PASSWORD);
      const otherPage = await signIn(t, 'other@acme.example');
      const self = String((await t.storage.db.selectFrom('users').select('id').where('user_name', '=', 'admin@acme.example').executeTakeFirstOrThrow()).id);
      const mine = await page.get(`/console/admins/${other.id}/remove`);
      const theirs = await otherPage.get(`/console/admins/${self}/remove`);
      const answers = await Promise.all([
        page.post(`/console/admins/${other.id}/remove`, hiddenFields(mine.body, `/console/admins/${other.id}/remove`)),
        otherPage.post(`/console/admins/${self}/remove`, hiddenFields(theirs.body, `/console/admins/${self}/remove`)),
      ]);
      const done = answers.filter((a) => a.statusCode === 303 && a.headers.location === '/console/admins?done=removed');
      assert.equal(done.length, 1, answers.map((a) => `${a.statusCode} ${String(a.headers.location)} ${a.body.slice(0, 200)}`).join('\n'));
      const admins = await t.storage.db.selectFrom('users').select('user_name').where('user_type', '=', 'admin').execute();
      assert.equal(admins.length, 1, 'exactly one admin is left');
      assert.equal((await audit(t, 'admin_removed')).length, 1);
    });

    it("revokes an application's tokens for the team after a confirmation that counts them; its other team's tokens keep working", async () => {
      const page = await signedIn(t);
      const globex = await t.addTeam('globex');
      const client = await createClient(adminDeps(t), { name: 'HR <app>', redirectUris: ['https://app.example/cb'] });
      const user = await registerAdmin(t, 'user@acme.example', 'user password long enough');
      const grant = async (team: string, userName: string, password: string) => {
        const res = await postForm(t, '/oauth/token', { grant_type: 'password', username: userName, password, scope: 'read', team }, { client: { id: client.client_id, secret: client.client_secret } });
        assert.equal(res.statusCode, 200, res.body);
        return res.json().access_token as string;
      };
      const tokens = [await grant('acme', user.userName, user.password), await grant('acme', user.userName, user.password)];
      await registerAdmin(t, 'g@globex.example', 'globex password long', 'globex');
      const theirs = await grant('globex', 'g@globex.example', 'globex password long');
      for (const token of [...tokens, theirs]) assert.equal(await scimStatus(t, token), 200);

      const list = await page.get('/console/admins');
      assert.match(list.body, /HR &lt;app&gt;/);
      const confirm = await page.get(`/console/admins/applications/${client.client_id}/revoke`);
      assert.equal(confirm.statusCode, 200);
      assert.match(confirm.body, /This ends <strong>4 live tokens<\/strong> \(access and refresh\), issued for 1 user/);
      for (const token of tokens) assert.equal(await scimStatus(t, token), 200, 'the confirmation page revokes nothing');
      const revoked = await page.post(`/console/admins/applications/${client.client_id}/revoke`, hiddenFields(confirm.body, `/console/admins/applications/${client.client_id}/revoke`));
      assert.equal(revoked.statusCode, 303);
      for (const token of tokens) assert.equal(await scimStatus(t, token), 401);
      assert.equal(await scimStatus(t, theirs), 200, "the client's tokens for another team keep working");
      assert.doesNotMatch((await page.get('/console/admins')).body, /HR &lt;app&gt;/, 'no live tokens left: not listed');
      assert.equal((await page.get(`/console/admins/applications/${client.client_id}/revoke`)).statusCode, 404);
      const row = (await audit(t, 'application_revoked'))[0]!;
      assert.equal(JSON.parse(row.detail).tokensRevoked, 4);
      void globex;
    });

    it("another team's admin gets 404 and changes nothing; forms need their CSRF token; signed out, the pages send to sign-in", async () => {
      for (const path of ['/console/admins', '/console/admins/X/remove', '/console/admins/applications/X/revoke']) {
        const res = await t.app.inject({ method: 'GET', url: path });
        assert.equal(res.statusCode, 303, path);
        assert.equal(res.headers.location, '/console/sign-in');
      }
      await signedIn(t);
      const acmeAdmin = String((await t.storage.db.selectFrom('users').select('id').where('user_name', '=', 'admin@acme.example').executeTakeFirstOrThrow()).id);
      await t.addTeam('globex');
      const other = await signedIn(t, 'admin@globex.example', 'globex');
      const csrf = hiddenFields((await other.get('/console/admins')).body, '/console/admins')._csrf!;
      assert.doesNotMatch((await other.get('/console/admins')).body, /admin@acme\.example/);
      assert.equal((await other.get(`/console/admins/${acmeAdmin}/remove`)).statusCode, 404);
      assert.equal((await other.post(`/console/admins/${acmeAdmin}/remove`, { _csrf: csrf })).statusCode, 404);
      assert.equal((await other.post(`/console/admins/${acmeAdmin}/password-link`, { _csrf: csrf })).statusCode, 404);
      assert.equal((await other.post('/console/admins', { userName: 'x@x.example' })).statusCode, 403);
      assert.equal((await t.storage.db.selectFrom('admin_password_links').selectAll().execute()).length, 0);
    });
  });
}
