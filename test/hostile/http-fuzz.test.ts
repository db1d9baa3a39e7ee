/**
 * Hostile input at the HTTP layer, on every engine: fast-check feeds random and adversarial JSON
 * bodies, PATCH operations, filters, query parameters and form bodies to the real routes. Every
 * answer must be a success or a 4xx in the protocol's own error shape (SCIM RFC 7644 3.12 or
 * OAuth RFC 6749 5.2) — never a 500, never a hang — and a refused write must change nothing.
 * Pathological sizes (deep nesting, huge operation lists, over-long paths, bodies over 1 MiB)
 * are refused with 400 or 413, and SQL injection through filter values, sortBy and attribute
 * paths finds nothing and breaks nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { registerClient } from '../support/oauth.ts';
import type { TestClient } from '../support/oauth.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** A SCIM answer is a success, or a 4xx whose body is an RFC 7644 3.12 error. */
function assertScimAnswer(res: LightMyRequestResponse, what: string): void {
  assert.ok(res.statusCode < 500, `${what} -> ${res.statusCode} ${res.body}`);
  if (res.statusCode >= 400) {
    const body = json(res);
    assert.deepEqual(body.schemas, [ERROR], `${what}: ${res.body}`);
    assert.equal(body.status, String(res.statusCode));
    assert.equal(typeof body.detail, 'string');
  }
}

const names = ['userName', 'UserName', 'name', 'name.givenName', 'emails', 'emails.value', 'emails[type eq "work"].value', 'phoneNumbers', 'active', 'title',
  'displayName', 'members', 'members[value eq "x"]', 'groups', 'id', 'meta', 'meta.created', 'password', 'externalId', 'schemas', `${ENTERPRISE}:manager`,
  ENTERPRISE, `${ENTERPRISE}:department`, 'x509Certificates', 'addresses[type eq "work"]', '__proto__', 'constructor', 'emails[', ']', '', ' ', 'urn:', 'a.b.c'];

const adversarialString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom("'; drop table users; --", '" or 1=1 --', '\\', '\u0000', '%', '_', '😀', 'ı', 'İ', '\uD800', 'null', 'true', '1e999', 'x'.repeat(5000)),
);

const scalar = fc.oneof(adversarialString, fc.integer(), fc.double(), fc.boolean(), fc.constant(null));
const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('array'), tie('object')),
  array: fc.array(tie('node'), { maxLength: 4 }),
  object: fc.dictionary(fc.oneof(fc.constantFrom(...names), fc.string({ maxLength: 8 })), tie('node'), { maxKeys: 5 }),
})).node;

const resourceBody = fc.oneof(
  value,
  fc.record({ schemas: fc.oneof(fc.constant([USER]), value), userName: fc.oneof(adversarialString, value) }, { requiredKeys: [] }),
  fc.dictionary(fc.constantFrom(...names), value, { maxKeys: 6 }),
);

const operation = fc.record(
  { op: fc.oneof(fc.constantFrom('add', 'remove', 'replace', 'Add', 'REPLACE', 'move', ''), value), path: fc.oneof(fc.constantFrom(...names), adversarialString, value), value },
  { requiredKeys: [] },
);
const patchBody = fc.oneof(
  value,
  fc.record({ schemas: fc.oneof(fc.constant([PATCH]), value), Operations: fc.oneof(fc.array(operation, { maxLength: 5 }), value) }, { requiredKeys: [] }),
);

const filterText = fc
  .array(fc.oneof(fc.constantFrom(...names, 'eq', 'ne', 'co', 'sw', 'pr', 'gt', 'and', 'or', 'not', '(', ')', '[', ']', '"x"', "'y'", '"', 'true', '42', '.value'), adversarialString), { maxLength: 12 })
  .map((parts) => parts.join(' '));

