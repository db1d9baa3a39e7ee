/**
 * Poll delivery (issue 10 items 4 and 7; RFC 8936): a poll subscription's receiver fetches its
 * pending SETs with the subscription's own token, acknowledges them (the next poll no longer
 * returns them; unacknowledged ones come again), reports errors (logged), long-polls, and
 * gets RFC 8936 error bodies for bad requests and credentials.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify } from 'jose';
import type { JSONWebKeySet } from 'jose';
import { BASE_URL, createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';

for (const engine of engines) {
  describe(`poll delivery (${engine.name})`, () => {
    let t: TestApp;
    beforeEach(async () => {
      t = await createTestApp({ engine });
    });
    afterEach(() => t.close());

    const subscribe = async (body: Record<string, unknown> = {}) => {
      const r = await t.request('POST', '/v2/events/subscriptions', { method: 'poll', ...body }, { 'content-type': 'application/json' });
      assert.equal(r.statusCode, 201, r.body);
      return json(r) as { id: string; pollToken: string };
    };
    const pollWith = async (token: string, body: Record<string, unknown>) =>
      t.app.inject({ method: 'POST', url: '/v2/events/poll', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    const users = async (n: number, prefix = 'u') => {
      for (let i = 0; i < n; i++) assert.equal((await t.request('POST', '/v2/scim/Users', { userName: `${prefix}${i}@acme.example` })).statusCode, 201);
    };

    it('pending SETs in order, verified against the JWKS; acknowledged ones are not returned again, the others are', async () => {
      const sub = await subscribe();
      await users(5);
      const r = await pollWith(sub.pollToken, { returnImmediately: true, maxEvents: 3 });
      assert.equal(r.statusCode, 200);
      const first = r.json() as { sets: Record<string, string>; moreAvailable: boolean };
      assert.deepEqual(Object.keys(first.sets), [1, 2, 3].map((n) => `${t.team.id}.${n}`));
      assert.equal(first.moreAvailable, true);
      const keys = createLocalJWKSet((await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json() as JSONWebKeySet);
      for (const [jti, set] of Object.entries(first.sets)) {
        const { payload } = await jwtVerify(set, keys, { issuer: BASE_URL, audience: `${BASE_URL}/v2/events/poll/${sub.id}` });
        assert.equal(payload.jti, jti);
      }
      // Acknowledge 1 and 3 (not 2): the cursor stops before 2, which comes again.
      const second = (await pollWith(sub.pollToken, { returnImmediately: true, ack: [`${t.team.id}.1`, `${t.team.id}.3`] })).json() as { sets: Record<string, string> };
      assert.deepEqual(Object.keys(second.sets), [2, 3, 4, 5].map((n) => `${t.team.id}.${n}`));
      // Settle 2 with an error report, acknowledge the rest: nothing pending; the error is logged.
      const third = (await pollWith(sub.pollToken, {
        returnImmediately: true,
        ack: [3, 4, 5].map((n) => `${t.team.id}.${n}`),
        setErrs: { [`${t.team.id}.2`]: { err: 'invalid_key', description: 'cannot verify' } },
      })).json() as { sets: Record<string, string>; moreAvailable: boolean };
      assert.deepEqual(third, { sets: {}, moreAvailable: false });
      const view = json(await t.request('GET', `/v2/events/subscriptions/${sub.id}`));
      assert.equal(view.cursor, 5);
      assert.match(String((view.attempts as { error: string }[])[0]!.error), /receiver reported invalid_key: cannot verify/);
    });

    it('long-polls: a poll with nothing pending waits for the next event', async () => {
      const sub = await subscribe({ events: ['create'] });
      // An order, not a time (issue 27 item 14): unanswered while nothing is pending, then
      // answered with the event created meanwhile.
      let answered = false;
      const waiting = pollWith(sub.pollToken, { maxEvents: 10 }).finally(() => (answered = true));
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(answered, false, 'the poll waits while nothing is pending');
      await users(1);
      const answer = (await waiting).json() as { sets: Record<string, string> };
      assert.deepEqual(Object.keys(answer.sets), [`${t.team.id}.1`], 'answered with the event that came after it');
    });

    it('bad credentials and bad bodies get RFC 8936 error bodies; a push subscription cannot poll', async () => {
      const none = await t.app.inject({ method: 'POST', url: '/v2/events/poll', headers: { 'content-type': 'application/json' }, payload: '{}' });
      assert.equal(none.statusCode, 401);
      assert.equal(none.json().err, 'authentication_failed');
      assert.equal((await pollWith(t.token, { returnImmediately: true })).statusCode, 401, 'an OAuth token is not a poll credential');
      const sub = await subscribe();
      for (const body of [{ maxEvents: -1 }, { maxEvents: 'x' }, { ack: 'x' }, { setErrs: { a: 1 } }, { returnImmediately: 'yes' }]) {
        const r = await pollWith(sub.pollToken, body);
        assert.equal(r.statusCode, 400, JSON.stringify(body));
        assert.equal(r.json().err, 'invalid_request');
      }
      assert.equal((await t.request('POST', '/v2/events/subscriptions', { method: 'poll', url: 'https://x.example' }, { 'content-type': 'application/json' })).statusCode, 400);
    });
  });
}
