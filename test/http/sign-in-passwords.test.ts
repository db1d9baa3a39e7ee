/**
 * Issue 13 item 10 (passwords; NIST SP 800-63B 3.1.1.2): a user who signs in (userType admin)
 * gets a password of at least 12 characters, with no composition rules and up to 1,024
 * characters; SCIM POST, PUT and PATCH answer 400 invalidValue naming the rule (and change
 * nothing), the CLI refuses it (test/cli/keys-cli.test.ts), and sign-in refuses a stored short
 * password with the same bland answer as a wrong one.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { hiddenFields, PageSession, passwordGrant, registerClient } from '../support/oauth.ts';
import type { TestClient } from '../support/oauth.ts';

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

describe('sign-in passwords of at least 12 characters', () => {
  let t: TestApp;
  let client: TestClient;
  beforeEach(async () => {
    t = await createTestApp();
    client = await registerClient(t);
  });
  afterEach(() => t.close());

  const refused = (res: { statusCode: number; body: string }) => {
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(json(res as never).scimType, 'invalidValue');
    assert.match(String(json(res as never).detail), /password: .*at least 12 characters/);
  };

  it('SCIM POST: an admin with an 11-character password -> 400 invalidValue naming the rule; 12 and 128 characters, any characters, are accepted', async () => {
    refused(await t.request('POST', '/v2/scim/Users', { userName: 'a@acme.example', userType: 'admin', password: 'elevenchars' }));
    refused(await t.request('POST', '/v2/scim/Users', { userName: 'a@acme.example', userType: 'Admin', password: '12345' }));
    // Code points, not UTF-16 units: 11 emoji are 22 units and still too short.
    refused(await t.request('POST', '/v2/scim/Users', { userName: 'a@acme.example', userType: 'admin', password: '🔑'.repeat(11) }));
    const listed = json(await t.request('GET', '/v2/scim/Users?filter=userName eq "a@acme.example"'));
    assert.equal(listed.totalResults, 0, 'nothing was written');
    for (const [userName, password] of [['twelve@acme.example', 'twelve chars'], ['long@acme.example', 'x'.repeat(128)], ['words@acme.example', 'ünïcödé pässwörd']] as const) {
      const res = await t.request('POST', '/v2/scim/Users', { userName, userType: 'admin', password });
      assert.equal(res.statusCode, 201, res.body);
      assert.equal((await passwordGrant(t, client, { userName, password })).statusCode, 200, `${userName} signs in`);
    }
    // A user who does not sign in is not held to the rule (identity providers sync such passwords).
    assert.equal((await t.request('POST', '/v2/scim/Users', { userName: 'staff@acme.example', password: 'short' })).statusCode, 201);
  });

  it('SCIM PUT and PATCH: a short password for an admin -> 400, and the old password still works', async () => {
    const good = 'a good long password';
    const created = json(await t.request('POST', '/v2/scim/Users', { userName: 'b@acme.example', userType: 'admin', password: good }));
    const id = String(created.id);
    refused(await t.request('PATCH', `/v2/scim/Users/${id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'password', value: 'short one' }] }));
    refused(await t.request('PUT', `/v2/scim/Users/${id}`, { userName: 'b@acme.example', userType: 'admin', password: 'short one' }));
    // Becoming an admin and getting a short password in one request is refused too.
    const staff = json(await t.request('POST', '/v2/scim/Users', { userName: 'c@acme.example' }));
    refused(await t.request('PATCH', `/v2/scim/Users/${String(staff.id)}`, { schemas: [PATCH], Operations: [{ op: 'replace', value: { userType: 'admin', password: 'tiny' } }] }));
    assert.equal((await passwordGrant(t, client, { userName: 'b@acme.example', password: good })).statusCode, 200);
  });

  it('sign-in refuses a stored short password with the answer a wrong password gets (password grant and form)', async () => {
    const short = 'short pw';
    const created = json(await t.request('POST', '/v2/scim/Users', { userName: 'd@acme.example', password: short }));
    // Made an admin later without a new password: the short one stays stored, and cannot sign in.
    const promoted = await t.request('PATCH', `/v2/scim/Users/${String(created.id)}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'userType', value: 'admin' }] });
    assert.equal(promoted.statusCode, 200, promoted.body);
    const withStored = await passwordGrant(t, client, { userName: 'd@acme.example', password: short });
    const wrong = await passwordGrant(t, client, { userName: 'd@acme.example', password: 'not the password' });
    assert.equal(withStored.statusCode, 400);
    assert.deepEqual(json(withStored), json(wrong));

    const browser = new PageSession(t);
    const page = await browser.get(`/oauth/authorize?client_id=${client.id}&response_type=code`);
    const posted = await browser.post('/oauth/authorize', { ...hiddenFields(page.body), username: 'd@acme.example', password: short });
    assert.equal(posted.statusCode, 401);
    assert.match(posted.body, /The user name or password is incorrect/);
  });
});
