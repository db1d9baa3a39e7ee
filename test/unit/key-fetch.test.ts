/**
 * The key fetcher (DESIGN.md section 11, issue 29 item 4): JWK Sets fetched from a `jwks_uri` or
 * through an issuer's OpenID configuration (OpenID Connect Discovery 1.0 section 4), cached
 * within the publisher's Cache-Control clamped to 5 minutes..24 hours, an unknown `kid`
 * refetching at most once a minute, one fetch for concurrent callers; and hostile publishers
 * (one that hangs, answers 5 MB, redirects, lies about its issuer, answers no JWK Set) and
 * hosts the egress policy forbids, each refused with KeyFetchFailed. Every server listens on
 * 127.0.0.1; other names are answered by an injected resolver, and time moves by an injected
 * clock (the timeout aside, which a short setting bounds).
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import type { JWK } from 'jose';
import type { AllowedReceiver } from '../../src/config.ts';
import { ReceiverPolicy } from '../../src/events/receivers.ts';
import type { Resolve } from '../../src/events/receivers.ts';
import { KeyFetcher } from '../../src/oauth/key-fetch.ts';
import type { FetchEvent, KeyFetchSettings } from '../../src/oauth/key-fetch.ts';
import { KeyFetchFailed } from '../../src/oauth/remote-keys.ts';

const LOOPBACK: readonly AllowedReceiver[] = [
  { kind: 'network', address: '127.0.0.0', prefix: 8, family: 4 },
  { kind: 'network', address: '::1', prefix: 128, family: 6 },
];
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** A public RSA key as an issuer publishes it. */
function rsaKey(kid: string): JWK {
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...(publicKey.export({ format: 'jwk' }) as JWK), kid, use: 'sig', alg: 'RS256' };
}
const KEY_A = rsaKey('key-a');
const KEY_B = rsaKey('key-b');

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface Publisher {
  readonly origin: string;
  /** Requests per path. */
  readonly hits: Map<string, number>;
  count(path: string): number;
  route(path: string, handler: Handler): void;
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 answering by path (404 for any other) and counting requests. */
async function publisher(): Promise<Publisher> {
  const routes = new Map<string, Handler>();
  const hits = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const handler = routes.get(path);
    if (handler) handler(req, res);
    else res.writeHead(404).end();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    count: (path) => hits.get(path) ?? 0,
    route: (path, handler) => routes.set(path, handler),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A handler answering `body` as JSON with the given headers. */
const json =
  (body: () => unknown, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body()));
  };

