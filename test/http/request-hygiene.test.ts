/**
 * Issue 13.10 (the HTTP parts): credentials in a query string never reach the log; a client's
 * X-Request-Id is kept only when short and of a safe alphabet; the SCIM token check decides
 * "public discovery" and "search" from the matched route, not the raw URL; POST /.search is a
 * read (scope `read`, not `write`, RFC 7644 3.4.3); every answer carries
 * X-Content-Type-Options: nosniff.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { registerClient } from '../support/oauth.ts';

const SEARCH = 'urn:ietf:params:scim:api:messages:2.0:SearchRequest';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('13.10 request hygiene', () => {
  let t: TestApp;
  let lines: string[];
  beforeEach(async () => {
    lines = [];
    t = await createTestApp({ config: { logLevel: 'info' }, logStream: { write: (line) => void lines.push(line) } });
  });
  afterEach(() => t.close());

  it('credentials in a query string are redacted from the logged URL (client_secret, password, refresh_token, code, token, access_token)', async () => {
    const client = await registerClient(t);
    const secrets = ['QSECRET-client-1', 'QSECRET-password-2', 'QSECRET-refresh-3', 'QSECRET-code-4', 'QSECRET-token-5', 'QSECRET-access-6'];
    await t.app.inject({
      method: 'POST',
      url: `/oauth/token?client_secret=${secrets[0]}&password=${secrets[1]}&refresh_token=${secrets[2]}&client_id=${client.id}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=client_credentials',
    });
    await t.app.inject({ method: 'GET', url: `/oauth/authorize?client_id=${client.id}&response_type=code&code=${secrets[3]}` });
    await t.app.inject({ method: 'POST', url: `/oauth/introspect?Token=${secrets[4]}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'token=x' });
    await t.app.inject({ method: 'GET', url: `/v2/scim/Users?access_token=${secrets[5]}&filter=userName%20pr` });
    const logged = lines.join('\n');
    for (const secret of secrets) assert.equal(logged.includes(secret), false, `${secret} reached the log`);
    // The rest of the URL is still there, to find the request by.
    assert.match(logged, /\/oauth\/token\?client_secret=\[redacted\]&password=\[redacted\]&refresh_token=\[redacted\]&client_id=[A-Z0-9]{20}/);
    assert.match(logged, /\/v2\/scim\/Users\?access_token=\[redacted\]&filter=userName%20pr/);
  });

  it('X-Request-Id: kept when at most 128 characters of [A-Za-z0-9._:-]; otherwise a new UUID (an 8,000-character id is neither echoed nor logged)', async () => {
    const kept = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-123.abc:9_Z' } });
    assert.equal(kept.headers['x-request-id'], 'trace-123.abc:9_Z');
    const huge = 'A'.repeat(8000);
    for (const bad of [huge, 'x'.repeat(129), 'with space', 'semi;colon', 'quote"', '<script>']) {
      const res = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': bad } });
      assert.match(String(res.headers['x-request-id']), UUID, bad.slice(0, 20));
    }
    assert.equal(lines.some((l) => l.includes(huge.slice(0, 200))), false, 'the long id is not logged');
    assert.equal((await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'x'.repeat(128) } })).headers['x-request-id'], 'x'.repeat(128));
  });

  it('public discovery is decided by the matched route: query or path tricks naming a discovery path still need a token', async () => {
    for (const url of ['/v2/scim/Users?x=/Schemas', '/v2/scim/Users?/Schemas', '/scim/Users?a=/ResourceTypes/', '/v2/scim/Groups?x=/ServiceProviderConfig', '/v2/scim/Users/.search?/Schemas']) {
      const method = url.includes('.search') ? 'POST' : 'GET';
      const res = await t.app.inject({ method, url, ...(method === 'POST' ? { headers: { 'content-type': 'application/scim+json' }, payload: JSON.stringify({ schemas: [SEARCH] }) } : {}) });
      assert.equal(res.statusCode, 401, `${method} ${url}`);
    }
    // Paths that are no route at all need a token too (nothing to discover there).
    assert.equal((await t.app.inject({ method: 'GET', url: '/v2/scim/schemas' })).statusCode, 401);
    assert.equal((await t.app.inject({ method: 'POST', url: '/v2/scim/Schemas', headers: { 'content-type': 'application/scim+json' }, payload: '{}' })).statusCode, 401);
    // Discovery itself stays public, whatever its query says.
    for (const url of ['/v2/scim/Schemas?x=/Users', '/scim/ResourceTypes/User', '/v2/scim/ServiceProviderConfig', '/v2/scim/ServiceProviderConfigs']) {
      assert.equal((await t.app.inject({ method: 'GET', url })).statusCode, 200, url);
    }
  });

  it('RFC 7644 3.4.3: POST /.search is a read: a read-only token may search, a write-only token may not', async () => {
    const read = await t.tokenFor(t.team.id, ['read']);
    const write = await t.tokenFor(t.team.id, ['write']);
    const search = (token: string, path: string) =>
      t.app.inject({ method: 'POST', url: path, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' }, payload: JSON.stringify({ schemas: [SEARCH] }) });
    for (const path of ['/v2/scim/Users/.search', '/v2/scim/Groups/.search', '/scim/Users/.search']) {
      const ok = await search(read, path);
      assert.equal(ok.statusCode, 200, `${path}: ${ok.body}`);
      const refused = await search(write, path);
      assert.equal(refused.statusCode, 403, path);
      assert.match(String(refused.headers['www-authenticate']), /insufficient_scope", scope="read"/);
    }
    // Creating stays a write.
    const create = await t.app.inject({ method: 'POST', url: '/v2/scim/Users', headers: { authorization: `Bearer ${read}`, 'content-type': 'application/scim+json' }, payload: JSON.stringify({ userName: 'r@acme.example' }) });
    assert.equal(create.statusCode, 403);
  });

  it('every answer carries X-Content-Type-Options: nosniff (SCIM, SCIM errors, OAuth JSON, metadata, pages, health, metrics, unknown routes)', async () => {
    const client = await registerClient(t);
    const answers = [
      await t.request('GET', '/v2/scim/Users'),
      await t.app.inject({ method: 'GET', url: '/v2/scim/Users' }),
      await t.app.inject({ method: 'GET', url: '/v2/scim/Schemas' }),
      await t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=client_credentials' }),
      await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' }),
      await t.app.inject({ method: 'GET', url: `/oauth/authorize?client_id=${client.id}&response_type=code` }),
      await t.app.inject({ method: 'GET', url: '/healthz' }),
      await t.app.inject({ method: 'GET', url: '/readyz' }),
      await t.app.inject({ method: 'GET', url: '/metrics' }),
      await t.app.inject({ method: 'GET', url: '/nowhere' }),
      await t.app.inject({ method: 'GET', url: '/v2/scim/Users/%E0%A4%A' }),
    ];
    for (const res of answers) assert.equal(res.headers['x-content-type-options'], 'nosniff', `${res.statusCode} ${res.body.slice(0, 80)}`);
    assert.equal(json(answers[3]!).error, 'invalid_client');
  });
});
