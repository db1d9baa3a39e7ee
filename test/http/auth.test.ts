/**
 * Authentication of the SCIM API (DESIGN.md section 5; RFC 6750 sections 2.1 and 3.1): the
 * bare token and `Bearer <token>`, 401 bodies and challenges, scopes, and team isolation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';

const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
const alice = { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'alice@acme.example' };

describe('SCIM authentication', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('RFC 6750 3.1: no credentials -> 401, SCIM error body, WWW-Authenticate Bearer without error code', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v2/scim/Users' });
    assert.equal(res.statusCode, 401);
    assert.match(String(res.headers['www-authenticate']), /^Bearer realm="rollcall"$/);
    const body = json(res);
    assert.deepEqual(body.schemas, [ERROR]);
    assert.equal(body.status, '401');
    assert.equal(res.headers['content-type'], 'application/scim+json');
  });

  it('RFC 6750 3.1: an unknown token -> 401 with error="invalid_token"', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v2/scim/Users', headers: { authorization: 'Bearer rc_at_nope' } });
    assert.equal(res.statusCode, 401);
    assert.match(String(res.headers['www-authenticate']), /error="invalid_token"/);
  });

  it('contract 5.1: the bare token in `authorization` is accepted', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v2/scim/Users', headers: { authorization: t.token } });
    assert.equal(res.statusCode, 200);
  });

  it('RFC 6750 2.1: the Bearer scheme is matched case-insensitively', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/scim/Users', headers: { authorization: `bEaReR ${t.token}` } });
    assert.equal(res.statusCode, 200);
  });

  it('other schemes (Basic) are refused with 401', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v2/scim/Users', headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } });
    assert.equal(res.statusCode, 401);
  });

  it('an expired token -> 401 invalid_token', async () => {
    const token = await t.tokenFor(t.team.id, ['read', 'write'], 60);
    t.clock.advance(61_000);
    const res = await t.app.inject({ method: 'GET', url: '/v2/scim/Users', headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.statusCode, 401);
    assert.match(String(res.headers['www-authenticate']), /invalid_token/);
  });

  it('DESIGN 5: a read-only token may GET but gets 403 insufficient_scope on writes', async () => {
    const token = await t.tokenFor(t.team.id, ['read']);
    const get = await t.app.inject({ method: 'GET', url: '/v2/scim/Users', headers: { authorization: `Bearer ${token}` } });
    assert.equal(get.statusCode, 200);
    const post = await t.app.inject({
      method: 'POST',
      url: '/v2/scim/Users',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/scim+json' },
      payload: JSON.stringify(alice),
    });
    assert.equal(post.statusCode, 403);
    assert.match(String(post.headers['www-authenticate']), /error="insufficient_scope", scope="write"/);
    assert.equal(json(post).status, '403');
  });

  it('a write-only token gets 403 on GET', async () => {
    const token = await t.tokenFor(t.team.id, ['write']);
    const res = await t.app.inject({ method: 'GET', url: '/v2/scim/Users', headers: { authorization: token } });
    assert.equal(res.statusCode, 403);
  });

  it('discovery endpoints answer without a token', async () => {
    for (const url of ['/v2/scim/ServiceProviderConfig', '/scim/ServiceProviderConfigs', '/v2/scim/Schemas', '/scim/ResourceTypes']) {
      const res = await t.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
    }
  });

  it('/healthz and /readyz answer without a token', async () => {
    assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(ready.statusCode, 200);
    assert.equal(json(ready).status, 'ready');
  });
});

describe('team isolation', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it("a token of one team never sees or touches another team's users or groups", async () => {
    const other = await t.addTeam('globex');
    const asOther = (method: string, url: string, body?: unknown) =>
      t.request(method, url, body, { authorization: `Bearer ${other.token}` });

    const user = json(await t.request('POST', '/v2/scim/Users', alice));
    const group = json(await t.request('POST', '/v2/scim/Groups', { displayName: 'Ops', members: [{ value: user.id }] }));
    assert.equal(typeof user.id, 'string');
    assert.equal(typeof group.id, 'string');

    assert.equal((await asOther('GET', `/v2/scim/Users/${String(user.id)}`)).statusCode, 404);
    assert.equal((await asOther('GET', `/v2/scim/Groups/${String(group.id)}`)).statusCode, 404);
    assert.equal(json(await asOther('GET', '/v2/scim/Users')).totalResults, 0);
    assert.equal(json(await asOther('GET', `/v2/scim/Users?filter=${encodeURIComponent('userName eq "alice@acme.example"')}`)).totalResults, 0);
    assert.equal(json(await asOther('GET', '/v2/scim/Groups')).totalResults, 0);
    assert.equal((await asOther('PUT', `/v2/scim/Users/${String(user.id)}`, alice)).statusCode, 404);
    assert.equal((await asOther('DELETE', `/v2/scim/Users/${String(user.id)}`)).statusCode, 404);
    assert.equal((await asOther('DELETE', `/v2/scim/Groups/${String(group.id)}`)).statusCode, 404);
    const patch = await asOther('PATCH', `/v2/scim/Groups/${String(group.id)}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'remove', path: 'members' }],
    });
    assert.equal(patch.statusCode, 404);

    // The other team may reuse the same userName: uniqueness is per team.
    assert.equal((await asOther('POST', '/v2/scim/Users', alice)).statusCode, 201);
    // ... but may not add a user of the first team to its own group.
    const theirGroup = await asOther('POST', '/v2/scim/Groups', { displayName: 'Ops', members: [{ value: user.id }] });
    assert.equal(theirGroup.statusCode, 400);
    assert.equal(json(theirGroup).scimType, 'invalidValue');

    // The first team's group still has its member.
    const mine = json(await t.request('GET', `/v2/scim/Groups/${String(group.id)}`));
    assert.deepEqual((mine.members as { value: string }[]).map((m) => m.value), [user.id]);
  });
});
