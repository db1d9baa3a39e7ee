/**
 * How long a connection may take over what: without deadlines a client that
 * sends its headers and then drips its body one byte at a time holds a socket and a parser for
 * ever, and a few thousand such clients hold the server. These are the node:http server's own
 * timers, set through Fastify's options; the app's dependencies may shorten them (tests). A
 * request that misses `requestTimeout` gets 408 and its connection is closed by Node.
 */
import type { ServerOptions } from 'node:http';

export interface Deadlines {
  /** The whole request, headers and body, must arrive within this (ms). Bodies are at most 1 MiB (a Bulk's 4 MiB). It stops counting once the request is read: a long Bulk is not cut by it. */
  readonly requestTimeout: number;
  /** The headers must arrive within this (ms); at most requestTimeout. */
  readonly headersTimeout: number;
  /** An idle keep-alive connection is closed after this (ms). */
  readonly keepAliveTimeout: number;
  /** A socket with no traffic either way is closed after this (ms); a streamed body is traffic. Lifted while a synchronous Bulk runs (scim-bulk.ts). */
  readonly idleTimeout: number;
}

export const DEFAULT_DEADLINES: Deadlines = Object.freeze({
  requestTimeout: 30_000,
  headersTimeout: 10_000,
  keepAliveTimeout: 5_000,
  idleTimeout: 60_000,
});

/** Fastify server options enforcing `deadlines`. */
export function deadlineOptions(deadlines: Deadlines): {
  requestTimeout: number;
  keepAliveTimeout: number;
  connectionTimeout: number;
  http: ServerOptions;
} {
  const headersTimeout = Math.min(deadlines.headersTimeout, deadlines.requestTimeout);
  return {
    requestTimeout: deadlines.requestTimeout,
    keepAliveTimeout: deadlines.keepAliveTimeout,
    connectionTimeout: deadlines.idleTimeout,
    http: {
      headersTimeout,
      // Node checks the two deadlines above on this period (30 s by default, which would let a
      // 30 s deadline stretch to a minute).
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersTimeout / 4))),
    },
  };
}
