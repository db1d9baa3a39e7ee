/**
 * The Node.js flags the server runs with (`npm start` passes them; the benchmarks start Rollcall
 * with them). V8 sizes its young generation for throughput and lets it grow to 16 MB per
 * semi-space under load: garbage from busy requests (a client paging 1,000 users at a time) then
 * lifts the server's resident memory by 200 MB and more. Four megabytes per semi-space held the
 * scale benchmark's peak at 258 MB instead of 385 MB, with no CPU cost per request measurable on
 * the throughput benchmark (docs/PERFORMANCE.md). A server started another way (`rollcall serve`)
 * gets them through NODE_OPTIONS. This module only declares them.
 */

export const SERVER_NODE_FLAGS: readonly string[] = Object.freeze(['--max-semi-space-size=4']);
