/**
 * The client against servers that page wrongly, on 127.0.0.1 (the pattern of retry.test.ts): a
 * list walk stops with a PagingError instead of looping for ever when a cursor comes back (RFC
 * 9865) or an index page adds nothing (RFC 7644 3.4.2.4: a server ignoring startIndex); the feed
 * follower waits between empty pages even when one says `more`; a DELETE retried after a network
 * error that answers 404 is a RollcallError 404, as the client README says (the first attempt may
 * have deleted it).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { PagingError, Rollcall, RollcallError } from '../../packages/client/src/index.ts';

type Script = (url: URL, index: number, response: ServerResponse, method: string) => void;

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function scripted(script: Script): Promise<{ origin: string; seen: URL[] }> {
  const seen: URL[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on('end', () => {
      const url = new URL(request.url!, 'http://127.0.0.1');
      seen.push(url);
      script(url, seen.length - 1, response, request.method!);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const json = (response: ServerResponse, status: number, body: unknown) => response.writeHead(status, { 'content-type': 'application/scim+json' }).end(JSON.stringify(body));
const user = (id: string) => ({ schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], id, userName: `${id}@acme.example` });
const collect = async <T>(walk: AsyncIterable<T>): Promise<{ items: T[]; error: unknown }> => {
  const items: T[] = [];
  try {
    for await (const item of walk) items.push(item);
    return { items, error: undefined };
  } catch (error) {
    return { items, error };
  }
};

describe('client paging guards', () => {
  it('RFC 9865: a nextCursor the server already gave stops the walk with a PagingError naming it, after the pages before it', async () => {
    const { origin, seen } = await scripted((url, _i, res) => {
      const cursor = url.searchParams.get('cursor');
      if (seen.length > 20) return json(res, 500, {});
      // "" -> A -> B -> A again.
      const next = cursor === '' ? 'A' : cursor === 'A' ? 'B' : 'A';
      json(res, 200, { schemas: [LIST], totalResults: 99, itemsPerPage: 1, Resources: [user(`U${seen.length}`)], nextCursor: next });
    });
    const { items, error } = await collect(new Rollcall({ baseUrl: origin, token: 't' }).users.iterate());
    assert.ok(error instanceof PagingError, String(error));
    assert.match(error.message, /nextCursor "A" again/);
    assert.deepEqual(items.map((u) => u.id), ['U1', 'U2', 'U3']);
    assert.equal(seen.length, 3);
  });

  it('RFC 7644 3.4.2.4: a server that ignores startIndex (same first page, no totalResults) stops the walk with a PagingError', async () => {
    const { origin, seen } = await scripted((_url, _i, res) => {
      if (seen.length > 20) return json(res, 500, {});
      json(res, 200, { schemas: [LIST], startIndex: 1, itemsPerPage: 2, Resources: [user('U1'), user('U2')] });
    });
    const { items, error } = await collect(new Rollcall({ baseUrl: origin, token: 't' }).users.iterate({ count: 2 }));
    assert.ok(error instanceof PagingError, String(error));
    assert.match(error.message, /startIndex 3.*startIndex 1/);
    assert.deepEqual(items.map((u) => u.id), ['U1', 'U2']);
    assert.equal(seen.length, 2);
  });

  it('an index page without startIndex that only repeats the previous page stops the walk with a PagingError', async () => {
    const { origin, seen } = await scripted((url, _i, res) => {
      if (seen.length > 20) return json(res, 500, {});
      if (url.searchParams.get('cursor') === '') return json(res, 200, { schemas: [LIST], startIndex: 1, itemsPerPage: 2, Resources: [user('U1'), user('U2')] });
      json(res, 200, { schemas: [LIST], itemsPerPage: 2, Resources: [user('U1'), user('U2')] });
    });
    const { items, error } = await collect(new Rollcall({ baseUrl: origin, token: 't' }).users.iterate({ count: 2 }));
    assert.ok(error instanceof PagingError, String(error));
    assert.match(error.message, /added nothing/);
    assert.deepEqual(items.map((u) => u.id), ['U1', 'U2']);
  });

  it('feed follow: after an empty page that says more, with a next that does not advance, it waits pollIntervalMs before asking again', async () => {
    const at: number[] = [];
    const { origin } = await scripted((_url, _i, res) => {
      at.push(Date.now());
      json(res, 200, { events: [], next: 0, more: true });
    });
    const stop = new AbortController();
    const follow = collect(new Rollcall({ baseUrl: origin, token: 't' }).events.follow({ signal: stop.signal, pollIntervalMs: 100 }));
    while (at.length < 3) await new Promise((r) => setTimeout(r, 10));
    stop.abort();
    const { items, error } = await follow;
    assert.deepEqual([items, error], [[], undefined]);
    // A lower bound the sleep guarantees, less a few ms of clock skew between timers and Date.now (as retry.test.ts checks Retry-After); a spinning follower asks again at once.
    for (let i = 1; i < 3; i++) assert.ok(at[i]! - at[i - 1]! >= 90, `asked again after ${at[i]! - at[i - 1]!} ms`);
  });

  it('a DELETE whose first attempt died on the network and whose retry answers 404 is a RollcallError 404 (the first attempt may have deleted it: README)', async () => {
    const { origin, seen } = await scripted((_url, i, res) => {
      if (i === 0) return res.socket!.destroy();
      json(res, 404, { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '404', detail: 'no such user' });
    });
    const error = await new Rollcall({ baseUrl: origin, token: 't', retries: { retries: 2, baseDelayMs: 1, maxDelayMs: 2 } }).users.delete('U1').catch((e: unknown) => e);
    assert.ok(error instanceof RollcallError, String(error));
    assert.equal(error.status, 404);
    assert.equal(seen.length, 2);
  });
});
