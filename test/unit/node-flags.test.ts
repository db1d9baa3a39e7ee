/**
 * The server's Node.js flags (src/node-flags.ts) are the ones `npm start` passes: the benchmarks
 * start Rollcall with SERVER_NODE_FLAGS, so what they measure is what `npm start` runs. The heap
 * policy `rollcall serve` applies as it starts (V8 flags no command line may carry) lowers the
 * heap's peak under promoted garbage (test/support/heap-growth-probe.ts).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SERVER_NODE_FLAGS } from '../../src/node-flags.ts';

const PROBE = join(import.meta.dirname, '../support/heap-growth-probe.ts');

/** The probe's peak heap in use, in a child started as the server is. */
function probePeak(policy: 'on' | 'off'): number {
  const out = execFileSync(process.execPath, [...SERVER_NODE_FLAGS, PROBE, policy], { encoding: 'utf8', timeout: 60_000 });
  const { peakUsedBytes, live } = JSON.parse(out) as { peakUsedBytes: number; live: number };
  assert.equal(live, 100_000);
  return peakUsedBytes;
}

describe('server Node.js flags', () => {
  it('npm start runs src/main.ts with exactly SERVER_NODE_FLAGS', () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.equal(pkg.scripts.start, ['node', ...SERVER_NODE_FLAGS, 'src/main.ts'].join(' '));
  });

  it('the flags are ones this Node accepts (a typo would stop the server from starting)', () => {
    for (const flag of SERVER_NODE_FLAGS) assert.ok(process.allowedNodeEnvironmentFlags.has(flag.split('=')[0]!), flag);
  });

  it('the heap policy collects promoted garbage at a smaller heap: the peak in use is at most 3/4 of the default policy', () => {
    const without = probePeak('off');
    const withPolicy = probePeak('on');
    assert.ok(withPolicy <= 0.75 * without, `peak heap in use: ${(withPolicy / 2 ** 20).toFixed(1)} MB with the policy, ${(without / 2 ** 20).toFixed(1)} MB without`);
  });
});
