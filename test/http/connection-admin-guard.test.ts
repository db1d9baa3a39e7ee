/**
 * A connection's token provisions people; it never hands out the console (review of issue 30,
 * finding 1). Whoever holds a connection's write token (an identity provider, or a colleague
 * who used a setup link) cannot create an admin who signs in, make a user one, take that from an
 * admin, or set an admin's password: SCIM 403 with a clear detail, nothing written. The
 * providers' own writes (userType "Employee", a password for a user who does not sign in) go
 * on; an admin's own token may still do all of it.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { issueToken } from '../../src/admin.ts';
import { consoleActor } from '../../src/console/directory.ts';
import { createConnection } from '../../src/oauth/connections.ts';
import { issueProvisioningToken } from '../../src/oauth/provisioning.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { adminDeps, hiddenFields, PageSession, registerAdmin } from '../support/oauth.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const PASSWORD = 'correct horse battery staple';

for (const engine of engines) {
  describe(`a connection's token cannot make or change an admin who signs in (${engine.name})`, () => {
    let t: TestApp;
    let admin: { id: string; userName: string };
    let token: string;
    beforeEach(async () => {
      t = await createTestApp({ engine });
      admin = await registerAdmin(t, 'admin@acme.example', PASSWORD);
      const actor = consoleActor(admin.id);
      const connection = await createConnection(t.storage, t.clock, { teamId: t.team.id, name: 'Generic SCIM', provider: 'generic', actor, requestId: null });
      token = (await issueProvisioningToken(t.storage, t.clock, { teamId: t.team.id, connectionId: connection.id, name: 'token', scope: ['read', 'write'], ttlSeconds: 86_400, actor, requestId: null })).token;
    });
    afterEach(() => t.close());

    const as = (bearer: string) => (method: string, url: string, body?: unknown) =>
      t.app.inject({ method: method as 'POST', url, headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/scim+json' }, ...(body ? { payload: JSON.stringify(body) } : {}) });

    /** Whether `userName` signs in to the console with `password`. */
    async function signsIn(userName: string, password: string): Promise<boolean> {
      const page = new PageSession(t);
      const form = await page.get('/console/sign-in');
      const res = await page.post('/console/sign-in', { ...hiddenFields(form.body), username: userName, password });
      return res.statusCode === 303 && res.headers.location !== '/console/sign-in';
    }

    const refused = (res: { statusCode: number; body: string }, words: RegExp) => {
      assert.equal(res.statusCode, 403, res.body);
      const body = JSON.parse(res.body) as Record<string, unknown>;
      assert.deepEqual(body.schemas, ['urn:ietf:params:scim:api:messages:2.0:Error']);
      assert.match(String(body.detail), words);
    };

    it('refuses to create an admin with a password (POST and bulk); nobody new signs in', async () => {
      const scim = as(token);
      refused(await scim('POST', '/v2/scim/Users', { schemas: [USER], userName: 'mallory', userType: 'admin', password: PASSWORD }), /cannot make a user an admin/);
      refused(await scim('POST', '/v2/scim/Users', { schemas: [USER], userName: 'mallory', userType: 'Admin' }), /cannot make a user an admin/);
      const bulk = await scim('POST', '/v2/scim/Bulk', {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'],
        Operations: [{ method: 'POST', bulkId: 'm', path: '/Users', data: { schemas: [USER], userName: 'mallory', userType: 'admin', password: PASSWORD } }],
      });
      assert.equal(bulk.statusCode, 200, bulk.body);
      assert.equal(String((json(bulk).Operations as { status: string }[])[0]!.status), '403');
      const found = await scim('GET', '/v2/scim/Users?filter=userName%20eq%20%22mallory%22');
      assert.equal(json(found).totalResults, 0, 'nothing written');
      assert.equal(await signsIn('mallory', PASSWORD), false);
    });

    it("refuses to set an admin's password, to make a user an admin, and to take an admin's userType (PATCH and PUT)", async () => {
      const scim = as(token);
      refused(await scim('PATCH', `/v2/scim/Users/${admin.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'password', value: 'a new password of mallory' }] }), /password of an admin/);
      refused(await scim('PATCH', `/v2/scim/Users/${admin.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { password: 'a new password of mallory' } }] }), /password of an admin/);
      refused(await scim('PUT', `/v2/scim/Users/${admin.id}`, { schemas: [USER], userName: admin.userName, userType: 'admin', password: 'a new password of mallory' }), /password of an admin/);
      assert.equal(await signsIn(admin.userName, 'a new password of mallory'), false);
      assert.equal(await signsIn(admin.userName, PASSWORD), true, "the admin's password is unchanged");

      refused(await scim('PATCH', `/v2/scim/Users/${admin.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'userType', value: 'Employee' }] }), /change the userType of an admin/);
      refused(await scim('PUT', `/v2/scim/Users/${admin.id}`, { schemas: [USER], userName: admin.userName }), /change the userType of an admin/);

      const bob = await scim('POST', '/v2/scim/Users', { schemas: [USER], userName: 'bob', userType: 'Employee', password: 'bob has a long password' });
      assert.equal(bob.statusCode, 201, bob.body);
      const bobId = String(json(bob).id);
      refused(await scim('PATCH', `/v2/scim/Users/${bobId}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'userType', value: 'admin' }] }), /cannot make a user an admin/);
      refused(await scim('PUT', `/v2/scim/Users/${bobId}`, { schemas: [USER], userName: 'bob', userType: 'admin' }), /cannot make a user an admin/);
      assert.equal(await signsIn('bob', 'bob has a long password'), false);
      assert.equal(json(await scim('GET', `/v2/scim/Users/${bobId}`)).userType, 'Employee', 'nothing written');
    });

    it("keeps a provider's ordinary writes: userType Employee, a password for a user who does not sign in, deactivating an admin", async () => {
      const scim = as(token);
      const carol = await scim('POST', '/v2/scim/Users', { schemas: [USER], userName: 'carol', userType: 'Employee', password: 't3mp-Pass', active: true });
      assert.equal(carol.statusCode, 201, carol.body);
      const id = String(json(carol).id);
      assert.equal((await scim('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { password: 'n3w-Pass-word' } }] })).statusCode, 200);
      assert.equal((await scim('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'userType', value: 'Contractor' }] })).statusCode, 200);
      assert.equal((await scim('PATCH', `/v2/scim/Users/${admin.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'displayName', value: 'Ada Admin' }] })).statusCode, 200, 'an admin\'s other attributes');
      assert.equal((await scim('PATCH', `/v2/scim/Users/${admin.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'active', value: false }] })).statusCode, 200, 'a leaver is deprovisioned');
    });

    it('a password a connection set does not sign in once the user is made an admin (console or own token); one set in the same write does', async () => {
      const scim = as(token);
      const own = as((await issueToken(adminDeps(t), 'acme', admin.userName, { scope: ['read', 'write'], ttlSeconds: 3600, name: 'script' })).token);
      const synced = 'a password okta synced';
      const ids: string[] = [];
      for (const userName of ['dave', 'erin', 'frank']) {
        const made = await scim('POST', '/v2/scim/Users', { schemas: [USER], userName, userType: 'Employee', password: synced });
        assert.equal(made.statusCode, 201, made.body);
        ids.push(String(json(made).id));
      }
      const [dave, erin, frank] = ids as [string, string, string];
      // The console's Add admin: a password link follows; the synced password no longer signs in.
      const page = new PageSession(t);
      const form = await page.get('/console/sign-in');
      await page.post('/console/sign-in', { ...hiddenFields(form.body), username: admin.userName, password: PASSWORD });
      const admins = await page.get('/console/admins');
      const added = await page.post('/console/admins', { ...hiddenFields(admins.body), userName: 'dave' });
      assert.equal(added.statusCode, 303, added.body);
      assert.equal(json(await own('GET', `/v2/scim/Users/${dave}`)).userType, 'admin');
      assert.equal(await signsIn('dave', synced), false, 'console Add admin');
      // An admin's own token making a user an admin without a password: the same.
      assert.equal((await own('PATCH', `/v2/scim/Users/${erin}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'userType', value: 'admin' }] })).statusCode, 200);
      assert.equal(await signsIn('erin', synced), false, "an admin's token, PATCH");
      // ... and with one in the same write: that one signs in.
      const chosen = 'frank chose this password';
      assert.equal((await own('PUT', `/v2/scim/Users/${frank}`, { schemas: [USER], userName: 'frank', userType: 'admin', password: chosen })).statusCode, 200);
      assert.equal(await signsIn('frank', synced), false);
      assert.equal(await signsIn('frank', chosen), true);
      // The audit row says what happened to erin's password.
      const rows = await t.storage.db.selectFrom('audit_events').select(['action', 'detail']).where('resource_id', '=', erin).where('action', '=', 'patch').execute();
      assert.equal(rows.length, 1);
      assert.equal(JSON.parse(rows[0]!.detail).password, 'removed');
    });

    it("an admin's own token may still make an admin, who then signs in", async () => {
      const own = (await issueToken(adminDeps(t), 'acme', admin.userName, { scope: ['read', 'write'], ttlSeconds: 3600, name: 'script' })).token;
      const made = await as(own)('POST', '/v2/scim/Users', { schemas: [USER], userName: 'second.admin', userType: 'admin', password: 'second admin password' });
      assert.equal(made.statusCode, 201, made.body);
      assert.equal(await signsIn('second.admin', 'second admin password'), true);
    });
  });
}
