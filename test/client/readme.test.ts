/**
 * packages/client/README.md is an example developers copy (issue 34 item 2): its TypeScript
 * blocks, joined into one module importing the client's source, type-check under strict
 * settings. The few names a reader supplies (their database, handlers) are declared here.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';

const repo = join(import.meta.dirname, '../..');

it('the README examples type-check against the client', () => {
  const readme = readFileSync(join(repo, 'packages/client/README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
  assert.ok(blocks.length >= 5, 'the README has its examples');
  const source = join(repo, 'packages/client/src/index.ts');
  const reader = `
declare const tokens: { current(): Promise<string> };
declare const db: { loadPosition(): Promise<number>; savePosition(seq: number): Promise<void> };
declare function syncUser(id: string, change: string): Promise<void>;
declare function fullResync(): Promise<void>;
declare function handle(event: import(${JSON.stringify(source)}).WebhookEvent): Promise<void>;
declare const setFromTheRequestBody: string;
export {};
`;
  const dir = mkdtempSync(join(tmpdir(), 'readme-'));
  try {
    const code = reader + blocks.join('\n').replaceAll("from '@rollcall/client'", `from ${JSON.stringify(source)}`);
    writeFileSync(join(dir, 'readme.ts'), code);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'esnext', module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, allowImportingTsExtensions: true, skipLibCheck: true, types: ['node'], typeRoots: [join(repo, 'node_modules/@types')] },
      files: ['readme.ts'],
    }));
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    try {
      execFileSync(process.execPath, [join(repo, 'node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8' });
    } catch (error) {
      assert.fail(`README examples do not type-check:\n${(error as { stdout?: string }).stdout ?? String(error)}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
