/**
 * The key fetcher (DESIGN.md section 11, issue 29 item 4): JWK Sets fetched from a `jwks_uri` or
 * through an issuer's OpenID configuration (OpenID Connect Discovery 1.0 section 4), cached
 * within the publisher's Cache-Control clamped to 5 minutes..24 hours, an unknown `kid`
 * refetching at most once a minute, one fetch for concurrent callers, failures remembered, a
 * stale set when a refetch fails, public keys only (hostile publishers and forbidden hosts:
 * key-fetch-hostile.test.ts). Every server listens on 127.0.0.1, and time moves by an injected
 * clock.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { afterEach, describe, it } from 'node:test';
import { createLocalJWKSet, jwtVerify, SignJWT } from 'jose';
import type { JWK } from 'jose';
import { ReceiverPolicy } from '../../src/events/receivers.ts';
import { KeyFetcher } from '../../src/oauth/key-fetch.ts';
import type { FetchEvent, KeyFetchSettings } from '../../src/oauth/key-fetch.ts';
import { KeyFetchFailed } from '../../src/oauth/remote-keys.ts';
import { HOUR, json, KEY_A, KEY_B, LOOPBACK, manualClock, MINUTE, publisher } from '../support/key-publisher.ts';

describe('KeyFetcher', { timeout: 20_000 }, () => {
  const closing: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
  });
  const server = async () => {
    const p = await publisher();
    closing.push(() => p.close());
    return p;
  };
  const fetcher = (settings: Partial<KeyFetchSettings> = {}) => new KeyFetcher({ policy: new ReceiverPolicy(LOOPBACK), ...settings });
  const kids = (set: { keys: JWK[] }) => set.keys.map((k) => k.kid);

  describe('fetching and caching', () => {
    it('fetches a jwks_uri once and answers from the cache while it is fresh', async () => {
      const p = await server();
      p.route('/jwks', json(() => ({ keys: [KEY_A] })));
      const keys = fetcher();
      assert.deepEqual(kids(await keys.keySet({ jwksUri: `${p.origin}/jwks` }, 'key-a')), ['key-a']);
      assert.deepEqual(kids(await keys.keySet({ jwksUri: `${p.origin}/jwks` }, 'key-a')), ['key-a']);
      assert.deepEqual(kids(await keys.keySet({ jwksUri: `${p.origin}/jwks` }, undefined)), ['key-a']);
      assert.equal(p.count('/jwks'), 1);
    });

    it('OpenID Connect Discovery 4: finds the set through <issuer>/.well-known/openid-configuration, both cached', async () => {
      const p = await server();
      const issuer = `${p.origin}/tenant-1/v2.0`;
      p.route('/tenant-1/v2.0/.well-known/openid-configuration', json(() => ({ issuer, jwks_uri: `${p.origin}/tenant-1/discovery/v2.0/keys` })));
      p.route('/tenant-1/discovery/v2.0/keys', json(() => ({ keys: [KEY_A, KEY_B] })));
      const keys = fetcher();
      assert.deepEqual(kids(await keys.keySet({ issuer }, 'key-b')), ['key-a', 'key-b']);
      assert.deepEqual(kids(await keys.keySet({ issuer }, 'key-a')), ['key-a', 'key-b']);
      assert.equal(p.count('/tenant-1/v2.0/.well-known/openid-configuration'), 1);
      assert.equal(p.count('/tenant-1/discovery/v2.0/keys'), 1);
    });

    it('an issuer with a trailing slash: the path is appended after it, and its issuer compared as configured', async () => {
      const p = await server();
      const issuer = `${p.origin}/tenant-2/`;
      p.route('/tenant-2/.well-known/openid-configuration', json(() => ({ issuer, jwks_uri: `${p.origin}/keys` })));
      p.route('/keys', json(() => ({ keys: [KEY_A] })));
      assert.deepEqual(kids(await fetcher().keySet({ issuer }, undefined)), ['key-a']);
    });

    it('Cache-Control max-age below 5 minutes counts as 5 minutes', async () => {
      const p = await server();
      p.route('/jwks', json(() => ({ keys: [KEY_A] }), { 'cache-control': 'public, max-age=10' }));
      const clock = manualClock();
      const keys = fetcher({ clock });
      const source = { jwksUri: `${p.origin}/jwks` };
      await keys.keySet(source, undefined);
      clock.advance(4 * MINUTE);
      await keys.keySet(source, undefined);
      assert.equal(p.count('/jwks'), 1);
      clock.advance(MINUTE + 1);
      await keys.keySet(source, undefined);
      assert.equal(p.count('/jwks'), 2);
    });

    it('Cache-Control max-age above 24 hours counts as 24 hours; one within them is honoured', async () => {
      const p = await server();
      p.route('/long', json(() => ({ keys: [KEY_A] }), { 'cache-control': 'max-age=31536000' }));
      p.route('/hour', json(() => ({ keys: [KEY_A] }), { 'cache-control': 'max-age=3600' }));
      const clock = manualClock();
      const keys = fetcher({ clock });
      await keys.keySet({ jwksUri: `${p.origin}/long` }, undefined);
      await keys.keySet({ jwksUri: `${p.origin}/hour` }, undefined);
      clock.advance(59 * MINUTE);
      await keys.keySet({ jwksUri: `${p.origin}/hour` }, undefined);
      assert.equal(p.count('/hour'), 1);
      clock.advance(2 * MINUTE);
      await keys.keySet({ jwksUri: `${p.origin}/hour` }, undefined);
      assert.equal(p.count('/hour'), 2);
      clock.advance(22 * HOUR);
      await keys.keySet({ jwksUri: `${p.origin}/long` }, undefined);
      assert.equal(p.count('/long'), 1);
      clock.advance(HOUR);
      await keys.keySet({ jwksUri: `${p.origin}/long` }, undefined);
      assert.equal(p.count('/long'), 2);
    });

    it('no-store, like no Cache-Control, keeps the set for the 5-minute minimum', async () => {
      const p = await server();
      p.route('/jwks', json(() => ({ keys: [KEY_A] }), { 'cache-control': 'no-store' }));
      const clock = manualClock();
      const keys = fetcher({ clock });
      const source = { jwksUri: `${p.origin}/jwks` };
      await keys.keySet(source, undefined);
      await keys.keySet(source, undefined);
      assert.equal(p.count('/jwks'), 1);
      clock.advance(5 * MINUTE);
      await keys.keySet(source, undefined);
      assert.equal(p.count('/jwks'), 2);
    });

    it('an unknown kid refetches at most once a minute per source, and the rotated key is found', async () => {
      const p = await server();
      let published = [KEY_A];
      p.route('/jwks', json(() => ({ keys: published }), { 'cache-control': 'max-age=86400' }));
      const clock = manualClock();
      const keys = fetcher({ clock });
      const source = { jwksUri: `${p.origin}/jwks` };
      await keys.keySet(source, 'key-a');
      // Just fetched: an unknown kid is answered from the cache (verification then fails).
      published = [KEY_A, KEY_B];
      assert.deepEqual(kids(await keys.keySet(source, 'key-b')), ['key-a']);
      assert.equal(p.count('/jwks'), 1);
      clock.advance(MINUTE);
      assert.deepEqual(kids(await keys.keySet(source, 'key-b')), ['key-a', 'key-b']);
      assert.equal(p.count('/jwks'), 2);
      // Made-up kids within the minute cost nothing.
      for (const kid of ['made-up-1', 'made-up-2', 'made-up-3']) await keys.keySet(source, kid);
      clock.advance(MINUTE - 1);
      await keys.keySet(source, 'made-up-4');
      assert.equal(p.count('/jwks'), 2);
      clock.advance(1);
      await keys.keySet(source, 'made-up-5');
      assert.equal(p.count('/jwks'), 3);
    });

    it('concurrent callers for one source share one fetch', async () => {
      const p = await server();
      // The answer is held until the first request has arrived and every caller has asked.
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let arrived!: () => void;
      const first = new Promise<void>((resolve) => (arrived = resolve));
      p.route('/jwks', (_req, res) => {
        arrived();
        void gate.then(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [KEY_A] })));
      });
      const keys = fetcher();
      const calls = Array.from({ length: 20 }, (_, i) => keys.keySet({ jwksUri: `${p.origin}/jwks` }, i % 2 === 0 ? 'key-a' : undefined));
      await first;
      calls.push(keys.keySet({ jwksUri: `${p.origin}/jwks` }, 'key-a'));
      release();
      for (const set of await Promise.all(calls)) assert.deepEqual(kids(set), ['key-a']);
      assert.equal(p.count('/jwks'), 1);
    });

    it('the set verifies a JWT signed by its publisher (jose createLocalJWKSet)', async () => {
      const p = await server();
      const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      p.route('/jwks', json(() => ({ keys: [KEY_A, { ...(publicKey.export({ format: 'jwk' }) as JWK), kid: 'signer', alg: 'RS256', use: 'sig' }] })));
      const set = await fetcher().keySet({ jwksUri: `${p.origin}/jwks` }, 'signer');
      const jwt = await new SignJWT({ sub: 'client-1' }).setProtectedHeader({ alg: 'RS256', kid: 'signer' }).setExpirationTime('5m').sign(privateKey);
      assert.equal((await jwtVerify(jwt, createLocalJWKSet(set))).payload.sub, 'client-1');
    });

    it('keeps only public RSA and EC keys: private parts, symmetric and unknown key types are dropped', async () => {
      const p = await server();
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
      p.route('/jwks', json(() => ({
        keys: [
          KEY_A,
          { ...(privateKey.export({ format: 'jwk' }) as JWK), kid: 'leaked-private' },
          { kty: 'oct', k: 'c2VjcmV0', kid: 'hmac' },
          { kty: 'OKP', crv: 'Ed25519', x: 'AAAA', kid: 'okp' },
          { ...ec, kid: 'ec' },
          'not a key',
          null,
        ],
      })));
      assert.deepEqual(kids(await fetcher().keySet({ jwksUri: `${p.origin}/jwks` }, undefined)), ['key-a', 'ec']);
    });

    it('a failure is remembered briefly, touches no other source, and a stale set answers when a refetch fails', async () => {
      const p = await server();
      let up = true;
      p.route('/jwks', (req, res) => (up ? json(() => ({ keys: [KEY_A] }))(req, res) : res.writeHead(503).end()));
      p.route('/dead', (_req, res) => res.writeHead(500).end());
      const clock = manualClock();
      const events: FetchEvent[] = [];
      const keys = fetcher({ clock, onFetch: (e) => events.push(e) });
      await keys.keySet({ jwksUri: `${p.origin}/jwks` }, undefined);
      await assert.rejects(keys.keySet({ jwksUri: `${p.origin}/dead` }, undefined), KeyFetchFailed);
      await assert.rejects(keys.keySet({ jwksUri: `${p.origin}/dead` }, undefined), KeyFetchFailed);
      assert.equal(p.count('/dead'), 1);
      assert.deepEqual(kids(await keys.keySet({ jwksUri: `${p.origin}/jwks` }, undefined)), ['key-a']);
      clock.advance(30_000);
      await assert.rejects(keys.keySet({ jwksUri: `${p.origin}/dead` }, undefined), KeyFetchFailed);
      assert.equal(p.count('/dead'), 2);
      // The good source goes stale and its publisher fails: the last set answers, and the log says so.
      up = false;
      clock.advance(5 * MINUTE);
      assert.deepEqual(kids(await keys.keySet({ jwksUri: `${p.origin}/jwks` }, undefined)), ['key-a']);
      assert.equal(p.count('/jwks'), 2);
      assert.deepEqual(events.at(-1), { source: `jwks ${p.origin}/jwks`, ok: false, reason: `${p.origin}/jwks answered 503`, servedStale: true });
      // No longer than a day past its freshness.
      clock.advance(25 * HOUR);
      await assert.rejects(keys.keySet({ jwksUri: `${p.origin}/jwks` }, undefined), KeyFetchFailed);
    });

    it('holds at most maxSources sources, dropping the least recently used', async () => {
      const p = await server();
      for (const path of ['/one', '/two', '/three']) p.route(path, json(() => ({ keys: [KEY_A] })));
      const keys = fetcher({ maxSources: 2 });
      const get = (path: string) => keys.keySet({ jwksUri: `${p.origin}${path}` }, undefined);
      await get('/one');
      await get('/two');
      await get('/one');
      await get('/three');
      assert.equal(keys.size, 2);
      await get('/one');
      await get('/two');
      assert.deepEqual([p.count('/one'), p.count('/two'), p.count('/three')], [1, 2, 1]);
    });
  });

});
