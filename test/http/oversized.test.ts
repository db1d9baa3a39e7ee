/**
 * Issue 9 item 8 (DESIGN.md section 4 "limits"): a client that sends a 2 MiB body to any
 * endpoint gets the 413 in the protocol's shape (RFC 7644 3.12 on SCIM routes, RFC 6749 5.2 on
 * OAuth routes, an HTML page on the sign-in form), not a connection reset or a broken pipe, and
 * the server stays healthy. Real clients against app.listen on 127.0.0.1 port 0: fetch (undici)
 * and a raw node:net socket that writes the whole body, then reads the answer. The body is
 * written in small paced chunks, as over a real network: on loopback one large write lands in
 * the kernel's buffers before the server can answer, which hides the failure.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { createTestApp } from '../support/app.ts';
import type { TestApp } from '../support/app.ts';

const SIZE = 2 * 1024 * 1024;
const CHUNK = 32 * 1024;

interface Target {
  readonly path: string;
  readonly type: string;
  readonly check: (status: number, contentType: string, body: string) => void;
}

const scimError = (status: number, contentType: string, body: string) => {
  assert.equal(status, 413, body);
  assert.match(contentType, /^application\/scim\+json/);
  const parsed = JSON.parse(body) as Record<string, unknown>;
  assert.deepEqual(parsed.schemas, ['urn:ietf:params:scim:api:messages:2.0:Error']);
  assert.equal(parsed.status, '413');
};
const oauthError = (status: number, contentType: string, body: string) => {
  assert.equal(status, 413, body);
  assert.match(contentType, /^application\/json/);
  assert.equal((JSON.parse(body) as Record<string, unknown>).error, 'invalid_request');
};
const htmlPage = (status: number, contentType: string, body: string) => {
  assert.equal(status, 413, body.slice(0, 200));
  assert.match(contentType, /^text\/html/);
};

const TARGETS: readonly Target[] = [
  { path: '/v2/scim/Users', type: 'application/scim+json', check: scimError },
  { path: '/scim/Groups', type: 'application/json', check: scimError },
  { path: '/oauth/token', type: 'application/x-www-form-urlencoded', check: oauthError },
  { path: '/oauth/authorize', type: 'application/x-www-form-urlencoded', check: htmlPage },
];

/** Writes `size` bytes in paced chunks on a raw socket, then reads the whole answer. */
function rawPost(port: number, target: Target, token: string): Promise<{ status: number; contentType: string; body: string; written: number; writeError?: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    let writeError: string | undefined;
    let written = 0;
    socket.on('data', (d: Buffer) => received.push(d));
    socket.on('error', (e) => {
      writeError ??= e.message;
    });
    socket.on('close', () => {
      const text = Buffer.concat(received).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) {
        reject(new Error(`no answer (${writeError ?? 'closed'})`));
        return;
      }
      const head = text.slice(0, split);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
      const contentType = /\r\ncontent-type: ([^\r\n]*)/i.exec(head)?.[1] ?? '';
      let body = Buffer.concat(received).subarray(Buffer.byteLength(head, 'latin1') + 4).toString('utf8');
      if (/\r\ntransfer-encoding: chunked/i.test(head)) body = body.replace(/^[0-9a-f]+\r\n|\r\n[0-9a-f]+\r\n/gi, '');
      resolve({ status, contentType, body, written, ...(writeError ? { writeError } : {}) });
    });
    socket.once('connect', async () => {
      socket.write(
        `POST ${target.path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: ${target.type}\r\nauthorization: Bearer ${token}\r\ncontent-length: ${SIZE}\r\n\r\n`,
      );
      const chunk = Buffer.alloc(CHUNK, 'a');
      while (written < SIZE && writeError === undefined && !socket.destroyed) {
        const ok = await new Promise<boolean>((done) => socket.write(chunk, (error) => done(!error)));
        if (ok) written += CHUNK;
        await sleep(1);
      }
      if (!socket.destroyed) socket.end();
    });
  });
}

/** A paced streaming body for fetch (undici sends it chunked). */
function pacedBody(): ReadableStream<Uint8Array> {
  let sent = 0;
  const chunk = new Uint8Array(CHUNK).fill(97);
  return new ReadableStream({
    async pull(controller) {
      if (sent >= SIZE) {
        controller.close();
        return;
      }
      await sleep(1);
      sent += CHUNK;
      controller.enqueue(chunk);
    },
  });
}

describe('oversized bodies over real sockets', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await createTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });
  after(() => t.close());

  for (const target of TARGETS) {
    it(`a raw socket writing 2 MiB to ${target.path} writes it all, then reads the 413 in the route's shape`, async () => {
      const answer = await rawPost(port, target, t.token);
      assert.equal(answer.writeError, undefined, `the client could not write its body: ${answer.writeError}`);
      assert.equal(answer.written, SIZE, 'the server closed the connection before the client had sent its body');
      target.check(answer.status, answer.contentType, answer.body);
    });

    it(`fetch (undici) sending 2 MiB to ${target.path} (Content-Length, then chunked) gets the 413 in the route's shape`, async () => {
      const whole = await fetch(`http://127.0.0.1:${port}${target.path}`, {
        method: 'POST',
        headers: { 'content-type': target.type, authorization: `Bearer ${t.token}` },
        body: new Uint8Array(SIZE).fill(97),
      });
      target.check(whole.status, whole.headers.get('content-type') ?? '', await whole.text());
      const streamed = await fetch(`http://127.0.0.1:${port}${target.path}`, {
        method: 'POST',
        headers: { 'content-type': target.type, authorization: `Bearer ${t.token}` },
        body: pacedBody(),
        duplex: 'half',
      } as RequestInit);
      target.check(streamed.status, streamed.headers.get('content-type') ?? '', await streamed.text());
    });
  }

  it('the server stays healthy: after every oversized request a normal request on a new connection succeeds', async () => {
    await Promise.all(TARGETS.map((target) => rawPost(port, target, t.token).catch(() => undefined)));
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    assert.equal(health.status, 200);
    const created = await fetch(`http://127.0.0.1:${port}/v2/scim/Users`, {
      method: 'POST',
      headers: { 'content-type': 'application/scim+json', authorization: `Bearer ${t.token}` },
      body: JSON.stringify({ userName: 'after-oversized@acme.example' }),
    });
    assert.equal(created.status, 201);
  });
});