for (const engine of engines) {
  describe(`hostile input on ${engine.name}`, () => {
    let t: TestApp;
    let userId: string;
    let groupId: string;
    let client: TestClient;
    const count = async () => Number(json(await t.request('GET', '/v2/scim/Users?count=0')).totalResults);

    before(async () => {
      // Hundreds of refused token requests come from one address here: the per-address limit of
      // failed requests (tested in limiter-keys.test.ts) is raised so that every one reaches the
      // checks this suite is about.
      t = await createTestApp({ engine, limits: { oauthPerAddress: { points: 100_000, seconds: 60 } } });
      userId = String(json(await t.request('POST', '/v2/scim/Users', { schemas: [USER], userName: 'target@acme.example', emails: [{ value: 'a@b.c', type: 'work' }] })).id);
      groupId = String(json(await t.request('POST', '/v2/scim/Groups', { displayName: 'Target', members: [{ value: userId }] })).id);
      client = await registerClient(t);
    });
    after(() => t.close());

    it('random resource bodies to POST and PUT: success or a SCIM 4xx; a refusal writes nothing', async () => {
      await fc.assert(
        fc.asyncProperty(resourceBody, fc.constantFrom('POST /Users', 'PUT /Users', 'POST /Groups', 'PUT /Groups'), async (body, route) => {
          const [method, path] = route.split(' ') as [string, string];
          const url = method === 'PUT' ? `/v2/scim${path}/${path === '/Users' ? userId : groupId}` : `/v2/scim${path}`;
          const before = await count();
          const before1 = (await t.request('GET', `/v2/scim/Users/${userId}`)).body;
          const res = await t.request(method, url, JSON.stringify(body));
          assertScimAnswer(res, `${route} ${JSON.stringify(body).slice(0, 200)}`);
          if (res.statusCode >= 400) {
            assert.equal(await count(), before, 'no partial write');
            if (method === 'PUT' && path === '/Users') assert.equal((await t.request('GET', `/v2/scim/Users/${userId}`)).body, before1);
          } else if (method === 'POST' && path === '/Users') {
            await t.request('DELETE', `/v2/scim/Users/${String(json(res).id)}`);
          } else if (method === 'POST') {
            await t.request('DELETE', `/v2/scim/Groups/${String(json(res).id)}`);
          }
          if (res.statusCode === 200 && method === 'PUT' && path === '/Groups') {
            await t.request('PUT', `/v2/scim/Groups/${groupId}`, { displayName: 'Target', members: [{ value: userId }] });
          }
        }),
        { numRuns: 120 },
      );
    });

    it('random PATCH bodies to Users and Groups: success or a SCIM 4xx; a refusal changes nothing', async () => {
      await fc.assert(
        fc.asyncProperty(patchBody, fc.boolean(), async (body, onUser) => {
          const url = onUser ? `/v2/scim/Users/${userId}` : `/v2/scim/Groups/${groupId}`;
          const before = (await t.request('GET', url)).body;
          const res = await t.request('PATCH', url, JSON.stringify(body));
          assertScimAnswer(res, `PATCH ${JSON.stringify(body).slice(0, 200)}`);
          if (res.statusCode >= 400) assert.equal((await t.request('GET', url)).body, before, 'a refused PATCH changes nothing');
          const now = await t.request('GET', url);
          if (now.statusCode === 404 && onUser) await t.request('PUT', `/v2/scim/Users/${userId}/activate`);
        }),
        { numRuns: 150 },
      );
    });

    it('random filters, sortBy, attributes and paging: 200 or a SCIM 400', async () => {
      await fc.assert(
        fc.asyncProperty(
          filterText,
          fc.option(fc.oneof(fc.constantFrom(...names), adversarialString)),
          fc.option(fc.oneof(fc.constantFrom(...names), adversarialString)),
          fc.option(fc.oneof(fc.integer().map(String), adversarialString)),
          fc.constantFrom('/Users', '/Groups'),
          async (filter, sortBy, attributes, startIndex, path) => {
            const query = new URLSearchParams({ filter });
            if (sortBy !== null) query.set('sortBy', sortBy);
            if (attributes !== null) query.set('attributes', attributes);
            if (startIndex !== null) query.set('startIndex', startIndex);
            const res = await t.request('GET', `/v2/scim${path}?${query.toString()}`);
            assertScimAnswer(res, `${path}?${query.toString().slice(0, 200)}`);
          },
        ),
        { numRuns: 200 },
      );
    });

    it('random form bodies and headers to the token endpoint: an RFC 6749 error, never a 500', async () => {
      const formValue = fc.oneof(adversarialString, fc.constantFrom('password', 'refresh_token', 'authorization_code', 'client_credentials', client.id, client.secret));
      await fc.assert(
        fc.asyncProperty(
          fc.dictionary(fc.constantFrom('grant_type', 'username', 'password', 'code', 'refresh_token', 'scope', 'client_id', 'client_secret', 'redirect_uri', 'code_verifier', '__proto__', 'x'), formValue, { maxKeys: 6 }),
          fc.constantFrom('basic', 'garbage', 'none'),
          fc.constantFrom('application/x-www-form-urlencoded', 'application/json', 'text/plain', 'multipart/form-data'),
          async (form, auth, contentType) => {
            const headers: Record<string, string> = { 'content-type': contentType };
            if (auth === 'basic') headers.authorization = `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`;
            if (auth === 'garbage') headers.authorization = 'Basic %%%';
            const res = await t.app.inject({ method: 'POST', url: '/oauth/token', headers, payload: new URLSearchParams(form).toString() });
            assert.ok(res.statusCode < 500, `${res.statusCode} ${res.body}`);
            const body = json(res);
            if (res.statusCode >= 400) assert.equal(typeof body.error, 'string', res.body);
          },
        ),
        { numRuns: 120 },
      );
    });

    it('pathological sizes are refused: deep filters, deep JSON, huge PATCHes, long paths, big bodies', async () => {
      const deepFilter = `${'('.repeat(5000)}userName eq "x"${')'.repeat(5000)}`;
      const deep = await t.request('GET', `/v2/scim/Users?filter=${encodeURIComponent(deepFilter.slice(0, 4000))}`);
      assert.equal(deep.statusCode, 400);
      assert.equal(json(deep).scimType, 'invalidFilter');
      const nested = await t.request('POST', '/v2/scim/Users', `{"userName":"n@x.example","name":${'{"a":'.repeat(20000)}1${'}'.repeat(20000)}}`);
      assertScimAnswer(nested, 'deep JSON');
      assert.equal(nested.statusCode, 400);
      const deepArray = await t.request('POST', '/v2/scim/Users', `${'['.repeat(100000)}${']'.repeat(100000)}`);
      assertScimAnswer(deepArray, 'deep array');
      const many = await t.request('PATCH', `/v2/scim/Users/${userId}`, { schemas: [PATCH], Operations: Array.from({ length: 5000 }, () => ({ op: 'add', path: 'title', value: 'x' })) });
      assert.equal(many.statusCode, 400);
      assert.equal(json(many).scimType, 'tooMany');
      const longPath = await t.request('PATCH', `/v2/scim/Users/${userId}`, { schemas: [PATCH], Operations: [{ op: 'add', path: `title${'.x'.repeat(50000)}`, value: 'x' }] });
      assert.equal(longPath.statusCode, 400);
      const big = await t.request('PATCH', `/v2/scim/Users/${userId}`, { schemas: [PATCH], Operations: [{ op: 'add', path: 'title', value: 'x'.repeat(1024 * 1024) }] });
      assert.equal(big.statusCode, 413);
      const bigForm = await t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `grant_type=${'x'.repeat(100_000)}` });
      assert.equal(bigForm.statusCode, 413);
      assert.equal(json(bigForm).error, 'invalid_request');
      const longId = await t.request('GET', `/v2/scim/Users/${'A'.repeat(5000)}`);
      assertScimAnswer(longId, 'long id');
      assert.equal(longId.statusCode, 404);
      assert.equal(longId.body.includes('AAAAAAAAAA'), false, 'the path is not echoed');
      const badUrl = await t.request('GET', '/v2/scim/Users/%E0%A4%A');
      assertScimAnswer(badUrl, 'bad percent-encoding');
      assert.equal(badUrl.statusCode, 400);
    });

    it('text no database can store (NUL, unpaired surrogates) is a 400 at every boundary, never a 500', async () => {
      for (const bad of ['nul\\u0000inside', 'lone \\ud800 surrogate', 'reversed \\udc00\\ud800']) {
        const body = `{"userName":"${bad}@acme.example"}`;
        const created = await t.request('POST', '/v2/scim/Users', body);
        assert.equal(created.statusCode, 400, body);
        assert.equal(json(created).scimType, 'invalidValue');
        const key = await t.request('POST', '/v2/scim/Users', `{"userName":"ok@acme.example","${bad}":1}`);
        assert.equal(key.statusCode, 400);
      }
      for (const url of ['/v2/scim/Users/%00', `/v2/scim/Users?filter=${encodeURIComponent('userName eq "\u0000"')}`, '/v2/scim/Users?filter=userName%20eq%20%22%00%22', '/v2/scim/Groups?attributes=%00']) {
        const res = await t.request('GET', url);
        assertScimAnswer(res, url);
        assert.notEqual(res.statusCode, 200, url);
      }
      const token = await t.app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}` },
        payload: 'grant_type=password&username=a%00b&password=x',
      });
      assert.equal(token.statusCode, 400);
      assert.equal(json(token).error, 'invalid_request');
      const page = await t.app.inject({ method: 'GET', url: '/oauth/authorize?client_id=%00&response_type=code' });
      assert.equal(page.statusCode, 400);
      assert.match(page.body, /not valid/);
    });

    it('SQL injection through filter values, attribute names, sortBy and attributes finds nothing and breaks nothing', async () => {
      const before = await count();
      const attempts = [
        `filter=${encodeURIComponent(`userName eq "x' or '1'='1"`)}`,
        `filter=${encodeURIComponent(`userName eq "x\\" or \\"1\\"=\\"1"`)}`,
        `filter=${encodeURIComponent(`title co "'); delete from users; --"`)}`,
        `filter=${encodeURIComponent(`emails[value eq "a' union select * from oauth_tokens --"]`)}`,
        `filter=${encodeURIComponent(`${ENTERPRISE}:department eq "x'::text; drop table users; --"`)}`,
        `filter=${encodeURIComponent('userName" or 1=1 -- eq "x"')}`,
        `filter=${encodeURIComponent('userName;drop table users eq "x"')}`,
        `sortBy=${encodeURIComponent('userName; drop table users')}`,
        `sortBy=${encodeURIComponent('name.givenName desc, (select 1)')}`,
        `attributes=${encodeURIComponent('userName,(select password_hash from users)')}`,
        `excludedAttributes=${encodeURIComponent("emails') --")}`,
      ];
      for (const query of attempts) {
        const res = await t.request('GET', `/v2/scim/Users?${query}`);
        assertScimAnswer(res, query);
        if (res.statusCode === 200) assert.equal(json(res).totalResults, 0, query);
      }
      assert.equal(await count(), before, 'the users table is intact');
      assert.equal((await t.request('GET', `/v2/scim/Users/${userId}`)).statusCode, 200);
    });
  });
}
