/**
 * packages/client stands alone (issue 34 item 2): its source imports only `jose`, Node.js
 * built-ins and its own files (nothing of the server's src/), and `jose` is its only runtime
 * dependency.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const root = join(import.meta.dirname, '../../packages/client');

describe('packages/client', () => {
  it('imports only jose, node: built-ins and its own files', () => {
    const files = readdirSync(join(root, 'src')).filter((f) => f.endsWith('.ts'));
    assert.ok(files.length > 5);
    for (const file of files) {
      const text = readFileSync(join(root, 'src', file), 'utf8');
      for (const [, specifier] of text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+'([^']+)'/g)) {
        assert.ok(specifier === 'jose' || specifier!.startsWith('node:') || /^\.\/[\w-]+\.ts$/.test(specifier!), `${file} imports ${specifier}`);
      }
    }
  });

  it('depends on jose alone at run time', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies?: Record<string, string>; peerDependencies?: unknown };
    assert.deepEqual(Object.keys(pkg.dependencies ?? {}), ['jose']);
    assert.equal(pkg.peerDependencies, undefined);
  });
});
