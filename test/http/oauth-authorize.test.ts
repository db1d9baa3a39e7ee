/**
 * The authorization code flow over HTTP (the contract's section 5.1; RFC 6749 3.1, 4.1, 10.12,
 * 10.13; RFC 7636; RFC 9700 2.1, 4.11, 4.12; OAUTH-CHECKLIST A-D): error pages instead of
 * redirects for bad clients and redirect URIs, error redirects with state, sign-in and consent
 * with CSRF and cookie rules, page headers, code exchange, single use, binding to client and
 * redirect URI, expiry, and PKCE including the downgrade.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { authorizeAndApprove, hiddenFields, PageSession, postForm, registerAdmin, registerClient, scimStatus } from '../support/oauth.ts';
import type { TestClient } from '../support/oauth.ts';
import { BASE_URL } from '../support/app.ts';

const REDIRECT = 'https://app.example/callback';
const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const challenge = createHash('sha256').update(verifier).digest('base64url');

describe('the authorization endpoint', () => {
  let t: TestApp;
  let client: TestClient;
  let admin: { id: string; userName: string; password: string };
  beforeEach(async () => {
    t = await createTestApp();
    client = await registerClient(t, [REDIRECT]);
    admin = await registerAdmin(t);
  });
  afterEach(() => t.close());

  const authorize = (query: Record<string, string>) => t.app.inject({ method: 'GET', url: `/oauth/authorize?${new URLSearchParams(query).toString()}` });
  const exchange = (code: string, extra: Record<string, string> = {}, as: TestClient = client) =>
    postForm(t, '/oauth/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...extra }, { client: as });

  it('contract 5.1: sign in, approve, get a code with the state, exchange it for the contract\'s token response', async () => {
    const back = await authorizeAndApprove(t, { client_id: client.id, redirect_uri: REDIRECT, response_type: 'code', state: 'xyz ü/+=&' }, admin);
    assert.equal(`${back.origin}${back.pathname}`, REDIRECT);
    assert.equal(back.searchParams.get('state'), 'xyz ü/+=&', 'RFC 6749 4.1.2: state comes back byte for byte');
    assert.equal(back.searchParams.get('iss'), BASE_URL);
    const code = String(back.searchParams.get('code'));
    assert.match(code, /^rc_ac_[A-Za-z0-9_-]{43}$/, 'D2: 256 random bits');
    const res = await exchange(code);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/json;charset=UTF-8');
    const body = json(res);
    assert.equal(body.token_type, 'bearer');
    assert.equal(body.Expires_in, '3600');
    assert.equal(body.scope, 'read write');
    assert.equal(await scimStatus(t, String(body.access_token)), 200);
    const refreshed = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: String(body.refresh_token) }, { client });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
  });

  it('A4 / RFC 6749 4.1.2.1: an unknown client or an unregistered redirect URI gets an error page, never a redirect', async () => {
    const queries: Record<string, string>[] = [
      { redirect_uri: REDIRECT, response_type: 'code' },
      { client_id: 'NOSUCHCLIENT00000000', redirect_uri: REDIRECT, response_type: 'code' },
      { client_id: client.id, redirect_uri: 'https://evil.example/callback', response_type: 'code' },
      { client_id: client.id, redirect_uri: `${REDIRECT}/extra`, response_type: 'code' },
      { client_id: client.id, redirect_uri: 'https://APP.example/callback', response_type: 'code' },
    ];
    for (const query of queries) {
      const res = await authorize(query);
      assert.equal(res.statusCode, 400, JSON.stringify(query));
      assert.equal(res.headers.location, undefined);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.match(res.body, /This sign-in link is not valid/);
    }
  });

  it('A3: without redirect_uri, the only registered URI is used; with several registered, an error page', async () => {
    assert.equal((await authorize({ client_id: client.id, response_type: 'code' })).statusCode, 200);
    const two = await registerClient(t, [REDIRECT, 'https://app.example/other']);
    const res = await authorize({ client_id: two.id, response_type: 'code' });
    assert.equal(res.statusCode, 400);
    assert.equal(res.headers.location, undefined);
  });

  it('A2 / RFC 8252 7.3: a loopback redirect URI may differ only in its port', async () => {
    const native = await registerClient(t, ['http://127.0.0.1/callback']);
    assert.equal((await authorize({ client_id: native.id, redirect_uri: 'http://127.0.0.1:53123/callback', response_type: 'code' })).statusCode, 200);
    assert.equal((await authorize({ client_id: native.id, redirect_uri: 'http://127.0.0.1:53123/other', response_type: 'code' })).statusCode, 400);
  });

  it('B3 / B4 / B5 / C6: request errors go back to the registered URI with the state', async () => {
    const cases: [Record<string, string>, string][] = [
      [{}, 'invalid_request'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ response_type: 'code', scope: 'read admin' }, 'invalid_scope'],
      [{ response_type: 'code', code_challenge: challenge }, 'invalid_request'],
      [{ response_type: 'code', code_challenge: challenge, code_challenge_method: 'plain' }, 'invalid_request'],
      [{ response_type: 'code', code_challenge_method: 'S256' }, 'invalid_request'],
    ];
    for (const [extra, error] of cases) {
      const res = await authorize({ client_id: client.id, redirect_uri: REDIRECT, state: 's-1', ...extra });
      assert.equal(res.statusCode, 303, JSON.stringify(extra));
      const location = new URL(String(res.headers.location));
      assert.equal(`${location.origin}${location.pathname}`, REDIRECT);
      assert.equal(location.searchParams.get('error'), error, JSON.stringify(extra));
      assert.equal(location.searchParams.get('state'), 's-1');
    }
    const repeated = await t.app.inject({ method: 'GET', url: `/oauth/authorize?client_id=${client.id}&response_type=code&scope=read&scope=write` });
    assert.equal(new URL(String(repeated.headers.location)).searchParams.get('error'), 'invalid_request', 'B2: a repeated parameter');
  });

  it('B7 / B10 / B11: pages are not framable, send no referrer, are not cached and carry no CORS headers', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/oauth/authorize?client_id=${client.id}&response_type=code`, headers: { origin: 'https://evil.example' } });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/);
    assert.equal(res.headers['x-frame-options'], 'DENY');
    assert.equal(res.headers['referrer-policy'], 'no-referrer');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['access-control-allow-origin'], undefined);
    assert.match(res.body, /<label for="password">Password<\/label>/);
    assert.match(res.body, /Acme Sync/);
  });

  it('B6: the sign-in form refuses a post without its CSRF token (a cross-site post)', async () => {
    const session = new PageSession(t);
    const page = await session.get(`/oauth/authorize?client_id=${client.id}&response_type=code`);
    const fields = hiddenFields(page.body);
    const forged = await t.app.inject({
      method: 'POST',
      url: '/oauth/authorize',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ ...fields, username: admin.userName, password: admin.password }).toString(),
    });
    assert.equal(forged.statusCode, 403);
    assert.equal(forged.headers['set-cookie'], undefined, 'no session for a forged post');
    const wrongToken = await session.post('/oauth/authorize', { ...fields, _csrf: 'forged', username: admin.userName, password: admin.password });
    assert.equal(wrongToken.statusCode, 403);
  });

  it('sign-in: a wrong password re-renders the form with one generic error; success sets an HttpOnly, SameSite session and 303s', async () => {
    const session = new PageSession(t);
    const page = await session.get(`/oauth/authorize?client_id=${client.id}&response_type=code`);
    const wrong = await session.post('/oauth/authorize', { ...hiddenFields(page.body), username: admin.userName, password: 'nope nope nope' });
    assert.equal(wrong.statusCode, 401);
    assert.match(wrong.body, /The user name or password is incorrect/);
    const ok = await session.post('/oauth/authorize', { ...hiddenFields(wrong.body), username: admin.userName, password: admin.password });
    assert.equal(ok.statusCode, 303, 'B8: 303, never 307');
    const cookie = [ok.headers['set-cookie']].flat().find((c) => String(c).startsWith('rollcall_session='));
    assert.match(String(cookie), /HttpOnly/);
    assert.match(String(cookie), /SameSite=Lax/);
    const consent = await session.get(String(ok.headers.location));
    assert.match(consent.body, /Allow Acme Sync to access acme\?/);
    assert.match(consent.body, /Read the users and groups/);
  });

  it('sessions expire: after 30 minutes the consent page asks to sign in again', async () => {
    const session = new PageSession(t);
    const url = `/oauth/authorize?client_id=${client.id}&response_type=code`;
    const page = await session.get(url);
    await session.post('/oauth/authorize', { ...hiddenFields(page.body), username: admin.userName, password: admin.password });
    assert.match((await session.get(url)).body, /Allow Acme Sync/);
    t.clock.advance(31 * 60 * 1000);
    assert.match((await session.get(url)).body, /<h1 id="title">Sign in<\/h1>/);
  });

  it('B4: deny redirects with access_denied and the state', async () => {
    const back = await authorizeAndApprove(t, { client_id: client.id, redirect_uri: REDIRECT, response_type: 'code', state: 'st' }, admin, 'deny');
    assert.equal(back.searchParams.get('error'), 'access_denied');
    assert.equal(back.searchParams.get('state'), 'st');
    assert.equal(back.searchParams.get('code'), null);
  });

  it('D3: a code is single use; the second exchange fails and revokes what the first issued', async () => {
    const code = String((await authorizeAndApprove(t, { client_id: client.id, redirect_uri: REDIRECT, response_type: 'code' }, admin)).searchParams.get('code'));
    const first = json(await exchange(code));
    assert.equal(await scimStatus(t, String(first.access_token)), 200);
    const second = await exchange(code);
    assert.equal(second.statusCode, 400);
    assert.equal(json(second).error, 'invalid_grant');
    assert.equal(await scimStatus(t, String(first.access_token)), 401);
    const refresh = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: String(first.refresh_token) }, { client });
    assert.equal(json(refresh).error, 'invalid_grant');
  });

  it('D1 / D4 / D5: codes expire after 60 s, belong to their client and repeat the redirect URI', async () => {
    const codeFor = async () => String((await authorizeAndApprove(t, { client_id: client.id, redirect_uri: REDIRECT, response_type: 'code' }, admin)).searchParams.get('code'));
    const other = await registerClient(t, [REDIRECT]);
    assert.equal(json(await exchange(await codeFor(), {}, other)).error, 'invalid_grant');
    assert.equal(json(await exchange(await codeFor(), { redirect_uri: 'https://app.example/elsewhere' })).error, 'invalid_grant');
    const withoutUri = await postForm(t, '/oauth/token', { grant_type: 'authorization_code', code: await codeFor() }, { client });
    assert.equal(json(withoutUri).error, 'invalid_grant');
    const late = await codeFor();
    t.clock.advance(61_000);
    assert.equal(json(await exchange(late)).error, 'invalid_grant');
    assert.equal(json(await exchange('rc_ac_madeup')).error, 'invalid_grant');
  });

  it('C3 / C4 / C5: PKCE S256 verified; missing or wrong verifier and the downgrade fail', async () => {
    const pkceCode = async () =>
      String((await authorizeAndApprove(t, { client_id: client.id, redirect_uri: REDIRECT, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256' }, admin)).searchParams.get('code'));
    assert.equal(json(await exchange(await pkceCode())).error, 'invalid_grant', 'verifier missing');
    assert.equal(json(await exchange(await pkceCode(), { code_verifier: `${verifier.slice(0, -1)}A` })).error, 'invalid_grant', 'wrong verifier');
    assert.equal(json(await exchange(await pkceCode(), { code_verifier: 'short' })).error, 'invalid_grant', 'verifier too short');
    const ok = await exchange(await pkceCode(), { code_verifier: verifier });
    assert.equal(ok.statusCode, 200, ok.body);
    const plainCode = String((await authorizeAndApprove(t, { client_id: client.id, redirect_uri: REDIRECT, response_type: 'code' }, admin)).searchParams.get('code'));
    assert.equal(json(await exchange(plainCode, { code_verifier: verifier })).error, 'invalid_grant', 'downgrade');
  });

  it('B4 / scope: a narrower scope is shown on the consent page and granted', async () => {
    const back = await authorizeAndApprove(t, { client_id: client.id, redirect_uri: REDIRECT, response_type: 'code', scope: 'read' }, admin);
    const body = json(await exchange(String(back.searchParams.get('code'))));
    assert.equal(body.scope, 'read');
  });

  it('issue 13 item 8: a client registered for one team never signs in a user of another team (the same answer as a wrong password)', async () => {
    const other = await t.addTeam('globex');
    const teamClient = await registerClient(t, [REDIRECT], other.team.name);
    const session = new PageSession(t);
    const page = await session.get(`/oauth/authorize?client_id=${teamClient.id}&response_type=code`);
    const res = await session.post('/oauth/authorize', { ...hiddenFields(page.body), username: admin.userName, password: admin.password });
    assert.equal(res.statusCode, 401);
    assert.match(res.body, /The user name or password is incorrect/);
    assert.doesNotMatch(res.body, /another team/);
  });
});

describe('revocation, introspection and metadata', () => {
  let t: TestApp;
  let client: TestClient;
  let admin: { id: string; userName: string; password: string };
  beforeEach(async () => {
    t = await createTestApp();
    client = await registerClient(t, [REDIRECT]);
    admin = await registerAdmin(t);
  });
  afterEach(() => t.close());

  const grant = async () =>
    json(await postForm(t, '/oauth/token', { grant_type: 'password', username: admin.userName, password: admin.password }, { client }));

  it('RFC 7009 2.1 / H4: revoking a refresh token ends its whole grant', async () => {
    const tokens = await grant();
    const res = await postForm(t, '/oauth/revoke', { token: String(tokens.refresh_token), token_type_hint: 'refresh_token' }, { client });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(await scimStatus(t, String(tokens.access_token)), 401);
  });

  it('RFC 7009 2.1: revoking an access token ends only that token', async () => {
    const tokens = await grant();
    assert.equal((await postForm(t, '/oauth/revoke', { token: String(tokens.access_token) }, { client })).statusCode, 200);
    assert.equal(await scimStatus(t, String(tokens.access_token)), 401);
    const refreshed = await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: String(tokens.refresh_token) }, { client });
    assert.equal(refreshed.statusCode, 200);
  });

  it('RFC 7009 2.2 / H2 / H3: unknown tokens answer 200; another client cannot revoke; unknown hints are unsupported_token_type', async () => {
    assert.equal((await postForm(t, '/oauth/revoke', { token: 'rc_at_unknown' }, { client })).statusCode, 200);
    const tokens = await grant();
    const other = await registerClient(t, [REDIRECT]);
    assert.equal((await postForm(t, '/oauth/revoke', { token: String(tokens.access_token) }, { client: other })).statusCode, 200);
    assert.equal(await scimStatus(t, String(tokens.access_token)), 200, "another client's revocation changes nothing");
    const hint = await postForm(t, '/oauth/revoke', { token: String(tokens.access_token), token_type_hint: 'id_token' }, { client });
    assert.equal(hint.statusCode, 400);
    assert.equal(json(hint).error, 'unsupported_token_type');
    assert.equal((await postForm(t, '/oauth/revoke', { token: String(tokens.access_token) })).statusCode, 401, 'H1: client authentication required');
  });

  it('RFC 7662 2.1 / 2.2: introspection needs client authentication and says only active:false for dead tokens', async () => {
    const tokens = await grant();
    assert.equal((await postForm(t, '/oauth/introspect', { token: String(tokens.access_token) })).statusCode, 401);
    const live = json(await postForm(t, '/oauth/introspect', { token: String(tokens.access_token) }, { client }));
    assert.equal(live.active, true);
    assert.equal(live.scope, 'read write');
    assert.equal(live.client_id, client.id);
    assert.equal(live.username, admin.userName);
    assert.equal(live.token_type, 'access_token');
    assert.equal(live.team, t.team.id);
    assert.equal(typeof live.exp, 'number');
    await postForm(t, '/oauth/revoke', { token: String(tokens.access_token) }, { client });
    assert.deepEqual(json(await postForm(t, '/oauth/introspect', { token: String(tokens.access_token) }, { client })), { active: false });
    assert.deepEqual(json(await postForm(t, '/oauth/introspect', { token: 'garbage' }, { client })), { active: false });
  });

  it('RFC 8414 2 / 3: the metadata describes exactly what is supported', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    assert.equal(res.statusCode, 200);
    const body = json(res);
    assert.equal(body.issuer, BASE_URL);
    assert.equal(body.authorization_endpoint, `${BASE_URL}/oauth/authorize`);
    assert.equal(body.token_endpoint, `${BASE_URL}/oauth/token`);
    assert.equal(body.revocation_endpoint, `${BASE_URL}/oauth/revoke`);
    assert.equal(body.introspection_endpoint, `${BASE_URL}/oauth/introspect`);
    assert.deepEqual(body.response_types_supported, ['code']);
    assert.deepEqual(body.code_challenge_methods_supported, ['S256']);
    assert.deepEqual((body.grant_types_supported as string[]).sort(), ['authorization_code', 'client_credentials', 'password', 'refresh_token']);
    // RFC 8414 2 / RFC 7523 2.2: client assertions beside the secrets, at every endpoint that authenticates clients.
    for (const endpoint of ['token', 'revocation', 'introspection']) {
      assert.deepEqual(body[`${endpoint}_endpoint_auth_methods_supported`], ['client_secret_basic', 'client_secret_post', 'private_key_jwt']);
      assert.deepEqual(body[`${endpoint}_endpoint_auth_signing_alg_values_supported`], ['RS256', 'PS256', 'ES256']);
    }
    assert.deepEqual(body.scopes_supported, ['read', 'write', 'ssf', 'scim']);
  });
});
