/**
 * The poll delivery of SSF streams, `POST /v2/ssf/poll/{stream id}` (issue 33; SSF 1.0 section
 * 6.1.2, RFC 8936 section 2.4): authorised by a bearer token of the stream's team with the `ssf`
 * scope (401 without a token, 403 without the scope, both with their challenge), another team's
 * stream is a 404, a push stream a 400; the answer holds the stream's signals as SETs keyed by
 * jti, verified with jose against the JWKS, less the subjects its receiver removed;
 * acknowledging moves the cursor past them (and past the removed subjects' signals), and each
 * acknowledged signal is counted in the histogram (method poll).
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import type { JSONWebKeySet } from 'jose';
import { lastSeq } from '../../src/storage/repos/events.ts';
import { subscriptionById } from '../../src/storage/repos/subscriptions.ts';
import { BASE_URL, createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { ACCOUNT_DISABLED, ACCOUNT_ENABLED, appendUserSignal, insertStream, setSubject } from '../support/ssf-rows.ts';

const AUD = 'https://receiver.example/ssf';

for (const engine of engines) {
  describe(`SSF poll endpoint (${engine.name})`, () => {
    let t: TestApp | undefined;
    afterEach(async () => {
      await t?.close();
      t = undefined;
    });
    const open = async () => {
      t = await createTestApp({ engine });
      return t;
    };
    const pollAs = (app: TestApp, token: string | undefined, stream: string, body: unknown = { returnImmediately: true }) =>
      app.app.inject({ method: 'POST', url: `/v2/ssf/poll/${stream}`, headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, payload: JSON.stringify(body) });
    const users = async (app: TestApp, n: number) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push(String(json(await app.request('POST', '/v2/scim/Users', { userName: `poll${i}@acme.example` })).id));
      return ids;
    };

    it('RFC 8936 2.4: the stream\'s signals as verified SETs, less a removed subject; acknowledging moves the cursor past them all and counts them', async () => {
      const app = await open();
      const [a, b] = await users(app, 2);
      const token = await app.tokenFor(app.team.id, ['ssf']);
      const stream = await insertStream(app, { method: 'poll', aud: AUD });
      await setSubject(app, stream, b!, false);
      await appendUserSignal(app, a!);
      await appendUserSignal(app, b!);
      await appendUserSignal(app, a!, ACCOUNT_ENABLED);

      const first = await pollAs(app, token, stream);
      assert.equal(first.statusCode, 200, first.body);
      const answer = json(first) as { sets: Record<string, string>; moreAvailable: boolean };
      assert.equal(answer.moreAvailable, false);
      const keys = createLocalJWKSet((await app.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json() as JSONWebKeySet);
      const payloads = [];
      for (const [jti, set] of Object.entries(answer.sets)) {
        const { payload } = await jwtVerify(set, keys, { issuer: BASE_URL, audience: AUD, typ: 'secevent+jwt' });
        assert.equal(payload.jti, jti);
        payloads.push(payload);
      }
      assert.deepEqual(payloads.map((p) => [p.sub_id, Object.keys(p.events as object)[0]]), [
        [{ format: 'opaque', id: a }, ACCOUNT_DISABLED],
        [{ format: 'opaque', id: a }, ACCOUNT_ENABLED],
      ]);

      // Acknowledged: the cursor passes both, and the removed subject's signal between them.
      const second = await pollAs(app, token, stream, { ack: Object.keys(answer.sets), returnImmediately: true });
      assert.equal(second.statusCode, 200);
      assert.deepEqual(json(second).sets, {});
      assert.equal((await subscriptionById(app.storage.db, app.team.id, stream))?.cursor, await lastSeq(app.storage.db, app.team.id));
      const metrics = await app.app.inject({ method: 'GET', url: '/metrics' });
      assert.match(metrics.body, /^rollcall_ssf_signal_delivery_seconds_count\{method="poll"\} 2$/m);
    });

    it('401 without a token, 403 without the ssf scope (with their challenges), 404 for another team\'s or no stream, 400 for a push stream', async () => {
      const app = await open();
      const stream = await insertStream(app, { method: 'poll', aud: AUD });
      const push = await insertStream(app, { method: 'push', url: 'http://127.0.0.1:9/events', aud: AUD });
      const other = await app.addTeam('other');
      const othersStream = await insertStream(app, { method: 'poll', aud: AUD, teamId: other.team.id });
      const token = await app.tokenFor(app.team.id, ['ssf']);

      const anonymous = await pollAs(app, undefined, stream);
      assert.equal(anonymous.statusCode, 401);
      assert.equal(json(anonymous).err, 'authentication_failed');
      assert.match(String(anonymous.headers['www-authenticate']), /^Bearer /);

      const scimOnly = await pollAs(app, app.token, stream);
      assert.equal(scimOnly.statusCode, 403);
      assert.equal(json(scimOnly).err, 'access_denied');
      assert.match(String(scimOnly.headers['www-authenticate']), /insufficient_scope/);

      for (const id of [othersStream, 'NOSUCHSTREAM']) {
        const missing = await pollAs(app, token, id);
        assert.equal(missing.statusCode, 404, id);
        assert.equal(typeof json(missing).description, 'string');
      }
      const pushed = await pollAs(app, token, push);
      assert.equal(pushed.statusCode, 400);
      assert.equal(json(pushed).err, 'invalid_request');
      assert.match(String(json(pushed).description), /push/);

      // The other team's own token polls its stream.
      const theirs = await pollAs(app, await app.tokenFor(other.team.id, ['ssf']), othersStream);
      assert.equal(theirs.statusCode, 200);
    });

    it('a body RFC 8936 refuses is a 400 invalid_request, after the token is checked', async () => {
      const app = await open();
      const stream = await insertStream(app, { method: 'poll', aud: AUD });
      const token = await app.tokenFor(app.team.id, ['ssf']);
      const bad = await pollAs(app, token, stream, { maxEvents: -1 });
      assert.equal(bad.statusCode, 400);
      assert.equal(json(bad).err, 'invalid_request');
      assert.equal((await pollAs(app, undefined, stream, { maxEvents: -1 })).statusCode, 401);
    });
  });
}
