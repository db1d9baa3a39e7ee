/**
 * The client's retries (issue 34 item 2), against a small HTTP server on 127.0.0.1 that answers
 * as each test scripts it: 429 / 503 are retried after Retry-After (seconds or an HTTP date),
 * with a capped backoff when there is none, up to the attempts allowed; a network error is
 * retried only for requests safe to repeat (never a POST or PATCH that may have been applied).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { Rollcall, RollcallError, retryAfterMs } from '../../packages/client/src/index.ts';

interface Seen {
  readonly method: string;
  readonly url: string;
  readonly at: number;
  readonly body: string;
}
type Script = (seen: Seen, index: number, response: ServerResponse) => void;

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function scripted(script: Script): Promise<{ origin: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const s = { method: request.method!, url: request.url!, at: Date.now(), body: Buffer.concat(chunks).toString() };
      seen.push(s);
      script(s, seen.length - 1, response);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  response.writeHead(status, { 'content-type': 'application/scim+json', ...headers }).end(JSON.stringify(body));
const tooMany = { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '429', detail: 'slow down' };
const user = { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], id: 'U1', userName: 'ada@acme.example' };

describe('client retries', () => {
  it('Retry-After in seconds: a 429 is retried no sooner than asked, then the answer is returned', async () => {
    const { origin, seen } = await scripted((_s, i, res) => (i === 0 ? json(res, 429, tooMany, { 'retry-after': '1' }) : json(res, 200, user)));
    const waits: number[] = [];
    const rc = new Rollcall({ baseUrl: origin, token: 't', sleep: async (ms) => void waits.push(ms) });
    assert.equal((await rc.users.get('U1')).userName, 'ada@acme.example');
    assert.equal(seen.length, 2);
    // The client waited exactly what the server asked, once, before the second request.
    assert.deepEqual(waits, [1000]);
  });

  it('Retry-After as an HTTP date; a POST answered 503 is sent again (the server refused it, nothing was applied)', async () => {
    let until = 0;
    const { origin, seen } = await scripted((_s, i, res) => {
      if (i === 0) {
        until = (Math.floor(Date.now() / 1000) + 2) * 1000;
        return json(res, 503, { status: '503', detail: 'busy' }, { 'retry-after': new Date(until).toUTCString() });
      }
      json(res, 201, user);
    });
    const waits: number[] = [];
    let askedAt = 0;
    const rc = new Rollcall({ baseUrl: origin, token: 't', sleep: async (ms) => { askedAt = Date.now(); waits.push(ms); } });
    assert.equal((await rc.users.create({ userName: 'ada@acme.example' })).id, 'U1');
    assert.deepEqual(seen.map((s) => s.method), ['POST', 'POST']);
    assert.equal(seen[1]!.body, seen[0]!.body);
    // One wait, computed from the Retry-After date: it reaches the date from the moment the client
    // began it, and is no longer than the date's distance from the server's answer.
    assert.equal(waits.length, 1);
    assert.ok(askedAt + waits[0]! >= until, 'the wait reaches the date');
    assert.ok(waits[0]! <= until - seen[0]!.at, 'the wait ends no later than the date');
  });

  it('gives up after the attempts allowed with the last answer as a RollcallError; a Retry-After beyond the cap is not waited for', async () => {
    const { origin, seen } = await scripted((_s, _i, res) => json(res, 429, tooMany));
    const rc = new Rollcall({ baseUrl: origin, token: 't', retries: { retries: 2, baseDelayMs: 1, maxDelayMs: 5 } });
    const error = await rc.users.list().catch((e: unknown) => e);
    assert.ok(error instanceof RollcallError);
    assert.equal(error.status, 429);
    assert.equal(error.detail, 'slow down');
    assert.equal(seen.length, 3);

    const far = await scripted((_s, _i, res) => json(res, 503, { detail: 'maintenance' }, { 'retry-after': '3600' }));
    const capped = new Rollcall({ baseUrl: far.origin, token: 't', retries: { maxRetryAfterMs: 5_000 } });
    await assert.rejects(capped.users.get('U1'), (e: unknown) => e instanceof RollcallError && e.status === 503);
    assert.equal(far.seen.length, 1);

    const none = new Rollcall({ baseUrl: origin, token: 't', retries: 0 });
    seen.length = 0;
    await assert.rejects(none.users.list(), RollcallError);
    assert.equal(seen.length, 1);
  });

  it('a network error is retried for GET, PUT, DELETE and POST .search, never for POST or PATCH', async () => {
    // Every other request has its connection cut before any answer.
    const { origin, seen } = await scripted((s, i, res) => {
      if (i % 2 === 0) return res.socket!.destroy();
      json(res, s.method === 'POST' && !s.url.endsWith('.search') ? 201 : 200, s.url.endsWith('.search') ? { schemas: [], totalResults: 0, Resources: [] } : user);
    });
    const rc = new Rollcall({ baseUrl: origin, token: 't', retries: { baseDelayMs: 1 } });
    assert.equal((await rc.users.get('U1')).id, 'U1');
    assert.equal((await rc.users.replace('U1', { userName: 'ada@acme.example' })).id, 'U1');
    await rc.users.delete('U1');
    assert.equal((await rc.users.search({ filter: 'userName eq "x"' })).totalResults, 0);
    assert.equal(seen.length, 8, 'each sent twice');

    seen.length = 0;
    await assert.rejects(rc.users.create({ userName: 'ada@acme.example' }), (e: unknown) => !(e instanceof RollcallError));
    assert.equal(seen.length, 1, 'a POST that may have been applied is not repeated');
    seen.length = 0;
    // The next request (index 10) is cut too: a PATCH is not repeated either.
    await rc.users.get('U1');
    seen.length = 0;
    await assert.rejects(rc.users.patch('U1', [{ op: 'replace', path: 'title', value: 'x' }]));
    assert.equal(seen.length, 1);
  });

  it('an OAuth-shaped error answer (RFC 6749 5.2) is a RollcallError with its code and description; not retried', async () => {
    const { origin, seen } = await scripted((_s, _i, res) =>
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token"' }).end(JSON.stringify({ error: 'invalid_token', error_description: 'expired' })),
    );
    const error = await new Rollcall({ baseUrl: origin, token: 't' }).users.list().catch((e: unknown) => e);
    assert.ok(error instanceof RollcallError);
    assert.deepEqual([error.status, error.oauthError, error.detail, error.scimType], [401, 'invalid_token', 'expired', undefined]);
    assert.equal(seen.length, 1);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    assert.equal(retryAfterMs('120'), 120_000);
    assert.equal(retryAfterMs('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT')), 10_000);
    assert.equal(retryAfterMs('Wed, 21 Oct 2015 07:28:00 GMT', Date.parse('Wed, 21 Oct 2015 07:29:00 GMT')), 0);
    assert.equal(retryAfterMs('soon'), undefined);
    assert.equal(retryAfterMs(null), undefined);
  });

  it('RFC 9110 10.2.3: Retry-After is delay-seconds (digits) or an HTTP-date; anything else is ignored (undefined: the capped backoff applies), not "retry at once"', () => {
    const now = Date.parse('Wed, 21 Oct 2015 07:28:00 GMT');
    for (const junk of ['-5', '1.5', '+3', '1e3', '0x10', '', ' ', '2015-10-21T07:28:10Z', '21 Oct 2015', 'Wed, 21 Oct 2015 07:28:10', 'Wed, 32 Oct 2015 07:28:10 GMT', 'Wed, 21 Oct 2015 25:28:10 GMT', 'Wed, 21 Foo 2015 07:28:10 GMT', 'Wed,  21 Oct 2015 07:28:10 GMT']) {
      assert.equal(retryAfterMs(junk, now), undefined, JSON.stringify(junk));
    }
    assert.equal(retryAfterMs('0', now), 0);
    assert.equal(retryAfterMs(' 7 ', now), 7_000, 'surrounding whitespace is the field\'s, not the value\'s');
    // The obsolete forms a recipient must still read (RFC 9110 5.6.7): rfc850-date and asctime-date.
    assert.equal(retryAfterMs('Wednesday, 21-Oct-15 07:28:10 GMT', now), 10_000);
    assert.equal(retryAfterMs('Wed Oct 21 07:28:10 2015', now), 10_000);
    assert.equal(retryAfterMs('Wed Oct  1 07:28:10 2015', Date.parse('Thu, 01 Oct 2015 07:28:00 GMT')), 10_000);
  });
});
