/**
 * A local SET receiver for the events tests (RFC 8935): an HTTP server on 127.0.0.1 (port 0)
 * that records every request (content type, body) and answers as the test says: 202 by
 * default, or a status, a redirect, or never (hanging, until the test releases it). `verify` checks every SET's signature
 * against a JWKS with jose.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, jwtVerify } from 'jose';
import type { JSONWebKeySet, JWTPayload } from 'jose';

export interface Received {
  readonly contentType: string | undefined;
  readonly body: string;
  /** Every request header (lower-cased names): a webhook's `webhook-id`, `webhook-timestamp`, `webhook-signature`. */
  readonly headers: IncomingHttpHeaders;
}

export type Answer = (received: Received, index: number) => { status: number; headers?: Record<string, string>; body?: string; delayMs?: number } | 'hang';

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  answer: Answer;
  /** The most requests that were in flight at once. */
  readonly maxInFlight: number;
  /** Requests in flight now (received, not yet answered or closed). */
  readonly inFlight: number;
  /** Stops listening (the port stays reserved for `reopen`). */
  close(): Promise<void>;
  /** Listens again on the same port. */
  reopen(): Promise<void>;
  /** Resolves when `n` requests have arrived (or rejects after `ms`). */
  waitFor(n: number, ms?: number): Promise<void>;
  /** Requests answered 'hang' and still held. */
  readonly held: number;
  /** Answers every held request with `status` (202 by default). */
  release(status?: number): void;
}

export async function startReceiver(answer: Answer = () => ({ status: 202 })): Promise<Receiver> {
  const received: Received[] = [];
  const hanging = new Set<ServerResponse>();
  let server: Server;
  let port = 0;
  const state = { answer, inFlight: 0, maxInFlight: 0 };
  const handler = (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    state.inFlight += 1;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    response.once('close', () => (state.inFlight -= 1));
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const r: Received = { contentType: request.headers['content-type'], body: Buffer.concat(chunks).toString('utf8'), headers: request.headers };
      received.push(r);
      const a = state.answer(r, received.length - 1);
      if (a === 'hang') {
        hanging.add(response);
        return;
      }
      const answerNow = () => {
        if (response.destroyed) return;
        response.writeHead(a.status, a.headers ?? {});
        response.end(a.body ?? '');
      };
      if (a.delayMs) setTimeout(answerNow, a.delayMs);
      else answerNow();
    });
  };
  const listen = async () => {
    server = createServer(handler);
    server.keepAliveTimeout = 100;
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  };
  await listen();
  return {
    get url() {
      return `http://127.0.0.1:${port}/events`;
    },
    received,
    get answer() {
      return state.answer;
    },
    set answer(a: Answer) {
      state.answer = a;
    },
    get maxInFlight() {
      return state.maxInFlight;
    },
    get inFlight() {
      return state.inFlight;
    },
    async close() {
      for (const r of hanging) r.destroy();
      hanging.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    reopen: listen,
    get held() {
      return [...hanging].filter((r) => !r.destroyed).length;
    },
    release(status = 202) {
      for (const r of hanging) {
        if (r.destroyed) continue;
        r.writeHead(status);
        r.end();
      }
      hanging.clear();
    },
    async waitFor(n: number, ms = 15_000) {
      const deadline = Date.now() + ms;
      while (received.length < n) {
        if (Date.now() > deadline) throw new Error(`receiver got ${received.length} of ${n} requests within ${ms} ms`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
  };
}

/** Verifies every SET against `jwks` (ES256) and answers their payloads in arrival order. */
export async function verifyAll(received: readonly Received[], jwks: JSONWebKeySet, expect: { issuer: string; audience: string }): Promise<JWTPayload[]> {
  const keys = createLocalJWKSet(jwks);
  const payloads: JWTPayload[] = [];
  for (const r of received) {
    if (r.contentType !== 'application/secevent+jwt') throw new Error(`content type ${String(r.contentType)}`);
    const { payload, protectedHeader } = await jwtVerify(r.body, keys, { issuer: expect.issuer, audience: expect.audience, algorithms: ['ES256'], typ: 'secevent+jwt' });
    if (!protectedHeader.kid) throw new Error('no kid');
    payloads.push(payload);
  }
  return payloads;
}
