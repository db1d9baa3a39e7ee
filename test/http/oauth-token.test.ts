/**
 * POST /oauth/token over HTTP (the contract's section 5; RFC 6749 sections 2.3, 4.3, 4.4, 5 and
 * 6; RFC 9700 4.14; OAUTH-CHECKLIST E, F, G): the exact success shape, client authentication,
 * every error code, the password and client_credentials grants, refresh rotation with reuse
 * detection, expiry on an injected clock, brute-force limits, and revocation when a user is
 * deactivated, re-passworded or loses admin.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { basic, passwordGrant, postForm, registerAdmin, registerClient, scimStatus } from '../support/oauth.ts';
import type { TestClient } from '../support/oauth.ts';

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

describe('the token endpoint', () => {
  let t: TestApp;
  let client: TestClient;
  let admin: { id: string; userName: string; password: string };
  beforeEach(async () => {
    t = await createTestApp();
    client = await registerClient(t);
    admin = await registerAdmin(t);
  });
  afterEach(() => t.close());

  const error = (res: { statusCode: number; body: string }, status: number, code: string) => {
    assert.equal(res.statusCode, status, res.body);
    assert.equal(json(res as never).error, code, res.body);
  };

  it('contract 5.2 / 5.3: the password grant answers exactly the contract shape and headers', async () => {
    const res = await passwordGrant(t, client, admin);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/json;charset=UTF-8');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers.pragma, 'no-cache');
    const body = json(res);
    assert.match(String(body.access_token), /^rc_at_[A-Za-z0-9_-]{43}$/);
    assert.match(String(body.refresh_token), /^rc_rt_[A-Za-z0-9_-]{43}$/);
    assert.equal(body.token_type, 'bearer');
    assert.equal(body.Expires_in, '3600');
    assert.equal(body.expires_in, 3600);
    assert.equal(body.scope, 'read write');
    assert.equal(await scimStatus(t, String(body.access_token)), 200);
  });

  it('RFC 6749 2.3.1: client_id and client_secret in the form body authenticate too', async () => {
    const res = await postForm(t, '/oauth/token', { grant_type: 'password', username: admin.userName, password: admin.password }, { client, auth: 'form' });
    assert.equal(res.statusCode, 200, res.body);
  });

  it('RFC 6749 5.2: invalid_client is 401, with a Basic challenge only when Basic was used', async () => {
    const wrong = { id: client.id, secret: 'rc_cs_wrong' };
    const viaBasic = await passwordGrant(t, wrong, admin);
    error(viaBasic, 401, 'invalid_client');
    assert.match(String(viaBasic.headers['www-authenticate']), /^Basic realm="rollcall"/);
    const viaForm = await postForm(t, '/oauth/token', { grant_type: 'password', username: admin.userName, password: admin.password }, { client: wrong, auth: 'form' });
    error(viaForm, 401, 'invalid_client');
    assert.equal(viaForm.headers['www-authenticate'], undefined);
    error(await postForm(t, '/oauth/token', { grant_type: 'password', username: admin.userName, password: admin.password }), 401, 'invalid_client');
    error(await passwordGrant(t, { id: 'NOSUCHCLIENT00000000', secret: client.secret }, admin), 401, 'invalid_client');
    error(await postForm(t, '/oauth/token', { grant_type: 'password' }, { authorization: 'Basic !!!' }), 401, 'invalid_client');
  });

  it('RFC 6749 5.2 / 2.3: invalid_request for missing, repeated or misplaced parameters and for two auth methods', async () => {
    error(await postForm(t, '/oauth/token', {}, { client }), 400, 'invalid_request');
    error(await postForm(t, '/oauth/token', { grant_type: ['password', 'password'], username: admin.userName, password: admin.password }, { client }), 400, 'invalid_request');
    error(await postForm(t, '/oauth/token', { grant_type: 'password', username: admin.userName }, { client }), 400, 'invalid_request');
    const both = await postForm(t, '/oauth/token', { grant_type: 'password', username: admin.userName, password: admin.password, client_id: client.id, client_secret: client.secret }, { client });
    error(both, 400, 'invalid_request');
    const inQuery = await postForm(t, '/oauth/token', { grant_type: 'password', username: admin.userName, password: admin.password }, { client, query: `?client_secret=${client.secret}` });
    error(inQuery, 400, 'invalid_request');
    const asJson = await t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/json', authorization: basic(client) }, payload: '{"grant_type":"password"}' });
    error(asJson, 400, 'invalid_request');
    const get = await t.app.inject({ method: 'GET', url: '/oauth/token' });
    error(get, 405, 'invalid_request');
    assert.equal(get.headers.allow, 'POST');
  });

  it('RFC 6749 3.2: a complete, valid request sent as JSON is refused with invalid_request and issues no token', async () => {
    const params = { grant_type: 'password', username: admin.userName, password: admin.password };
    for (const type of ['application/json', 'application/json; charset=utf-8', 'text/plain']) {
      const res = await t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': type, authorization: basic(client) }, payload: JSON.stringify(params) });
      error(res, 400, 'invalid_request');
      assert.equal(res.headers['cache-control'], 'no-store');
      assert.equal(json(res).access_token, undefined);
    }
    const issued = await t.storage.db.selectFrom('oauth_tokens').where('user_id', '=', admin.id).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    assert.equal(Number(issued.n), 0, 'no token was issued to the admin');
    // The same parameters as a form still work: only the encoding was refused.
    assert.equal((await passwordGrant(t, client, admin)).statusCode, 200);
  });

  it('RFC 6749 5.2: unsupported_grant_type and invalid_scope', async () => {
    error(await postForm(t, '/oauth/token', { grant_type: 'urn:ietf:params:oauth:grant-type:device_code' }, { client }), 400, 'unsupported_grant_type');
    error(await passwordGrant(t, client, admin, { scope: 'read admin' }), 400, 'invalid_scope');
    const narrow = await passwordGrant(t, client, admin, { scope: 'read' });
    assert.equal(json(narrow).scope, 'read');
  });

  it('RFC 6749 4.3.2: a wrong password and an unknown user get the same invalid_grant', async () => {
    const wrong = await passwordGrant(t, client, { userName: admin.userName, password: 'not it at all' });
    const unknown = await passwordGrant(t, client, { userName: 'nobody@acme.example', password: 'not it at all' });
    error(wrong, 400, 'invalid_grant');
    error(unknown, 400, 'invalid_grant');
    assert.equal(json(wrong).error_description, json(unknown).error_description);
  });

  it('DESIGN 5: only active admins sign in', async () => {
    const created = await registerAdmin(t, 'plain@acme.example', 'another long password');
    await t.request('PATCH', `/v2/scim/Users/${created.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'userType', value: 'Employee' }] });
    error(await passwordGrant(t, client, created), 400, 'invalid_grant');
    await t.request('DELETE', `/v2/scim/Users/${admin.id}`);
    error(await passwordGrant(t, client, admin), 400, 'invalid_grant');
  });

  it('DESIGN 5: PASSWORD_GRANT=off turns the password grant off (unsupported_grant_type)', async () => {
    const off = await createTestApp({ config: { passwordGrant: false } });
    try {
      const c = await registerClient(off);
      const a = await registerAdmin(off);
      error(await passwordGrant(off, c, a), 400, 'unsupported_grant_type');
      const metadata = json(await off.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' }));
      assert.equal((metadata.grant_types_supported as string[]).includes('password'), false);
    } finally {
      await off.close();
    }
  });

  it('RFC 6749 6 / RFC 9700 4.14.2: refresh rotates; reusing a rotated token revokes the whole family', async () => {
    const first = json(await passwordGrant(t, client, admin));
    const second = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: String(first.refresh_token) }, { client });
    assert.equal(second.statusCode, 200, second.body);
    const pair = json(second);
    assert.notEqual(pair.refresh_token, first.refresh_token);
    assert.equal(pair.Expires_in, '3600');
    assert.equal(await scimStatus(t, String(pair.access_token)), 200);

    const replay = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: String(first.refresh_token) }, { client });
    error(replay, 400, 'invalid_grant');
    assert.equal(await scimStatus(t, String(pair.access_token)), 401, 'the family is revoked');
    assert.equal(await scimStatus(t, String(first.access_token)), 401);
    error(await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: String(pair.refresh_token) }, { client }), 400, 'invalid_grant');
  });

  it('RFC 6749 6: a refresh token is bound to its client and may narrow but not widen the scope', async () => {
    const other = await registerClient(t, ['https://other.example/cb']);
    const first = json(await passwordGrant(t, client, admin, { scope: 'read' }));
    error(await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: String(first.refresh_token) }, { client: other }), 400, 'invalid_grant');
    const fresh = json(await passwordGrant(t, client, admin));
    error(await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: String(first.refresh_token), scope: 'read write' }, { client }), 400, 'invalid_scope');
    const narrowed = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: String(fresh.refresh_token), scope: 'read' }, { client });
    assert.equal(json(narrowed).scope, 'read');
    const post = await t.app.inject({ method: 'POST', url: '/v2/scim/Users', headers: { authorization: `Bearer ${String(json(narrowed).access_token)}`, 'content-type': 'application/scim+json' }, payload: '{}' });
    assert.equal(post.statusCode, 403);
    assert.match(String(post.headers['www-authenticate']), /insufficient_scope/);
  });

  it('expiry on the injected clock: access tokens after ACCESS_TOKEN_TTL, refresh tokens after REFRESH_TOKEN_TTL', async () => {
    const short = await createTestApp({ config: { accessTokenTtl: 120, refreshTokenTtl: 600 } });
    try {
      const c = await registerClient(short);
      const a = await registerAdmin(short);
      const body = json(await passwordGrant(short, c, a));
      assert.equal(body.Expires_in, '120');
      short.clock.advance(121_000);
      assert.equal(await scimStatus(short, String(body.access_token)), 401);
      short.clock.advance(480_000);
      error(await postForm(short, '/oauth/token', { grant_type: 'refresh_token', refresh_token: String(body.refresh_token) }, { client: c }), 400, 'invalid_grant');
    } finally {
      await short.close();
    }
  });

  it('RFC 6749 4.4: client_credentials for a team-bound client; no refresh token; others get unauthorized_client', async () => {
    const teamClient = await registerClient(t, ['https://validator.example/cb'], t.team.name);
    const res = await postForm(t, '/oauth/token', { grant_type: 'client_credentials' }, { client: teamClient });
    assert.equal(res.statusCode, 200, res.body);
    const body = json(res);
    assert.equal('refresh_token' in body, false);
    assert.equal(body.expires_in, 3600);
    const created = await t.app.inject({
      method: 'POST',
      url: '/v2/scim/Users',
      headers: { authorization: `Bearer ${String(body.access_token)}`, 'content-type': 'application/scim+json' },
      payload: JSON.stringify({ userName: 'made.by.validator@acme.example' }),
    });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(json(await t.request('GET', `/v2/scim/Users/${String(json(created).id)}`)).userName, 'made.by.validator@acme.example');
    error(await postForm(t, '/oauth/token', { grant_type: 'client_credentials' }, { client }), 400, 'unauthorized_client');
  });

  it('a client registered for one team signs in only that team\'s users', async () => {
    const other = await t.addTeam('globex');
    const teamClient = await registerClient(t, ['https://validator.example/cb'], other.team.name);
    error(await passwordGrant(t, teamClient, admin), 400, 'invalid_grant');
  });

  it('DESIGN 5: deactivating the user, changing its password or its userType revokes its tokens', async () => {
    const issue = async () => String(json(await passwordGrant(t, client, admin)).access_token);
    let token = await issue();
    await t.request('PATCH', `/v2/scim/Users/${admin.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'title', value: 'CTO' }] });
    assert.equal(await scimStatus(t, token), 200, 'an unrelated change keeps tokens');
    await t.request('PATCH', `/v2/scim/Users/${admin.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'password', value: 'a brand new password' }] });
    assert.equal(await scimStatus(t, token), 401, 'password change');
    admin = { ...admin, password: 'a brand new password' };
    token = await issue();
    await t.request('PATCH', `/v2/scim/Users/${admin.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'userType', value: 'Employee' }] });
    assert.equal(await scimStatus(t, token), 401, 'userType change');
    await t.request('PATCH', `/v2/scim/Users/${admin.id}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'userType', value: 'admin' }] });
    token = await issue();
    const refresh = String(json(await passwordGrant(t, client, admin)).refresh_token);
    assert.equal((await t.request('DELETE', `/v2/scim/Users/${admin.id}`)).statusCode, 204);
    assert.equal(await scimStatus(t, token), 401, 'deactivation');
    error(await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: refresh }, { client }), 400, 'invalid_grant');
  });
});

describe('brute-force limits on the token endpoint', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp({
      limits: {
        accountFailures: { points: 3, seconds: 600 },
        clientFailures: { points: 3, seconds: 600 },
        passwordPerClient: { points: 6, seconds: 600 },
        signinPerAddress: { points: 50, seconds: 600 },
      },
    });
  });
  afterEach(() => t.close());

  it('RFC 6749 4.3.2 / F3: after too many failures an account answers 429 with Retry-After, even to the right password', async () => {
    const client = await registerClient(t);
    const admin = await registerAdmin(t);
    for (let i = 0; i < 3; i++) assert.equal((await passwordGrant(t, client, { ...admin, password: `wrong ${i}` })).statusCode, 400);
    const locked = await passwordGrant(t, client, admin);
    assert.equal(locked.statusCode, 429, locked.body);
    assert.match(String(locked.headers['retry-after']), /^\d+$/);
    assert.equal(json(locked).error, 'slow_down');
  });

  it('E12 / 13.5: guessing a client secret is throttled per (client, address), and the right secret is never refused for it', async () => {
    const client = await registerClient(t);
    const admin = await registerAdmin(t);
    for (let i = 0; i < 3; i++) assert.equal((await passwordGrant(t, { id: client.id, secret: `rc_cs_guess${i}` }, admin)).statusCode, 401);
    const throttled = await passwordGrant(t, { id: client.id, secret: 'rc_cs_guess3' }, admin);
    assert.equal(throttled.statusCode, 429);
    assert.equal(json(throttled).error, 'slow_down');
    assert.equal((await passwordGrant(t, client, admin)).statusCode, 200);
  });

  it('F3: password-grant requests are limited per client', async () => {
    const client = await registerClient(t);
    const admin = await registerAdmin(t);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await passwordGrant(t, client, admin)).statusCode);
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 200, 429]);
  });
});

// The rotation reads the grant's user in its own statement on PostgreSQL (repos/tokens.ts
// retireRefreshTokenWithUser), with a separate read on SQLite: both refuse a user who can no
// longer sign in, and the refused rotation rolls back, leaving the token usable.
for (const engine of engines) {
  describe(`refresh grant of a user who can no longer sign in, on ${engine.name}`, () => {
    let t: TestApp;
    beforeEach(async () => {
      t = await createTestApp({ engine });
    });
    afterEach(() => t.close());

    it('is refused with invalid_grant; the token is not used up, and works again once the user may sign in', async () => {
      const client = await registerClient(t);
      const admin = await registerAdmin(t, 'refresher@acme.example');
      const refresh = String(json(await passwordGrant(t, client, admin)).refresh_token);
      const { password_hash: hash } = await t.storage.db.selectFrom('users').select('password_hash').where('id', '=', admin.id).executeTakeFirstOrThrow();
      await t.storage.db.updateTable('users').set({ password_hash: null }).where('id', '=', admin.id).execute();
      const refused = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: refresh }, { client });
      assert.equal(refused.statusCode, 400, refused.body);
      assert.equal(json(refused).error, 'invalid_grant');
      assert.match(String(json(refused).error_description), /can no longer sign in/);
      await t.storage.db.updateTable('users').set({ password_hash: hash }).where('id', '=', admin.id).execute();
      const again = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: refresh }, { client });
      assert.equal(again.statusCode, 200, again.body);
    });
  });
}
