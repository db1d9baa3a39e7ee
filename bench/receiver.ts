/**
 * A push receiver for the benchmarks (RFC 8935): node:http on 127.0.0.1 answering 202 to every
 * POST at once and counting the SETs it got. `npm run bench` points one push subscription at it
 * so every scenario pays what a team with a live subscription pays (the feed, the delivery
 * worker's polling, leases and attempt log); the events benchmark uses it to time delivery.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Receiver {
  /** Where the subscription points: `http://127.0.0.1:PORT/events` (loopback http is allowed). */
  readonly url: string;
  /** SETs received so far. */
  received(): number;
  /** Resolves once `n` SETs were received in all. */
  waitFor(n: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  let received = 0;
  const waiters: { n: number; resolve: () => void }[] = [];
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(202).end();
      received += 1;
      for (let i = waiters.length - 1; i >= 0; i--) {
        if (received >= waiters[i]!.n) waiters.splice(i, 1)[0]!.resolve();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
    received: () => received,
    waitFor: (n) => (received >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
