/**
 * Issue 30, item 1 in the console (HTTP level): the Connections page lists connections with
 * their tokens and clients; an admin adds, renames (names unique per team, whatever their case)
 * and deletes one (after a confirmation saying how many live tokens and clients stop working);
 * the request log names the connection; and a connection an admin made in the console keeps
 * working after that admin is deactivated, and after that admin is deleted.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createClient } from '../../src/admin.ts';
import { deactivateUser } from '../../src/admin-users.ts';
import { createTestApp } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { adminDeps, hiddenFields, PageSession, registerAdmin, scimStatus } from '../support/oauth.ts';
import { addConnectionInConsole, issueInConsole } from '../support/console-connections.ts';
import { until } from '../support/wait.ts';

const PASSWORD = 'correct horse battery staple';

async function signedIn(t: TestApp, userName = 'admin@acme.example'): Promise<PageSession> {
  await registerAdmin(t, userName, PASSWORD);
  const page = new PageSession(t);
  const form = await page.get('/console/sign-in');
  const res = await page.post('/console/sign-in', { ...hiddenFields(form.body), username: userName, password: PASSWORD });
  assert.equal(res.statusCode, 303, res.body);
  return page;
}

for (const engine of engines) {
  describe(`console: connections (${engine.name})`, () => {
    it('adds, lists with tokens and clients, renames (unique names), deletes after a confirmation that counts what stops', async () => {
      const t = await createTestApp({ engine });
      try {
        const page = await signedIn(t);
        const path = await addConnectionInConsole(page, 'Okta production', 'okta');
        const first = await issueInConsole(page, path, { name: 'token one' });
        await issueInConsole(page, path, { name: 'token two' });
        const refused = await issueInConsole(page, path, { name: 'bad', expiresIn: '900d' });
        assert.equal(refused.posted.statusCode, 400, 'an expiry out of range is refused on the page');
        assert.match(refused.posted.body, /from 1 minute to 366 days/);
        await createClient(adminDeps(t), { name: 'Okta OAuth', redirectUris: [], team: 'acme', connection: 'okta production' });

        const list = await page.get('/console/connections');
        assert.match(list.body, /Okta production<\/a>/);
        assert.match(list.body, /2 live tokens: <span dir="auto">token two<\/span>, <span dir="auto">token one<\/span>/);
        assert.match(list.body, /1 client: <a href="\/console\/connections\/clients\/[A-Z0-9]+" dir="auto">Okta OAuth<\/a>/);
        assert.match(list.body, /data-label="Name"/, 'a stacking table');

        const duplicate = await page.post('/console/connections', { ...hiddenFields(list.body, '/console/connections'), name: ' OKTA production ' });
        assert.equal(duplicate.statusCode, 409);
        assert.match(duplicate.body, /a connection named &quot;Okta production&quot; already exists/);

        const own = await page.get(path);
        const renamed = await page.post(`${path}/rename`, { ...hiddenFields(own.body, `${path}/rename`), name: 'Okta <prod>' });
        assert.equal(renamed.statusCode, 303);
        assert.match((await page.get(path)).body, /<h1[^>]*>Okta &lt;prod&gt;<\/h1>/);

        const confirm = await page.get(`${path}/delete`);
        assert.equal(confirm.statusCode, 200);
        assert.match(confirm.body, /Deleting "Okta &lt;prod&gt;" stops 2 live tokens and 1 OAuth client/);
        assert.equal(await scimStatus(t, first.token!), 200, 'the confirmation deletes nothing');
        const deleted = await page.post(`${path}/delete`, hiddenFields(confirm.body, `${path}/delete`));
        assert.equal(deleted.statusCode, 303);
        assert.equal(await scimStatus(t, first.token!), 401);
        assert.match((await page.get('/console/connections')).body, /No connections yet/);
        assert.equal((await page.get(path)).statusCode, 404);
      } finally {
        await t.close();
      }
    });

    it('the token page reached by another admin shows the token gone; a signed-out browser is sent to sign-in', async () => {
      const t = await createTestApp({ engine });
      try {
        const page = await signedIn(t);
        const path = await addConnectionInConsole(page, 'Entra ID production');
        const issued = await issueInConsole(page, path, { name: 'secret' });
        assert.ok(issued.token);
        const other = await signedIn(t, 'second@acme.example');
        const seen = await other.get(String(issued.posted.headers.location));
        assert.equal(seen.statusCode, 200);
        assert.ok(!seen.body.includes(issued.token));
        assert.match(seen.body, /shown once and is gone/);
        const outsider = new PageSession(t);
        assert.equal((await outsider.get(path)).statusCode, 303, 'signed out: to sign-in');
      } finally {
        await t.close();
      }
    });

    it('a connection made in the console keeps working when its admin is deactivated, then deleted; the request log names it', async () => {
      const t = await createTestApp({ engine, deactivatedUsers: 'visible' });
      try {
        const page = await signedIn(t);
        const path = await addConnectionInConsole(page, 'Entra ID production', 'entra');
        const { token } = await issueInConsole(page, path, { name: 'Entra token' });
        assert.ok(token);
        const admin = (await t.storage.db.selectFrom('users').select('id').where('user_name', '=', 'admin@acme.example').executeTakeFirstOrThrow()).id;

        await deactivateUser(adminDeps(t), 'acme', 'admin@acme.example');
        assert.equal(await scimStatus(t, token), 200, 'deactivated admin: the connection works on');
        assert.equal((await t.request('DELETE', `/v2/scim/Users/${admin}`)).statusCode, 204);
        const failing = await t.app.inject({ method: 'POST', url: '/v2/scim/Users', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' }, payload: JSON.stringify({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'] }) });
        assert.equal(failing.statusCode, 400, 'deleted admin: the connection still answers as itself');

        const other = await signedIn(t, 'other.admin@acme.example');
        await until(async () => (await t.storage.db.selectFrom('request_log').select('id').where('status', '=', 400).execute()).length === 1, 'the request log');
        const log = await other.get('/console/requests?status=4xx');
        assert.match(log.body, /<td data-label="Connection"[^>]*>.*Entra ID production/s);
        const connectionId = /\/console\/connections\/([A-Z0-9]{20})/.exec(path)![1]!;
        const filtered = await other.get(`/console/requests?connection=connection:${connectionId}`);
        assert.equal(filtered.statusCode, 200);
        assert.match(filtered.body, /Entra ID production/);
      } finally {
        await t.close();
      }
    });
  });
}
