/**
 * Issue 13 item 10: request and connection deadlines. A client that sends its headers and then
 * drips its body (or never finishes its headers) is cut off once the deadline passes, with 408
 * or a closed socket, while other requests are served meanwhile. Real sockets on loopback.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.ts';
import { TEST_CONFIG } from '../support/app.ts';
import { engines } from '../support/engines.ts';
import type { TestDatabase } from '../support/engines.ts';

const REQUEST_DEADLINE = 600;

/** Opens a socket, sends `head`, then one byte of `drip` every 40 ms; resolves when the server closes it. */
function slowClient(port: number, head: string, drip: boolean): Promise<{ closedAfter: number; answer: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    let timer: NodeJS.Timeout | undefined;
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the slow connection open for 5 s; answer so far: ${JSON.stringify(answer)}`));
    }, 5_000);
    socket.on('connect', () => {
      socket.write(head);
      timer = setInterval(() => {
        if (!socket.destroyed && socket.writable) socket.write(drip ? 'x' : 'X-Slow: y\r\n');
      }, 40);
    });
    socket.on('data', (d) => (answer += d.toString()));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ closedAfter: performance.now() - started, answer });
    });
  });
}

describe('request and connection deadlines (issue 13 item 10)', () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let port: number;
  before(async () => {
    database = await engines[0]!.open();
    app = await buildApp({ config: TEST_CONFIG, storage: database.storage, deadlines: { requestTimeout: REQUEST_DEADLINE, headersTimeout: 400 } });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;
  });
  after(async () => {
    await app.close();
    await database.dispose();
  });

  it('a body dripped byte by byte is cut off (408) within the deadline, and /healthz is served meanwhile', async () => {
    const head = 'POST /oauth/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 2000\r\n\r\ngrant_type=client_credentials&client_id=';
    const slow = slowClient(port, head, true);
    await new Promise((r) => setTimeout(r, 100));
    const t0 = performance.now();
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    assert.equal(health.status, 200);
    assert.ok(performance.now() - t0 < 200, 'other requests are served while the slow body drips');
    const { closedAfter, answer } = await slow;
    assert.ok(closedAfter < REQUEST_DEADLINE + 1_000, `closed after ${closedAfter.toFixed(0)} ms`);
    assert.ok(answer === '' || answer.startsWith('HTTP/1.1 408'), answer);
  });

  it('headers that never end are cut off within the headers deadline', async () => {
    const { closedAfter, answer } = await slowClient(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n', false);
    assert.ok(closedAfter < REQUEST_DEADLINE + 1_000, `closed after ${closedAfter.toFixed(0)} ms`);
    assert.ok(answer === '' || answer.startsWith('HTTP/1.1 408'), answer);
  });
});
