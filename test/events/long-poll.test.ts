/**
 * RFC 8936 long polls over a real connection (issue 27 item 12): a poll with
 * `returnImmediately: false` and nothing pending waits until an event arrives and answers with
 * it; a client that goes away ends the wait (its socket's close), and a keep-alive connection's
 * polls leave no listener behind. Node marks a request destroyed once its body is read, so only
 * a real socket (not inject) shows whether the wait holds.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { Agent, request as httpRequest } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createTestApp, json } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import { TableReads } from '../support/storage-spy.ts';
import { until } from '../support/wait.ts';

for (const engine of engines) {
  describe(`long polls over a real connection (${engine.name})`, () => {
    let t: TestApp;
    let reads: TableReads;
    let base: string;
    const sockets: Socket[] = [];
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    beforeEach(async () => {
      reads = new TableReads('events');
      t = await createTestApp({ engine, wrapStorage: (s) => reads.wrap(s) });
      t.app.server.on('connection', (s: Socket) => sockets.push(s));
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    });
    afterEach(async () => {
      agent.destroy();
      sockets.splice(0);
      await t.close();
    });

    const subscribe = async () => {
      const r = await t.request('POST', '/v2/events/subscriptions', { method: 'poll', events: ['create'] }, { 'content-type': 'application/json' });
      assert.equal(r.statusCode, 201, r.body);
      return json(r) as { id: string; pollToken: string };
    };
    /** A poll over HTTP; answers the client request (to abort it) and the parsed answer. */
    const pollOverHttp = (token: string, body: Record<string, unknown>) => {
      const payload = JSON.stringify(body);
      const req = httpRequest(`${base}/v2/events/poll`, {
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      });
      const answer = (async () => {
        const [response] = (await once(req, 'response')) as [import('node:http').IncomingMessage];
        const chunks: Buffer[] = [];
        for await (const chunk of response) chunks.push(chunk as Buffer);
        return { status: response.statusCode, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as { sets: Record<string, string>; moreAvailable: boolean } };
      })();
      req.end(payload);
      return { req, answer };
    };

    it('RFC 8936 2.4: a poll with nothing pending waits, and answers with the event written after it was sent', async () => {
      const sub = await subscribe();
      reads.reset();
      const { answer } = pollOverHttp(sub.pollToken, { maxEvents: 10, returnImmediately: false });
      // The poll has read the feed and found nothing: only now is the event written.
      await until(() => reads.count >= 1, 'the poll read the feed');
      const created = await t.request('POST', '/v2/scim/Users', { userName: 'late@acme.example' });
      assert.equal(created.statusCode, 201);
      const { status, body } = await answer;
      assert.equal(status, 200);
      assert.deepEqual(Object.keys(body.sets), [`${t.team.id}.1`], 'the event written after the poll was sent is in its answer');
      assert.ok(reads.count >= 2, 'it looked at the feed again while it waited');
    });

    it('a client going away ends the wait: the feed is not read again, and no socket listener is left behind', async () => {
      const sub = await subscribe();
      // Polls on one keep-alive connection: each removes its listener from the socket when it ends.
      for (let i = 0; i < 3; i++) assert.equal((await pollOverHttp(sub.pollToken, { returnImmediately: true }).answer).status, 200);
      assert.equal(sockets.length, 1, 'one keep-alive connection');
      const baseline = sockets[0]!.listenerCount('close');
      for (let i = 0; i < 5; i++) assert.equal((await pollOverHttp(sub.pollToken, { returnImmediately: true }).answer).status, 200);
      assert.equal(sockets[0]!.listenerCount('close'), baseline, 'polls leave no close listener on a kept-alive socket');

      reads.reset();
      const { req, answer } = pollOverHttp(sub.pollToken, { maxEvents: 10, returnImmediately: false });
      answer.catch(() => {});
      await until(() => reads.count >= 2, 'the poll is waiting (read the feed twice)');
      const serverSide = sockets.at(-1)!;
      const closed = once(serverSide, 'close');
      req.destroy();
      await closed;
      const seen = reads.count;
      // A waiting poll reads the feed every 100 ms: several of its steps pass with no read.
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(reads.count, seen, 'the poll stopped when its client left');
    });
  });
}
