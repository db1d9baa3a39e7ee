/**
 * The layers of docs/ARCHITECTURE.md, checked on the source (review 31 #8): src/access builds on
 * src/scim, so nothing under src/scim imports src/access (nor the surfaces above both, src/http,
 * src/cli, src/console), and nothing under src/storage imports a layer above it. Every relative
 * import of every file is resolved (type-only imports included: a cycle of types is a cycle of
 * modules all the same).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

const SRC = resolve(import.meta.dirname, '../../src');

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Each relative import of `file`, as a path under src/ (e.g. `access/entry.ts`). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found = [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+'(\.[^']+)'/g), ...text.matchAll(/import\(\s*'(\.[^']+)'\s*\)/g)];
  return found.map((m) => relative(SRC, resolve(dirname(file), m[1]!)));
}

function offending(layer: string, above: readonly string[]): string[] {
  return filesUnder(join(SRC, layer)).flatMap((file) =>
    importsOf(file)
      .filter((target) => above.some((a) => target === a || target.startsWith(`${a}/`)))
      .map((target) => `${relative(SRC, file)} imports ${target}`),
  );
}

describe('layering', () => {
  it('nothing under src/scim imports src/access, src/async or a surface above it', () => {
    assert.deepEqual(offending('scim', ['access', 'async', 'http', 'cli', 'console']), []);
  });

  it('nothing under src/storage imports a layer above it', () => {
    assert.deepEqual(offending('storage', ['scim', 'access', 'async', 'http', 'cli', 'console', 'events', 'audit', 'oauth']), []);
  });

  it('the check sees imports (it finds src/access importing src/scim)', () => {
    assert.ok(offending('access', ['scim']).length > 0);
  });
});
