/**
 * A stand-in key publisher for the key fetcher's tests (oauth/key-fetch.ts): an HTTP server on
 * 127.0.0.1 that answers by path and counts requests, public keys as issuers publish them, a
 * clock the test moves, and the loopback allowance such tests give the egress policy.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { JWK } from 'jose';
import type { AllowedReceiver } from '../../src/config.ts';

export const LOOPBACK: readonly AllowedReceiver[] = [
  { kind: 'network', address: '127.0.0.0', prefix: 8, family: 4 },
  { kind: 'network', address: '::1', prefix: 128, family: 6 },
];
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

/** A public RSA key as an issuer publishes it. */
export function rsaKey(kid: string): JWK {
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...(publicKey.export({ format: 'jwk' }) as JWK), kid, use: 'sig', alg: 'RS256' };
}
export const KEY_A = rsaKey('key-a');
export const KEY_B = rsaKey('key-b');

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface Publisher {
  readonly origin: string;
  /** Requests per path. */
  readonly hits: Map<string, number>;
  count(path: string): number;
  route(path: string, handler: Handler): void;
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 answering by path (404 for any other) and counting requests. */
export async function publisher(): Promise<Publisher> {
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
export const json =
  (body: () => unknown, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body()));
  };

/** A clock the test moves. */
export function manualClock(start = Date.parse('2026-11-26T12:00:00Z')) {
  let now = start;
  return { now: () => new Date(now), advance: (ms: number) => void (now += ms) };
}

