/**
 * Issue 13 item 10: request and connection deadlines. A client that sends its headers and then
 * drips its body (or never finishes its headers) is cut off once the deadline passes, with 408
 * or a closed socket, while other requests are served meanwhile. Real sockets on loopback.
 *
 * No assertion reads a clock (issue 27 item 14): the server is the one that closes the socket
 * (the client never gives up before its 30 s safety net), long before the body or the headers
 * could have ended (it counts what it sent), and /healthz is answered before that close, so
 * while the slow request is in progress. The deadlines are a few seconds, so that a stall of the
 * machine cannot let one pass before /healthz is answered.
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

const REQUEST_DEADLINE = 3_000;
const HEADERS_DEADLINE = 2_000;
const BODY_LENGTH = 2_000;

/**
 * Opens a socket, sends `head`, then one piece (a body byte, or a header line) every 40 ms;
 * resolves when the server closes it, with how many pieces were sent and what came back.
 */
function slowClient(port: number, head: string, drip: boolean): Promise<{ pieces: number; answer: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    let pieces = 0;
    let timer: NodeJS.Timeout | undefined;
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the slow connection open for 30 s; answer so far: ${JSON.stringify(answer)}`));
    }, 30_000);
    socket.on('connect', () => {
      socket.write(head);
      timer = setInterval(() => {
        if (!socket.destroyed && socket.writable) {
          socket.write(drip ? 'x' : 'X-Slow: y\r\n');
          pieces++;
        }
      }, 40);
    });
    socket.on('data', (d) => (answer += d.toString()));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ pieces, answer });
    });
  });
}

describe('request and connection deadlines (issue 13 item 10)', () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let port: number;
  before(async () => {
    database = await engines[0]!.open();
    app = await buildApp({ config: TEST_CONFIG, storage: database.storage, deadlines: { requestTimeout: REQUEST_DEADLINE, headersTimeout: HEADERS_DEADLINE } });
    await app.listen({ host: '127.0.0.1', port: 0 });
    port = (app.server.address() as AddressInfo).port;
  });
  after(async () => {
    await app.close();
    await database.dispose();
  });

  it('a body dripped byte by byte is cut off (408) within the deadline, and /healthz is served meanwhile', async () => {
    const head = `POST /oauth/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${BODY_LENGTH}\r\n\r\ngrant_type=client_credentials&client_id=`;
    let closed = false;
    const slow = slowClient(port, head, true).finally(() => (closed = true));
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    assert.equal(health.status, 200);
    assert.equal(closed, false, '/healthz was answered while the slow body was still dripping');
    const { pieces, answer } = await slow;
    const bodyInHead = head.length - head.indexOf('\r\n\r\n') - 4;
    assert.ok(bodyInHead + pieces < BODY_LENGTH, `the server closed after ${bodyInHead + pieces} bytes of the body, before it could end`);
    assert.ok(answer === '' || answer.startsWith('HTTP/1.1 408'), answer);
  });

  it('headers that never end are cut off within the headers deadline', async () => {
    const { pieces, answer } = await slowClient(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n', false);
    // The headers never end: the server closed the socket (the client would have gone on for ever).
    assert.ok(pieces >= 1, `the server closed after ${pieces} header lines`);
    assert.ok(answer === '' || answer.startsWith('HTTP/1.1 408'), answer);
  });
});
