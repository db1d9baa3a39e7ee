/**
 * Issue 27 item 12: an id the database cannot hold (a NUL) in a route parameter of the console,
 * the admin API or the events API answered 500 on PostgreSQL, and a bad member page position on
 * a console group page answered 500 on both engines. Every such request now answers in its
 * surface's own shape (an HTML page, an RFC 7644 3.12 body) with 400 or 404, on both engines.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { hiddenFields, PageSession, registerAdmin } from '../support/oauth.ts';

const NUL_ID = 'AB%00CD';

for (const engine of engines) {
  describe(`route ids the database cannot hold (${engine.name})`, () => {
    it('console pages and forms answer 404 for an id with a NUL, and 400 for a bad member position; never 500', async () => {
      const t = await createTestApp({ engine });
      try {
        await registerAdmin(t, 'admin@acme.example', 'correct horse battery staple');
        const page = new PageSession(t);
        const form = await page.get('/console/sign-in');
        assert.equal((await page.post('/console/sign-in', { ...hiddenFields(form.body), username: 'admin@acme.example', password: 'correct horse battery staple' })).statusCode, 303);
        const group = await t.request('POST', '/v2/scim/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Ops' });
        assert.equal(group.statusCode, 201);
        const groupId = String(json(group).id);

        for (const url of [`/console/users/${NUL_ID}`, `/console/groups/${NUL_ID}`, `/console/events/subscriptions/${NUL_ID}`]) {
          const res = await page.get(url);
          assert.equal(res.statusCode, 404, `${url}: ${res.body.slice(0, 300)}`);
          assert.match(String(res.headers['content-type']), /^text\/html/);
        }
        const csrf = hiddenFields((await page.get('/console/connections')).body)._csrf!;
        for (const url of [`/console/connections/tokens/${NUL_ID}/revoke`, ...['pause', 'resume', 'replay', 'delete'].map((a) => `/console/events/subscriptions/${NUL_ID}/${a}`)]) {
          const res = await page.post(url, { _csrf: csrf, from: '0', reason: 'x' });
          assert.equal(res.statusCode, 404, `${url}: ${res.body.slice(0, 300)}`);
          assert.match(String(res.headers['content-type']), /^text\/html/);
        }

        // A group's members are paged by number (?page=N); anything else is a 400 page, never a 500.
        for (const position of ['bad', '0', '-1', '1.5', '%00', '99999999']) {
          const res = await page.get(`/console/groups/${groupId}?page=${position}`);
          assert.equal(res.statusCode, 400, `page=${position}: ${res.body.slice(0, 300)}`);
          assert.match(String(res.headers['content-type']), /^text\/html/);
          assert.match(res.body, /the page is a number|not valid text/);
        }
        assert.equal((await page.get(`/console/groups/${groupId}?page=`)).statusCode, 200);
      } finally {
        await t.close();
      }
    });

    it('the admin API and the events API answer an id with a NUL in their SCIM error shape, never 500', async () => {
      const t = await createTestApp({ engine });
      try {
        const checks: [string, string][] = [
          ['GET', `/v2/admin/Schemas/urn:acme:${NUL_ID}`],
          ['DELETE', `/v2/admin/Schemas/urn:acme:${NUL_ID}`],
          ['GET', `/v2/events/subscriptions/${NUL_ID}`],
          ['DELETE', `/v2/events/subscriptions/${NUL_ID}`],
          ['POST', `/v2/events/subscriptions/${NUL_ID}/pause`],
          ['POST', `/v2/events/subscriptions/${NUL_ID}/resume`],
          ['POST', `/v2/events/subscriptions/${NUL_ID}/replay`],
        ];
        for (const [method, url] of checks) {
          const res = await t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' }, ...(method === 'POST' ? { payload: '{"from":0}' } : {}) });
          assert.ok(res.statusCode === 400 || res.statusCode === 404, `${method} ${url}: ${res.statusCode} ${res.body.slice(0, 300)}`);
          assert.deepEqual(json(res).schemas, ['urn:ietf:params:scim:api:messages:2.0:Error'], url);
        }
        // A NUL in an admin API body is refused at the boundary too.
        const body = await t.app.inject({ method: 'POST', url: '/v2/admin/Schemas', headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' }, payload: JSON.stringify({ resourceType: 'User', schema: { id: 'urn:acme:params:scim:schemas:X:1.0:User', name: 'X', description: 'a\u0000b', attributes: [{ name: 'x', type: 'string', description: 'c\u0000d' }] } }) });
        assert.equal(body.statusCode, 400, body.body.slice(0, 300));
      } finally {
        await t.close();
      }
    });
  });
}
