/**
 * The server's Node.js flags (src/node-flags.ts) are the ones `npm start` passes: the benchmarks
 * start Rollcall with SERVER_NODE_FLAGS, so what they measure is what `npm start` runs.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SERVER_NODE_FLAGS } from '../../src/node-flags.ts';

describe('server Node.js flags', () => {
  it('npm start runs src/main.ts with exactly SERVER_NODE_FLAGS', () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.equal(pkg.scripts.start, ['node', ...SERVER_NODE_FLAGS, 'src/main.ts'].join(' '));
  });

  it('the flags are ones this Node accepts (a typo would stop the server from starting)', () => {
    for (const flag of SERVER_NODE_FLAGS) assert.ok(process.allowedNodeEnvironmentFlags.has(flag.split('=')[0]!), flag);
  });
});
