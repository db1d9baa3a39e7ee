/**
 * A child-process probe for the server's heap policy (src/node-flags.ts): with `on`, applies
 * applyServerHeapPolicy as `rollcall serve` does; then keeps a live set and churns objects that
 * live just long enough to be promoted to the old generation before they are dropped (as a
 * streamed response's chunks do, waiting for the socket), and prints one JSON line with the
 * largest heap in use seen. The old generation is collected when it reaches V8's limit, a
 * multiple of the live set, so that peak shows the policy. Run with `--max-semi-space-size=4`,
 * as the server is.
 */
import { getHeapStatistics } from 'node:v8';
import { applyServerHeapPolicy } from '../../src/node-flags.ts';

if (process.argv[2] === 'on') applyServerHeapPolicy();
const live: { i: number; s: string }[] = [];
for (let i = 0; i < 100_000; i++) live.push({ i, s: `live-${i}-${'a'.repeat(40)}` });
const ring: unknown[] = new Array(50_000);
let peak = 0;
for (let i = 0; i < 1_500_000; i++) {
  ring[i % ring.length] = { i, s: `garbage-${i}-${'b'.repeat(60)}` };
  if (i % 10_000 === 0) peak = Math.max(peak, getHeapStatistics().used_heap_size);
}
process.stdout.write(`${JSON.stringify({ peakUsedBytes: peak, live: live.length })}\n`);
