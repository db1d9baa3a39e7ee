/**
 * The client's feed follower and SET verification against a real Rollcall over HTTP (issue 34
 * item 2): events.follow yields every event after a saved position in seq order, waits for new
 * ones, reports positions to store, resumes from a stored one, ends on abort, and surfaces a
 * pruned position (410) as FeedPrunedError; verifySet verifies a real SET (from a poll
 * subscription, RFC 8936) against the server's /.well-known/jwks.json and refuses tampered ones.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { FeedPrunedError, Rollcall, SetVerificationError, verifySet } from '../../packages/client/src/index.ts';
import type { FeedEvent } from '../../packages/client/src/index.ts';
import type { JSONWebKeySet } from 'jose';
import { pruneOnce } from '../../src/events/retention.ts';
import { BASE_URL } from '../support/app.ts';
import { listeningApp } from '../support/client-server.ts';
import type { ListeningApp } from '../support/client-server.ts';
import { engines } from '../support/engines.ts';

for (const engine of engines) {
  describe(`client events (${engine.name})`, () => {
    let t: ListeningApp;
    let rc: Rollcall;
    beforeEach(async () => {
      t = await listeningApp({ engine });
      rc = new Rollcall({ baseUrl: t.origin, token: t.token });
    });
    afterEach(() => t.close());

    it('follows the feed from a saved position, waits for new events, stops on abort and resumes where it stopped', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await rc.users.create({ userName: `u${i}@acme.example` })).id!);
      let saved = 0;
      const stop = new AbortController();
      const got: FeedEvent[] = [];
      for await (const event of rc.events.follow({ after: saved, signal: stop.signal, onPosition: (seq) => void (saved = seq), limit: 2, pollIntervalMs: 20 })) {
        got.push(event);
        // Caught up after three: later writes arrive while following.
        if (got.length === 3) {
          const g = await rc.groups.create({ displayName: 'G', members: [{ value: ids[0]! }] });
          await rc.users.patch(ids[1]!, [{ op: 'replace', path: 'title', value: 'Lead' }]);
          ids.push(g.id!);
        }
        if (got.length === 5) stop.abort();
      }
      assert.deepEqual(got.map((e) => e.seq), [1, 2, 3, 4, 5]);
      assert.deepEqual(got.map((e) => `${e.resourceType} ${e.change}`), ['User create', 'User create', 'User create', 'Group create', 'User patch']);
      assert.equal(got[3]!.id, ids[3]);
      assert.ok(got[4]!.changed.includes('title'));
      assert.equal(saved, 5, 'the position of the last event handled');

      await rc.users.delete(ids[2]!);
      const again = new AbortController();
      const resumed: FeedEvent[] = [];
      for await (const event of rc.events.follow({ after: saved, signal: again.signal, pollIntervalMs: 20 })) {
        resumed.push(event);
        again.abort();
      }
      assert.deepEqual(resumed.map((e) => [e.seq, e.change, e.id]), [[6, 'deactivate', ids[2]]]);
    });

    it('a position whose following events were pruned is a FeedPrunedError (410)', async () => {
      await rc.users.create({ userName: 'seen@acme.example' });
      assert.equal((await rc.events.list(0)).next, 1);
      for (let i = 0; i < 3; i++) await rc.users.create({ userName: `unread${i}@acme.example` });
      t.clock.advance(31 * 86_400_000);
      assert.equal((await pruneOnce(t.storage.db, t.clock, 30)).events, 4);
      const later = new Rollcall({ baseUrl: t.origin, token: await t.tokenFor(t.team.id, ['read']) });
      const error = await (async () => {
        for await (const _ of later.events.follow({ after: 1 })) assert.fail('no event after a pruned position');
      })().catch((e: unknown) => e);
      assert.ok(error instanceof FeedPrunedError, String(error));
      assert.equal(error.status, 410);
      assert.equal(error.after, 1);
    });

    it('verifySet verifies a real SET against the server JWKS and returns its claims; a tampered or misaddressed one fails', async () => {
      const sub = (await rc.http.request<{ id: string; pollToken: string }>({ method: 'POST', path: '/v2/events/subscriptions', body: { method: 'poll' }, contentType: 'application/json' })).body;
      const made = await rc.users.create({ userName: 'set@acme.example', externalId: 'ext-1' });
      const polled = await fetch(`${t.origin}/v2/events/poll`, { method: 'POST', headers: { authorization: `Bearer ${sub.pollToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ returnImmediately: true }) });
      const sets = ((await polled.json()) as { sets: Record<string, string> }).sets;
      const [jti, token] = Object.entries(sets)[0]!;
      const options = { jwksUrl: `${t.origin}/.well-known/jwks.json`, issuer: BASE_URL, audience: `${BASE_URL}/v2/events/poll/${sub.id}` };
      const claims = await verifySet(token, options);
      assert.equal(claims.jti, jti);
      assert.equal(claims.seq, 1);
      assert.equal(claims.sub_id.uri, `/Users/${made.id}`);
      assert.equal(claims.sub_id.externalId, 'ext-1');
      assert.equal(typeof claims.txn, 'string');
      const event = claims.events['urn:ietf:params:scim:event:prov:create:notice'];
      assert.equal(event?.ref, `${BASE_URL}/v2/scim/Users/${made.id}`);
      assert.ok(event?.attributes?.includes('userName'));

      // The same with the key set in hand.
      const jwks = (await (await fetch(options.jwksUrl)).json()) as JSONWebKeySet;
      assert.equal((await verifySet(token, { ...options, jwksUrl: undefined, jwks })).jti, jti);

      const [header, payload, signature] = token.split('.') as [string, string, string];
      const claimsJson = JSON.parse(Buffer.from(payload, 'base64url').toString());
      const forged = `${header}.${Buffer.from(JSON.stringify({ ...claimsJson, seq: 99 })).toString('base64url')}.${signature}`;
      await assert.rejects(verifySet(forged, options), SetVerificationError);
      const flipped = `${header}.${payload}.${signature.slice(0, -4)}${signature.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
      await assert.rejects(verifySet(flipped, options), SetVerificationError);
      await assert.rejects(verifySet(token, { ...options, audience: 'https://elsewhere.example/' }), SetVerificationError);
      await assert.rejects(verifySet(token, { ...options, issuer: 'https://other.example' }), SetVerificationError);
      // A header rewritten to another typ does not verify either.
      const untyped = `${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(header, 'base64url').toString()), typ: 'JWT' })).toString('base64url')}.${payload}.${signature}`;
      await assert.rejects(verifySet(untyped, options), SetVerificationError);
    });
  });
}
