/**
 * Push receivers are no way into the operator's network (issue 27 item 4): a receiver on a
 * loopback, link-local, private, unique-local or unspecified address (by literal or by the
 * name's resolution) is refused with a 400 unless ALLOW_RECEIVERS names it; delivery resolves
 * again before connecting and connects only to the addresses it checked, so a name that later
 * resolves to a forbidden address is refused before any connection; the attempt log keeps a
 * category, never a receiver's answer. Every connection in these tests goes to 127.0.0.1: names
 * are answered by an injected resolver, and a refusal happens before any socket is opened.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import type { DeliverySettings } from '../../src/events/delivery.ts';
import type { ResolvedAddress } from '../../src/events/receivers.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { startReceiver } from '../support/receiver.ts';
import type { Receiver } from '../support/receiver.ts';
import { until } from '../support/wait.ts';

const FAST: Partial<DeliverySettings> = { pollIntervalMs: 10, backoffBaseMs: 5, backoffMaxMs: 40, timeoutMs: 2000 };
const SCIM_ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

/** A TCP listener on 127.0.0.1 that counts connections and answers plain text (no TLS) to each. */
async function tripwire(): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  let count = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    count += 1;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.end('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => count,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

for (const engine of engines) {
  describe(`push receivers and the operator's network (${engine.name})`, () => {
    const closing: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      for (const close of closing.splice(0).reverse()) await close().catch(() => {});
    });
    const open = async (options: Parameters<typeof createTestApp>[0]) => {
      const t = await createTestApp({ engine, ...options });
      closing.push(() => t.close());
      await t.app.ready();
      return t;
    };
    const receiver = async (...args: Parameters<typeof startReceiver>): Promise<Receiver> => {
      const r = await startReceiver(...args);
      closing.push(() => r.close());
      return r;
    };
    const subscribe = (t: TestApp, url: string) => t.request('POST', '/v2/events/subscriptions', { url }, { 'content-type': 'application/json' });
    const attemptsOf = async (t: TestApp, id: string) => (json(await t.request('GET', `/v2/events/subscriptions/${id}`)).attempts as { status: number | null; error: string | null }[]);

    it('a receiver on a loopback, link-local, private, unique-local or unspecified address, or a name resolving to one, is refused with a SCIM 400', async () => {
      // No allow list, the system's resolver (it answers localhost from the hosts file); no delivery.
      const t = await open({ config: { allowReceivers: [] } });
      const refused: [string, RegExp][] = [
        ['https://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a link-local address/],
        ['https://10.0.0.1/events', /is a private address/],
        ['https://172.16.0.1/events', /is a private address/],
        ['https://192.168.1.1/events', /is a private address/],
        ['https://100.64.0.1/events', /is a private address/],
        ['https://[fd00::1]/events', /fd00::1 is a unique-local address/],
        ['https://[fe80::1]/events', /fe80::1 is a link-local address/],
        ['https://0.0.0.0/events', /0\.0\.0\.0 is an unspecified address/],
        ['https://[::]/events', /:: is an unspecified address/],
        ['https://127.0.0.1:8443/events', /127\.0\.0\.1 is a loopback address/],
        ['http://127.0.0.1:6379/', /127\.0\.0\.1 is a loopback address/],
        ['http://[::1]:22/', /::1 is a loopback address/],
        ['https://[::ffff:169.254.169.254]/', /is a link-local address/],
        ['https://[64:ff9b::a00:1]/', /is a private address/],
        ['https://localhost:8443/events', /localhost resolves to a loopback address/],
        ['http://localhost:2375/', /localhost resolves to a loopback address/],
      ];
      for (const [url, message] of refused) {
        const r = await subscribe(t, url);
        assert.equal(r.statusCode, 400, url);
        const body = json(r);
        assert.deepEqual(body.schemas, [SCIM_ERROR], url);
        assert.equal(body.scimType, 'invalidValue', url);
        assert.match(String(body.detail), message, url);
        assert.match(String(body.detail), /ALLOW_RECEIVERS/, url);
      }
      assert.deepEqual(json(await t.request('GET', '/v2/events/subscriptions')).subscriptions, [], 'nothing was created');
      // A public address is a receiver like any other (no delivery runs here: nothing connects).
      assert.equal((await subscribe(t, 'https://203.0.113.7/events')).statusCode, 201);
    });

    it('ALLOW_RECEIVERS=127.0.0.1 admits a loopback receiver, which gets the SETs; one naming another port does not', async () => {
      const other = loadConfig({}, { ALLOW_RECEIVERS: '127.0.0.1:1' }).allowReceivers;
      const strict = await open({ config: { allowReceivers: other } });
      const rx = await receiver();
      const refused = await subscribe(strict, rx.url);
      assert.equal(refused.statusCode, 400, 'allowed on port 1 only');
      assert.match(String(json(refused).detail), /127\.0\.0\.1 is a loopback address/);

      const t = await open({ config: { allowReceivers: loadConfig({}, { ALLOW_RECEIVERS: '127.0.0.1' }).allowReceivers }, deps: { delivery: FAST } });
      const created = await subscribe(t, rx.url);
      assert.equal(created.statusCode, 201, created.body);
      assert.equal((await t.request('POST', '/v2/scim/Users', { userName: 'a@acme.example' })).statusCode, 201);
      await rx.waitFor(1);
      await until(async () => (await attemptsOf(t, String(json(created).id))).length === 1, 'the delivery logged');
      assert.deepEqual((await attemptsOf(t, String(json(created).id))).map((a) => [a.status, a.error]), [[202, null]]);
    });

    it('a name checked at creation that resolves to a forbidden address at delivery is refused before any connection; allowed, the connection goes to the address checked', async () => {
      const wire = await tripwire();
      closing.push(() => wire.close());
      // The name resolves to a public address when the subscription is made, to loopback later.
      let answer: ResolvedAddress[] = [{ address: '203.0.113.7', family: 4 }];
      const asked: string[] = [];
      const resolve = async (hostname: string) => {
        asked.push(hostname);
        if (hostname !== 'hooks.test') throw Object.assign(new Error(`no such name ${hostname}`), { code: 'ENOTFOUND' });
        return answer;
      };
      const url = `https://hooks.test:${wire.port}/events`;
      const t = await open({ config: { allowReceivers: [] }, deps: { delivery: FAST, resolve } });
      const created = await subscribe(t, url);
      assert.equal(created.statusCode, 201, created.body);
      const id = String(json(created).id);
      answer = [{ address: '127.0.0.1', family: 4 }];
      assert.equal((await t.request('POST', '/v2/scim/Users', { userName: 'a@acme.example' })).statusCode, 201);
      await until(async () => (await attemptsOf(t, id)).length >= 2, 'two delivery attempts');
      assert.ok((await attemptsOf(t, id)).every((a) => a.status === null && a.error === 'forbidden-address'), 'each attempt refused for its address');
      assert.equal(wire.connections(), 0, 'no connection was made');
      assert.ok(asked.length >= 3 && asked.every((h) => h === 'hooks.test'), 'resolved at creation and again for each attempt');

      // The same name, allowed: the connection reaches the checked address (the system cannot
      // resolve hooks.test, so only the pinned lookup can have led it there) and fails its TLS.
      const allowed = await open({ config: { allowReceivers: loadConfig({}, { ALLOW_RECEIVERS: '127.0.0.1' }).allowReceivers }, deps: { delivery: FAST, resolve } });
      const sub = json(await subscribe(allowed, url));
      assert.equal((await allowed.request('POST', '/v2/scim/Users', { userName: 'a@acme.example' })).statusCode, 201);
      await until(async () => (await attemptsOf(allowed, String(sub.id))).length >= 1, 'a delivery attempt');
      assert.ok(wire.connections() >= 1, 'the delivery connected to 127.0.0.1');
      assert.equal((await attemptsOf(allowed, String(sub.id)))[0]!.error, 'tls');
    });

    it('the attempt log keeps a category: never the body of an answer, nor the network error', async () => {
      const t = await open({ deps: { delivery: FAST } });
      const secret = 'internal-service-banner redis_version:7.2';
      const failing = await receiver(() => ({ status: 500, body: secret }));
      const refusing = await receiver(() => ({ status: 400, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ err: 'invalid_key', description: secret }) }));
      const unlisted = await receiver(() => ({ status: 400, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ err: secret }) }));
      const ids: string[] = [];
      for (const rx of [failing, refusing, unlisted]) ids.push(String(json(await subscribe(t, rx.url)).id));
      const closed = await receiver();
      ids.push(String(json(await subscribe(t, closed.url)).id));
      await closed.close();
      assert.equal((await t.request('POST', '/v2/scim/Users', { userName: 'a@acme.example' })).statusCode, 201);
      await until(async () => (await Promise.all(ids.map((id) => attemptsOf(t, id)))).every((a) => a.length >= 1), 'every subscription tried');
      const [fail, refuse, other, down] = await Promise.all(ids.map((id) => attemptsOf(t, id)));
      assert.deepEqual([fail![0]!.status, fail![0]!.error], [500, 'http 500']);
      assert.deepEqual([refuse![0]!.status, refuse![0]!.error], [400, 'http 400 invalid_key'], 'an RFC 8935 error keeps its registered code');
      assert.deepEqual([other![0]!.status, other![0]!.error], [400, 'http 400 refused'], 'an unregistered code is not kept');
      assert.deepEqual([down![0]!.status, down![0]!.error], [null, 'refused']);
      const views = await Promise.all(ids.map(async (id) => (await t.request('GET', `/v2/events/subscriptions/${id}`)).body));
      for (const view of views) assert.doesNotMatch(view, /redis_version|internal-service|ECONNREFUSED|connect /);
    });
  });
}
