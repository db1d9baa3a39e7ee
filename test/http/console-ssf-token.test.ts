/**
 * A team admin issues a Shared Signals receiver's token in the console (issue 33): the token
 * form's "For" choice gives the ssf scope, alone or with read and write; the default is still a
 * provisioning token (read write). An ssf token manages streams (POST /v2/ssf/stream) and cannot
 * provision; a provisioning token cannot manage streams.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { createTestApp } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { hiddenFields, PageSession, registerAdmin, scimStatus } from '../support/oauth.ts';
import { addConnectionInConsole, issueInConsole } from '../support/console-connections.ts';

const PASSWORD = 'correct horse battery staple';

for (const engine of engines) {
  describe(`console: issuing a token with the ssf scope (${engine.name})`, () => {
    let t: TestApp | undefined;
    afterEach(async () => {
      await t?.close();
      t = undefined;
    });

    let path = '';
    const issue = async (page: PageSession, scope: string | undefined) => {
      path ||= await addConnectionInConsole(page, 'SSF receiver');
      assert.match((await page.get(path)).body, /<select id="token-scope" name="scope">/);
      const issued = await issueInConsole(page, path, { name: `token ${scope ?? 'default'}`, ...(scope !== undefined ? { scope } : {}) });
      return { status: issued.shown?.statusCode ?? issued.posted.statusCode, body: issued.shown?.body ?? issued.posted.body, token: issued.token };
    };
    const createStream = (token: string) => t!.app.inject({ method: 'POST', url: '/v2/ssf/stream', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: '{}' });

    it('the ssf choice gives a token that manages SSF streams and cannot provision; the default stays read write; an unknown choice is a 400', async () => {
      t = await createTestApp({ engine });
      await registerAdmin(t, 'admin@acme.example', PASSWORD);
      const page = new PageSession(t);
      const form = await page.get('/console/sign-in');
      assert.equal((await page.post('/console/sign-in', { ...hiddenFields(form.body), username: 'admin@acme.example', password: PASSWORD })).statusCode, 303);

      const receiver = await issue(page, 'ssf');
      assert.equal(receiver.status, 200);
      assert.ok(receiver.token);
      assert.match(receiver.body, /Scopes: <code>ssf<\/code>/);
      assert.equal((await createStream(receiver.token)).statusCode, 201);
      assert.equal(await scimStatus(t, receiver.token), 403);

      const provisioning = await issue(page, undefined);
      assert.ok(provisioning.token);
      assert.match(provisioning.body, /Scopes: <code>read write<\/code>/);
      assert.equal(await scimStatus(t, provisioning.token), 200);
      assert.equal((await createStream(provisioning.token)).statusCode, 403);

      const both = await issue(page, 'both');
      assert.ok(both.token);
      assert.equal(await scimStatus(t, both.token), 200);
      assert.equal((await createStream(both.token)).statusCode, 201);

      const unknown = await issue(page, 'everything');
      assert.equal(unknown.status, 400);
      assert.equal(unknown.token, undefined);

      // The streams show on the Events page as SSF streams, with no pause action (their receiver pauses them).
      const stream = JSON.parse((await createStream(receiver.token)).body) as { stream_id: string };
      const events = await page.get('/console/events');
      assert.equal(events.statusCode, 200);
      assert.match(events.body, /SSF stream \(Shared Signals\)/);
      const detail = await page.get(`/console/events/subscriptions/${stream.stream_id}`);
      assert.equal(detail.statusCode, 200);
      assert.doesNotMatch(detail.body, /action="[^"]*\/pause"/);
      assert.match(detail.body, /paused or disabled by its receiver/);
      const disabled = await t.app.inject({ method: 'POST', url: '/v2/ssf/status', headers: { authorization: `Bearer ${receiver.token}`, 'content-type': 'application/json' }, payload: JSON.stringify({ stream_id: stream.stream_id, status: 'disabled' }) });
      assert.equal(disabled.statusCode, 200);
      const paused = await page.get(`/console/events/subscriptions/${stream.stream_id}`);
      const action = `/console/events/subscriptions/${stream.stream_id}/resume`;
      assert.match(paused.body, /Enable this SSF stream now/);
      assert.equal((await page.post(action, hiddenFields(paused.body, action))).statusCode, 303);
      const status = await t.app.inject({ method: 'GET', url: `/v2/ssf/status?stream_id=${stream.stream_id}`, headers: { authorization: `Bearer ${receiver.token}` } });
      assert.equal(JSON.parse(status.body).status, 'enabled');
    });
  });
}