/** A clock the test moves. */
function manualClock(start = Date.parse('2026-11-26T12:00:00Z')) {
  let now = start;
  return { now: () => new Date(now), advance: (ms: number) => void (now += ms) };
}

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

  describe('hostile publishers and forbidden hosts', () => {
    const refused = async (work: Promise<unknown>, reason: RegExp) => {
      await assert.rejects(work, (error: unknown) => error instanceof KeyFetchFailed && reason.test(error.message));
    };

    it('a publisher that never answers fails after the timeout', async () => {
      const p = await server();
      p.route('/hang', () => {});
      await refused(fetcher({ timeoutMs: 300 }).keySet({ jwksUri: `${p.origin}/hang` }, undefined), /no key set within 300 ms/);
    });

    it('a publisher that sends its headers and then stalls fails after the timeout: the deadline covers the body', async () => {
      const p = await server();
      p.route('/stall', (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"keys":[');
      });
      await refused(fetcher({ timeoutMs: 300 }).keySet({ jwksUri: `${p.origin}/stall` }, undefined), /no key set within 300 ms/);
    });

    it('an issuer whose configuration hangs delays only its own callers: another source answers meanwhile', async () => {
      const p = await server();
      p.route('/slow/.well-known/openid-configuration', () => {});
      p.route('/jwks', json(() => ({ keys: [KEY_A] })));
      const keys = fetcher({ timeoutMs: 300 });
      const slow = keys.keySet({ issuer: `${p.origin}/slow` }, undefined);
      assert.deepEqual(kids(await keys.keySet({ jwksUri: `${p.origin}/jwks` }, undefined)), ['key-a']);
      await refused(slow, /no key set within 300 ms/);
    });

    it('an answer of megabytes is refused once it passes 64 KiB: the connection is dropped, never read to its end', async () => {
      // Far more than the 5 MB of the issue, so that the socket buffers between the two ends
      // (several megabytes on loopback) cannot take it all: only a client that stops reading
      // leaves the server unable to finish.
      const p = await server();
      const total = 64 * 1024 * 1024;
      let written = 0;
      let completed = false;
      p.route('/huge', (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        const pump = () => {
          while (written < total && !res.destroyed) {
            written += chunk.byteLength;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          if (!res.destroyed) res.end(() => (completed = true));
        };
        pump();
      });
      await refused(fetcher().keySet({ jwksUri: `${p.origin}/huge` }, undefined), /answered more than 65536 bytes/);
      assert.equal(completed, false);
      assert.ok(written < total, `the server could write only part of the answer (${written} of ${total} bytes)`);
    });

    it('an answer declaring 5 MB is refused before its body is read', async () => {
      const p = await server();
      p.route('/declared', (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(5 * 1024 * 1024) });
        res.write('{"keys":[]');
      });
      await refused(fetcher().keySet({ jwksUri: `${p.origin}/declared` }, undefined), /declares 5242880 bytes/);
    });

    it('https verifies the publisher\'s certificate: a self-signed one fails, its keys never asked', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'key-fetch-'));
      closing.push(async () => rmSync(dir, { recursive: true, force: true }));
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=keys.example', '-addext', 'subjectAltName=DNS:keys.example', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
      let requests = 0;
      const tls = createTlsServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (req, res) => {
        requests += 1;
        json(() => ({ keys: [KEY_A] }))(req, res);
      });
      await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
      closing.push(() => new Promise<void>((resolve) => tls.close(() => resolve())));
      const port = (tls.address() as AddressInfo).port;
      const resolve: Resolve = async () => [{ address: '127.0.0.1', family: 4 }];
      const keys = fetcher({ policy: new ReceiverPolicy(LOOPBACK, resolve) });
      await refused(keys.keySet({ jwksUri: `https://keys.example:${port}/jwks` }, undefined), /keys\.example:\d+: network error (DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)/);
      assert.equal(requests, 0);
    });

    it('a redirect is never followed: the fetch fails and its target is never asked', async () => {
      const p = await server();
      p.route('/target', json(() => ({ keys: [KEY_A] })));
      for (const status of [301, 302, 303, 307, 308]) {
        p.route(`/moved-${status}`, (_req, res) => res.writeHead(status, { location: `${p.origin}/target` }).end());
        await refused(fetcher().keySet({ jwksUri: `${p.origin}/moved-${status}` }, undefined), new RegExp(`answered ${status} \\(a redirect, never followed\\)`));
      }
      p.route('/.well-known/openid-configuration', (_req, res) => res.writeHead(302, { location: `${p.origin}/target` }).end());
      await refused(fetcher().keySet({ issuer: p.origin }, undefined), /answered 302/);
      assert.equal(p.count('/target'), 0);
    });

    it('plain http to a host that is not loopback is refused before any lookup', async () => {
      const asked: string[] = [];
      const resolve: Resolve = async (host) => {
        asked.push(host);
        return [{ address: '127.0.0.1', family: 4 }];
      };
      const keys = fetcher({ policy: new ReceiverPolicy(LOOPBACK, resolve) });
      await refused(keys.keySet({ jwksUri: 'http://keys.example.com/jwks' }, undefined), /https only/);
      await refused(keys.keySet({ issuer: 'http://login.example.com/tenant/v2.0' }, undefined), /https only/);
      await refused(keys.keySet({ jwksUri: 'http://10.0.0.1/jwks' }, undefined), /https only/);
      await refused(keys.keySet({ jwksUri: 'ftp://keys.example.com/jwks' }, undefined), /https only/);
      await refused(keys.keySet({ jwksUri: 'not a url' }, undefined), /not an absolute URL/);
      await refused(keys.keySet({ jwksUri: 'https://user:pw@keys.example.com/jwks' }, undefined), /credentials/);
      assert.deepEqual(asked, []);
    });

    it('a name resolving to a private, link-local or metadata address is refused without connecting', async () => {
      const names: Record<string, string> = { 'keys.internal': '10.0.0.1', 'metadata.internal': '169.254.169.254', 'mapped.internal': '::ffff:192.168.1.1' };
      const resolve: Resolve = async (host) => {
        const address = names[host];
        if (address === undefined) throw new Error('ENOTFOUND');
        return [{ address, family: address.includes(':') ? 6 : 4 }];
      };
      const keys = fetcher({ policy: new ReceiverPolicy(LOOPBACK, resolve) });
      await refused(keys.keySet({ jwksUri: 'https://keys.internal/jwks' }, undefined), /keys\.internal: refused by the egress policy .*private/);
      await refused(keys.keySet({ jwksUri: 'https://metadata.internal/jwks' }, undefined), /refused by the egress policy .*link-local/);
      await refused(keys.keySet({ jwksUri: 'https://169.254.169.254/latest/meta-data' }, undefined), /refused by the egress policy .*link-local/);
      await refused(keys.keySet({ jwksUri: 'https://mapped.internal/jwks' }, undefined), /refused by the egress policy .*private/);
      await refused(keys.keySet({ jwksUri: 'https://nowhere.internal/jwks' }, undefined), /does not resolve/);
    });

    it('loopback is refused too unless the operator allows it: the refusal comes before any request', async () => {
      const p = await server();
      p.route('/jwks', json(() => ({ keys: [KEY_A] })));
      const port = new URL(p.origin).port;
      const resolve: Resolve = async () => [{ address: '127.0.0.1', family: 4 }];
      const strict = fetcher({ policy: new ReceiverPolicy([], resolve) });
      await refused(strict.keySet({ jwksUri: `${p.origin}/jwks` }, undefined), /refused by the egress policy .*loopback/);
      await refused(strict.keySet({ jwksUri: `http://localhost:${port}/jwks` }, undefined), /refused by the egress policy .*loopback/);
      assert.equal(p.count('/jwks'), 0);
      // The same publisher, allowed: fetched.
      assert.deepEqual(kids(await fetcher({ policy: new ReceiverPolicy(LOOPBACK, resolve) }).keySet({ jwksUri: `http://localhost:${port}/jwks` }, undefined)), ['key-a']);
    });

    it('a configuration naming a jwks_uri on a forbidden address is refused without connecting there', async () => {
      const p = await server();
      const resolve: Resolve = async () => [{ address: '10.1.2.3', family: 4 }];
      p.route('/.well-known/openid-configuration', json(() => ({ issuer: p.origin, jwks_uri: 'https://keys.internal/jwks' })));
      await refused(fetcher({ policy: new ReceiverPolicy(LOOPBACK, resolve) }).keySet({ issuer: p.origin }, undefined), /keys\.internal: refused by the egress policy .*private/);
    });

    it('OpenID Connect Discovery 4.3: a configuration naming another issuer is refused, and its jwks_uri never asked', async () => {
      const p = await server();
      p.route('/tenant/.well-known/openid-configuration', json(() => ({ issuer: `${p.origin}/other-tenant`, jwks_uri: `${p.origin}/jwks` })));
      p.route('/jwks', json(() => ({ keys: [KEY_A] })));
      await refused(fetcher().keySet({ issuer: `${p.origin}/tenant` }, undefined), /names another issuer/);
      assert.equal(p.count('/jwks'), 0);
    });

    it('a configuration with no jwks_uri, or that is not JSON, is refused', async () => {
      const p = await server();
      p.route('/a/.well-known/openid-configuration', json(() => ({ issuer: `${p.origin}/a` })));
      p.route('/b/.well-known/openid-configuration', (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>sign in</html>'));
      await refused(fetcher().keySet({ issuer: `${p.origin}/a` }, undefined), /names no jwks_uri/);
      await refused(fetcher().keySet({ issuer: `${p.origin}/b` }, undefined), /did not answer JSON/);
    });

    it('a body that is not JSON, or JSON that is not a JWK Set, or a set with too many keys, is refused', async () => {
      const p = await server();
      p.route('/html', (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>not keys</html>'));
      p.route('/object', json(() => ({ issuer: 'x' })));
      p.route('/array', json(() => [KEY_A]));
      p.route('/keys-not-array', json(() => ({ keys: KEY_A })));
      p.route('/many', json(() => ({ keys: Array.from({ length: 101 }, (_, i) => ({ ...KEY_A, kid: `k${i}` })) })));
      const keys = fetcher();
      const get = (path: string) => keys.keySet({ jwksUri: `${p.origin}${path}` }, undefined);
      await refused(get('/html'), /did not answer JSON/);
      await refused(get('/object'), /not a JWK Set/);
      await refused(get('/array'), /not a JWK Set/);
      await refused(get('/keys-not-array'), /not a JWK Set/);
      await refused(get('/many'), /holds 101 keys, over the 100 accepted/);
      await refused(get('/missing'), /answered 404/);
    });
  });
});
