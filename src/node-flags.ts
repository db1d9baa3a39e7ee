/**
 * How the server's V8 heap is sized, so that its resident memory stays down under load.
 *
 * SERVER_NODE_FLAGS are the Node.js flags the server runs with (`npm start` passes them; the
 * benchmarks start Rollcall with them). V8 sizes its young generation for throughput and lets it
 * grow to 16 MB per semi-space under load: garbage from busy requests (a client paging 1,000
 * users at a time) then lifts the server's resident memory by 200 MB and more. Four megabytes per
 * semi-space held the scale benchmark's peak at 258 MB instead of 385 MB, with no CPU cost per
 * request measurable on the throughput benchmark (docs/PERFORMANCE.md). A server started another
 * way (`rollcall serve`) gets them through NODE_OPTIONS.
 *
 * SERVER_HEAP_POLICY is applied by `rollcall serve` itself as it starts (applyServerHeapPolicy),
 * since NODE_OPTIONS refuses it. After each full collection V8 lets the old generation grow to a
 * multiple of what survived before the next one; by default up to four times, so a server whose
 * live heap is 40 MB carried up to 180 MB of old garbage while it streamed a 100,000-member group
 * (chunks waiting for the socket outlive two young collections and are promoted). Twice the live
 * heap held that scenario's peak at 254 MB instead of 311-323 MB, again with no CPU cost per request
 * measurable on the throughput benchmark; a big group's GET costs about 6% more CPU.
 */
import { setFlagsFromString } from 'node:v8';

export const SERVER_NODE_FLAGS: readonly string[] = Object.freeze(['--max-semi-space-size=4']);

/** The old generation's growth between two full collections: at most twice what survived. */
export const SERVER_HEAP_POLICY: readonly string[] = Object.freeze(['--heap-growing-percent=100']);

/** Sets SERVER_HEAP_POLICY for this process (V8 reads it at each full collection). */
export function applyServerHeapPolicy(): void {
  for (const flag of SERVER_HEAP_POLICY) setFlagsFromString(flag);
}
