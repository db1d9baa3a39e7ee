/**
 * Event format and the plain listing (issue 10 items 2, 4 and 5): SETs signed ES256 verify
 * against /.well-known/jwks.json with jose, carry the RFC 8417 / 9967 claims, `:full` only when
 * asked and never a password; `rollcall keys rotate` adds a signing key while the old one stays
 * published; `GET /v2/events` pages the feed in order, with scope `read`, per team.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import type { JSONWebKeySet } from 'jose';
import { rotateKeysNow } from '../../src/admin.ts';
import { pruneOnce } from '../../src/events/retention.ts';
import { SetSigner, setClaims } from '../../src/events/set.ts';
import { masterKey } from '../../src/keys/master.ts';
import { KeyStore, REFRESH_SECONDS } from '../../src/keys/store.ts';
import { eventsAfter } from '../../src/storage/repos/events.ts';
import { BASE_URL, createTestApp, json, TEST_SECRET_KEY } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { adminDeps } from '../support/oauth.ts';

const PATCH = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

for (const engine of engines) {
  describe(`event format and listing (${engine.name})`, () => {
    let t: TestApp;
    beforeEach(async () => {
      t = await createTestApp({ engine });
    });
    afterEach(() => t.close());

    const signer = async () => {
      const master = masterKey({ secretKey: TEST_SECRET_KEY, database: { engine: t.storage.hooks.name, sqlitePath: t.storage.sqlitePath } });
      return new SetSigner(await KeyStore.open(t.storage.db, t.clock, master));
    };
    const jwks = async (): Promise<JSONWebKeySet> => {
      const r = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
      assert.equal(r.statusCode, 200);
      assert.match(String(r.headers['content-type']), /^application\/jwk-set\+json/);
      return r.json() as JSONWebKeySet;
    };

    it('each event renders as an ES256 SET that verifies against the published JWKS, with RFC 8417 / 9967 claims', async () => {
      const u = json(await t.request('POST', '/v2/scim/Users', { userName: 'a@acme.example', externalId: 'ext-1', title: 'Eng', password: 'hunter2 hunter2 x' }, { 'x-request-id': 'req-1' }));
      await t.request('PATCH', `/v2/scim/Users/${String(u.id)}`, { schemas: [PATCH], Operations: [{ op: 'replace', path: 'title', value: 'Lead' }] });
      await t.request('DELETE', `/v2/scim/Users/${String(u.id)}`);
      const rows = await eventsAfter(t.storage.db, t.team.id, 0, 10);
      const s = await signer();
      const keySet = createLocalJWKSet(await jwks());
      const audience = 'https://receiver.example/events';

      const notice = await s.sign(setClaims(rows[0]!, { issuer: BASE_URL, audience, full: false }));
      const header = decodeProtectedHeader(notice);
      assert.equal(header.alg, 'ES256');
      assert.equal(header.typ, 'secevent+jwt');
      assert.ok((await jwks()).keys.some((k) => k.kid === header.kid && k.kty === 'EC' && k.crv === 'P-256' && k.d === undefined), 'the kid is published, public part only');
      const { payload } = await jwtVerify(notice, keySet, { issuer: BASE_URL, audience, algorithms: ['ES256'] });
      assert.equal(payload.jti, `${t.team.id}.1`);
      assert.equal(payload.txn, 'req-1');
      assert.equal(payload.seq, 1);
      assert.deepEqual(payload.sub_id, { format: 'scim', uri: `/Users/${String(u.id)}`, externalId: 'ext-1' });
      const created = (payload.events as Record<string, Record<string, unknown>>)['urn:ietf:params:scim:event:prov:create:notice']!;
      assert.equal(created.ref, `${BASE_URL}/v2/scim/Users/${String(u.id)}`);
      assert.ok((created.attributes as string[]).includes('userName'));
      assert.equal('data' in created, false, 'a notice carries no data');

      const full = await jwtVerify(await s.sign(setClaims(rows[0]!, { issuer: BASE_URL, audience, full: true })), keySet);
      const data = (full.payload.events as Record<string, { data: Record<string, unknown> }>)['urn:ietf:params:scim:event:prov:create:full']!.data;
      assert.equal(data.userName, 'a@acme.example');
      assert.equal(data.id, u.id);
      assert.equal(JSON.stringify(full.payload).includes('hunter2'), false, 'never a password');

      const patch = await jwtVerify(await s.sign(setClaims(rows[1]!, { issuer: BASE_URL, audience, full: true })), keySet);
      assert.deepEqual((patch.payload.events as Record<string, { data: unknown }>)['urn:ietf:params:scim:event:prov:patch:full']!.data, {
        schemas: [PATCH],
        Operations: [{ op: 'replace', path: 'title', value: 'Lead' }],
      });
      const deactivated = await jwtVerify(await s.sign(setClaims(rows[2]!, { issuer: BASE_URL, audience, full: true })), keySet);
      assert.deepEqual(Object.keys(deactivated.payload.events as object), ['urn:ietf:params:scim:event:prov:deactivate']);
    });

    it('keys rotate: new SETs carry the new kid; the old key stays in the JWKS, so SETs signed before still verify', async () => {
      await t.request('POST', '/v2/scim/Users', { userName: 'a@acme.example' });
      const [row] = await eventsAfter(t.storage.db, t.team.id, 0, 1);
      const before = await (await signer()).sign(setClaims(row!, { issuer: BASE_URL, audience: 'x', full: false }));
      const rotated = await rotateKeysNow(adminDeps(t), TEST_SECRET_KEY, 30);
      assert.deepEqual(rotated.map((r) => r.purpose), ['cookie', 'events']);
      // The JWKS offers a key the moment any instance may sign with it (found by the two-process
      // test: a server that had not reloaded yet published only its own key).
      assert.ok((await jwks()).keys.some((k) => k.kid === rotated[1]!.id), 'the new key is published at once');
      t.clock.advance((REFRESH_SECONDS + 1) * 1000);
      const after = await (await signer()).sign(setClaims(row!, { issuer: BASE_URL, audience: 'x', full: false }));
      assert.notEqual(decodeProtectedHeader(after).kid, decodeProtectedHeader(before).kid);
      const set = await jwks();
      assert.equal(set.keys.length, 2);
      const keySet = createLocalJWKSet(set);
      await jwtVerify(before, keySet);
      await jwtVerify(after, keySet);
      // After the retention the old key is no longer published.
      t.clock.advance(31 * 86_400_000);
      assert.equal((await jwks()).keys.length, 1);
    });

    it('ServiceProviderConfig advertises the RFC 9967 events emitted, asynchronous requests on request, and the working delivery methods', async () => {
      const spc = json(await t.app.inject({ method: 'GET', url: '/v2/scim/ServiceProviderConfig' }));
      const events = spc.securityEvents as { eventUris: string[]; asyncRequest: string; deliveryMethods: string[] };
      assert.equal(events.asyncRequest, 'request');
      assert.deepEqual([...events.eventUris].sort(), [
        ...['create', 'patch', 'put'].flatMap((t) => [`urn:ietf:params:scim:event:prov:${t}:full`, `urn:ietf:params:scim:event:prov:${t}:notice`]),
        'urn:ietf:params:scim:event:prov:activate',
        'urn:ietf:params:scim:event:prov:deactivate',
        'urn:ietf:params:scim:event:prov:delete',
        'urn:ietf:params:scim:event:misc:asyncresp',
      ].sort());
      assert.ok(events.deliveryMethods.includes('urn:ietf:rfc:8935'));
    });

    it('GET /v2/events pages the feed in seq order with scope read, per team; pruned history is a 410', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(String(json(await t.request('POST', '/v2/scim/Users', { userName: `u${i}@acme.example` })).id));
      let after = 0;
      const seen: number[] = [];
      for (;;) {
        const r = await t.request('GET', `/v2/events?after=${after}&limit=2`);
        assert.equal(r.statusCode, 200);
        const page = r.json() as { events: { seq: number; event: string; id: string; change: string }[]; next: number; more: boolean };
        seen.push(...page.events.map((e) => e.seq));
        if (page.events.length > 0) assert.equal(page.events[0]!.event, 'urn:ietf:params:scim:event:prov:create:notice');
        after = page.next;
        if (!page.more) break;
      }
      assert.deepEqual(seen, [1, 2, 3, 4, 5]);
      const all = (await t.request('GET', '/v2/events')).json() as { events: { id: string }[] };
      assert.deepEqual(all.events.map((e) => e.id), ids);

      assert.equal((await t.request('GET', '/v2/events?after=-1')).statusCode, 400);
      assert.equal((await t.request('GET', '/v2/events?limit=5000')).statusCode, 400);
      assert.equal((await t.app.inject({ method: 'GET', url: '/v2/events' })).statusCode, 401);
      const writeOnly = await t.tokenFor(t.team.id, ['write']);
      assert.equal((await t.app.inject({ method: 'GET', url: '/v2/events', headers: { authorization: `Bearer ${writeOnly}` } })).statusCode, 403);
      const other = await t.addTeam('beta');
      const theirs = await t.app.inject({ method: 'GET', url: '/v2/events', headers: { authorization: `Bearer ${other.token}` } });
      assert.deepEqual((theirs.json() as { events: unknown[] }).events, [], 'another team sees none of these');

      t.clock.advance(31 * 86_400_000);
      await pruneOnce(t.storage.db, t.clock, 30);
      const fresh = await t.tokenFor(t.team.id, ['read']);
      const gone = await t.app.inject({ method: 'GET', url: '/v2/events?after=2', headers: { authorization: `Bearer ${fresh}` } });
      assert.equal(gone.statusCode, 410);
      assert.match(String((gone.json() as { detail: string }).detail), /pruned/);
      const caughtUp = await t.app.inject({ method: 'GET', url: '/v2/events?after=5', headers: { authorization: `Bearer ${fresh}` } });
      assert.equal(caughtUp.statusCode, 200, 'a client that saw everything is not told to resynchronise');
    });
  });
}
