/**
 * Operations over HTTP (DESIGN.md section 6): Prometheus metrics at /metrics (requests and
 * latency by route template and status, token grants by outcome, the database pool), request
 * ids on every answer, and structured JSON logs with a request id on every request line and no
 * secret in any line: not passwords, client secrets, access or refresh tokens, codes or cookies.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { authorizeAndApprove, passwordGrant, postForm, registerAdmin, registerClient } from '../support/oauth.ts';

describe('operations', () => {
  let t: TestApp;
  let lines: string[];
  beforeEach(async () => {
    lines = [];
    t = await createTestApp({ config: { logLevel: 'info' }, logStream: { write: (line) => void lines.push(line) } });
  });
  afterEach(() => t.close());

  it('GET /metrics: request counts and latency by route template and status, grants by outcome, the pool', async () => {
    const client = await registerClient(t);
    const admin = await registerAdmin(t);
    await passwordGrant(t, client, admin);
    await passwordGrant(t, client, { ...admin, password: 'wrong password here' });
    const created = json(await t.request('POST', '/v2/scim/Users', { userName: 'm@acme.example' }));
    await t.request('GET', `/v2/scim/Users/${String(created.id)}`);
    await t.request('GET', '/v2/scim/Users/NOPE0000000000000000');
    const res = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/plain/);
    const text = res.body;
    assert.match(text, /rollcall_http_requests_total\{route="\/v2\/scim\/Users\/:id",method="GET",status="200"\} 1/);
    assert.match(text, /rollcall_http_requests_total\{route="\/v2\/scim\/Users\/:id",method="GET",status="404"\} 1/);
    assert.match(text, /rollcall_http_requests_total\{route="\/v2\/scim\/Users",method="POST",status="201"\} 1/);
    // Every bucket is there; how long the request took (which bucket it fell in) is the host's business.
    assert.match(text, /rollcall_http_request_duration_seconds_bucket\{le="0.1",route="\/v2\/scim\/Users\/:id",method="GET",status="200"\} [01]\n/);
    assert.match(text, /rollcall_http_request_duration_seconds_bucket\{le="\+Inf",route="\/v2\/scim\/Users\/:id",method="GET",status="200"\} 1\n/);
    assert.match(text, /rollcall_oauth_token_grants_total\{grant_type="password",outcome="issued"\} 1/);
    assert.match(text, /rollcall_oauth_token_grants_total\{grant_type="password",outcome="invalid_grant"\} 1/);
    assert.match(text, /rollcall_db_pool_connections\{state="total"\} 1/);
    assert.match(text, /rollcall_process_resident_memory_bytes \d+/);
    assert.doesNotMatch(text, /NOPE0000000000000000/, 'raw URLs never become labels');
  });

  it('/readyz answers 503 once the database cannot be reached; /healthz still 200', async () => {
    assert.equal((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200);
    await t.storage.close();
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 503);
    assert.equal(json(ready).status, 'unavailable');
    assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
  });

  it('every answer carries its request id; an incoming X-Request-Id is kept', async () => {
    const res = await t.request('GET', '/v2/scim/Users', undefined, { 'x-request-id': 'trace-123' });
    assert.equal(res.headers['x-request-id'], 'trace-123');
    const other = await t.app.inject({ method: 'GET', url: '/healthz' });
    assert.match(String(other.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  it('logs are JSON lines with a request id, and no secret ever reaches them', async () => {
    const client = await registerClient(t, ['https://app.example/callback']);
    const admin = await registerAdmin(t, 'admin@acme.example', 'a very secret password 123');
    const grant = json(await passwordGrant(t, client, admin));
    await postForm(t, '/oauth/token', { grant_type: 'refresh_token', refresh_token: String(grant.refresh_token) }, { client });
    await passwordGrant(t, client, { ...admin, password: 'an even more secret wrong one' });
    await t.app.inject({ method: 'GET', url: '/v2/scim/Users', headers: { authorization: `Bearer ${String(grant.access_token)}` } });
    await t.app.inject({ method: 'GET', url: '/v2/scim/Users', headers: { authorization: 'Bearer rc_at_not-a-real-token-but-secret-looking' } });
    const back = await authorizeAndApprove(t, { client_id: client.id, response_type: 'code' }, admin);
    const code = String(back.searchParams.get('code'));
    await postForm(t, '/oauth/token', { grant_type: 'authorization_code', code }, { client });
    await t.request('POST', '/v2/scim/Users', { userName: 'pw@acme.example', password: 'scim password value 456' });

    assert.ok(lines.length > 10, 'requests are logged');
    const secrets = [admin.password, 'an even more secret wrong one', client.secret, String(grant.access_token), String(grant.refresh_token), 'rc_at_not-a-real-token-but-secret-looking', code, 'scim password value 456', t.token, 'rollcall_session=', 'rollcall_csrf='];
    for (const line of lines) {
      const entry = JSON.parse(line) as Record<string, unknown>;
      assert.equal(typeof entry.level, 'number');
      if (entry.req !== undefined || entry.res !== undefined) assert.equal(typeof entry.reqId, 'string', line);
      for (const secret of secrets) assert.equal(line.includes(secret), false, `a secret in the log: ${line}`);
    }
  });
});
