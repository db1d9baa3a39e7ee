/**
 * How the server's V8 heap is sized, so that its resident memory stays down under load.
 *
 * SERVER_NODE_FLAGS are the Node.js flags the server runs with (`npm start` passes them; the
 * benchmarks start Rollcall with them). V8 sizes its young generation for throughput and lets it
 * grow under load: garbage from busy requests (a client paging many users at a time) then lifts
 * the server's resident memory. A small fixed semi-space keeps it down, with no CPU cost per
 * request measurable on the throughput benchmark (docs/PERFORMANCE.md). A server started another
 * way (`rollcall serve`) gets them through NODE_OPTIONS.
 *
 * SERVER_HEAP_POLICY is applied by `rollcall serve` itself as it starts (applyServerHeapPolicy),
 * since NODE_OPTIONS refuses it. After each full collection V8 lets the old generation grow to a
 * multiple of what survived before the next one; by default up to four times, so a server
 * streaming a big group (chunks waiting for the socket outlive two young collections and are
 * promoted) carries several times its live heap in old garbage. Twice the live heap keeps that
 * peak down, with no CPU cost per request measurable on the throughput benchmark; a big group's
 * GET then costs a little more CPU (docs/PERFORMANCE.md, "Scale").
 */
import { setFlagsFromString } from 'node:v8';

export const SERVER_NODE_FLAGS: readonly string[] = Object.freeze(['--max-semi-space-size=4']);

/** The old generation's growth between two full collections: at most twice what survived. */
export const SERVER_HEAP_POLICY: readonly string[] = Object.freeze(['--heap-growing-percent=100']);

/** Sets SERVER_HEAP_POLICY for this process (V8 reads it at each full collection). */
export function applyServerHeapPolicy(): void {
  for (const flag of SERVER_HEAP_POLICY) setFlagsFromString(flag);
}
