/**
 * The client's examples developers copy (issue 34 items 2 and 5) type-check against the client's
 * source under strict settings: the TypeScript blocks of packages/client/README.md, and those of
 * the root README's "For application developers" section. Each document's blocks are joined into
 * one module; '@rollcall/client' points at packages/client/src; other packages (standardwebhooks)
 * resolve from the repository's node_modules. The few names a reader supplies (their database,
 * handlers) are declared here. The Shared Signals guide (docs/signals.md, issue 33 item 7) shows
 * `jose` alone, with its own declarations: its blocks are checked the same way.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';

const repo = join(import.meta.dirname, '../..');
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

const tsBlocks = (markdown: string) => [...markdown.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);

function typeCheck(name: string, blocks: string[], prelude = reader): void {
  const dir = mkdtempSync(join(tmpdir(), 'readme-'));
  try {
    const code = prelude + blocks.join('\n').replaceAll("from '@rollcall/client'", `from ${JSON.stringify(source)}`);
    writeFileSync(join(dir, 'readme.ts'), code);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'esnext', module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, allowImportingTsExtensions: true, skipLibCheck: true, types: ['node'], typeRoots: [join(repo, 'node_modules/@types')] },
      files: ['readme.ts'],
    }));
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'), 'dir');
    try {
      execFileSync(process.execPath, [join(repo, 'node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8' });
    } catch (error) {
      assert.fail(`${name} examples do not type-check:\n${(error as { stdout?: string }).stdout ?? String(error)}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

it('the client README examples type-check against the client', () => {
  const blocks = tsBlocks(readFileSync(join(repo, 'packages/client/README.md'), 'utf8'));
  assert.ok(blocks.length >= 5, 'the README has its examples');
  typeCheck('packages/client/README.md', blocks);
});

it("the README's section for application developers type-checks against the client", () => {
  const readme = readFileSync(join(repo, 'README.md'), 'utf8');
  const section = /^## For application developers\n([\s\S]*?)^## /m.exec(readme)?.[1];
  assert.ok(section, 'README.md has the section "For application developers"');
  const blocks = tsBlocks(section);
  assert.ok(blocks.length >= 4, 'the section has its examples (client, feed, webhook, SET)');
  assert.ok(blocks.some((b) => b.includes("from 'standardwebhooks'")), 'the reference library example is among them');
  typeCheck('README.md "For application developers"', blocks);
});

it('the TypeScript of docs/signals.md (an SSF receiver, a poll loop, reconciliation by delta query) type-checks with jose', () => {
  const blocks = tsBlocks(readFileSync(join(repo, 'docs/signals.md'), 'utf8'));
  assert.ok(blocks.length >= 3, 'the guide has its examples (receiver, poll, delta)');
  assert.ok(blocks[0]!.includes("from 'jose'"), 'the receiver verifies with jose');
  typeCheck('docs/signals.md', blocks, 'export {};\n');
});
