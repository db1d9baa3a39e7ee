/**
 * What test/conformance/guides.test.ts needs beyond HTTP: the shell as a guide shows it (words of
 * a command, `$NAME` for `{name}`), the `npx rollcall client ...` commands of a `sh` fence run as
 * the operator runs them (a child process on the database the replayed app uses), the lines they
 * print matched against the `text` fence the guide shows after them (capturing `{name}`
 * placeholders), and a database both can open: a file-backed SQLite database (an in-memory one is
 * private to one process) or the PostgreSQL schema of the engine.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connect } from '../../src/storage/connect.ts';
import { migrate } from '../../src/storage/migrations/index.ts';
import { TEST_SECRET_KEY } from './app.ts';
import type { TestEngine } from './engines.ts';

const CLI = join(import.meta.dirname, '../../src/cli/index.ts');

/** The values a guide's `{name}` placeholders stand for, as the replay learns them. */
export type Vars = Record<string, string>;

/**
 * Shell words of one command: quotes and backslash-newlines as sh reads them, no expansion but
 * `$BASE` (the base URL, when given) and `$NAME` / `${NAME}`, which become the placeholder `{name}`.
 */
export function shellWords(text: string, base?: { readonly name: string; readonly url: string }): string[] {
  const words: string[] = [];
  let current = '';
  let inWord = false;
  const src = text.replace(/\\\n/g, ' ');
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === "'") {
      const end = src.indexOf("'", i + 1);
      current += src.slice(i + 1, end);
      i = end;
      inWord = true;
    } else if (c === '"') {
      let j = i + 1;
      for (; src[j] !== '"'; j++) current += src[j] === '\\' ? src[++j] : src[j];
      i = j;
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(current);
      current = '';
      inWord = false;
    } else {
      current += c;
      inWord = true;
    }
  }
  if (inWord) words.push(current);
  return words.map((w) =>
    (base ? w.replace(new RegExp(`\\$${base.name}\\b`, 'g'), base.url) : w).replace(/\$\{?([A-Z][A-Z0-9_]*)\}?/g, (_m, name: string) => `{${name.toLowerCase()}}`),
  );
}

/** `{name}` replaced by its value; a name not known yet fails the replay at `where`. */
export function substitute(text: string, vars: Vars, where: string): string {
  return text.replace(/\{([a-z][a-z0-9_]*)\}/g, (_m, name: string) => {
    assert.ok(name in vars, `${where}: {${name}} is used before it is known`);
    return vars[name]!;
  });
}

/**
 * The `rollcall client ...`, `rollcall connection ...` and `rollcall token issue ...` commands of
 * a `sh` fence (one a line, backslash continuations joined, comments left out, indented fences
 * too), as argument lists after `npx rollcall`. Other commands (team commands, exports) are not
 * run: the replayed app holds the team already.
 */
export function clientCommands(fence: string): string[][] {
  return fence
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => /^npx rollcall (client|connection|token issue)\s/.test(line.trim()))
    .map((line) => shellWords(line.trim()).slice(2));
}

/** Whether the command issues a token (`token issue`): what it prints is the token. */
export const issuesToken = (args: readonly string[]): boolean => args[0] === 'token' && args[1] === 'issue';

export interface CliTarget {
  /** The database the replayed app uses (a URL another process can open). */
  readonly databaseUrl: string;
  /** The base URL the guide shows (PUBLIC_BASE_URL). */
  readonly publicBaseUrl: string;
  /** Origins the guide names that the replay serves elsewhere (Entra's login host to a stand-in). */
  readonly hosts: ReadonlyMap<string, string>;
}

/**
 * Runs `npx rollcall <args>` as a child process against `target`'s database (the hosts the guide
 * names replaced by the ones the replay serves them on, and back in what it prints); returns
 * what it printed.
 */
export async function runRollcall(args: readonly string[], vars: Vars, target: CliTarget, where: string): Promise<string> {
  const argv = args.map((a) => {
    let word = substitute(a, vars, where);
    for (const [from, to] of target.hosts) word = word.split(from).join(to);
    return word;
  });
  const env = { ...process.env, DATABASE_URL: target.databaseUrl, SECRET_KEY: TEST_SECRET_KEY, PUBLIC_BASE_URL: target.publicBaseUrl, LOG_LEVEL: 'silent' };
  try {
    const run = await promisify(execFile)(process.execPath, [CLI, ...argv], { encoding: 'utf8', env, timeout: 30_000 });
    // Printed as the guide's reader sees it: with the hosts the guide names.
    let printed = run.stdout;
    for (const [from, to] of target.hosts) printed = printed.split(to).join(from);
    return printed;
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; code?: unknown };
    assert.fail(`${where}: npx rollcall ${argv.join(' ')} failed (${String(failed.code)}): ${failed.stderr ?? ''}${failed.stdout ?? ''}`);
  }
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The output a guide shows (`expected`) is what the commands printed (`actual`): each of its lines
 * matches a line of the output, in order (lines it leaves out may come between); runs of spaces
 * match any spacing, `...` any text, a known `{name}` its value, an unknown one a word it captures.
 */
export function matchOutput(actual: string, expected: string, vars: Vars, where: string): void {
  const lines = actual.split('\n').map((l) => l.trim());
  let at = 0;
  for (const shown of expected.split('\n').map((l) => l.trim()).filter((l) => l !== '')) {
    const captured: string[] = [];
    const pattern = shown
      .split(/(\{[a-z][a-z0-9_]*\}|\.\.\.|\s+)/)
      .map((part) => {
        if (part === '...') return '.*?';
        if (/^\s+$/.test(part)) return '\\s+';
        const name = /^\{([a-z][a-z0-9_]*)\}$/.exec(part)?.[1];
        if (name === undefined) return escape(part);
        if (name in vars) return escape(vars[name]!);
        captured.push(name);
        return '(\\S+)';
      })
      .join('');
    const regex = new RegExp(`^${pattern}$`);
    let found: RegExpExecArray | null = null;
    for (; at < lines.length && !found; at++) found = regex.exec(lines[at]!);
    assert.ok(found, `${where}: no line of the output matches "${shown}" (in order); the commands printed:\n${actual}`);
    const groups = found;
    captured.forEach((name, i) => {
      if (name in vars) assert.equal(groups[i + 1], vars[name], `${where}: {${name}}`);
      else vars[name] = groups[i + 1]!;
    });
  }
}

/**
 * `engine`, with SQLite on a file (which a CLI process can open beside the app) in place of
 * memory; PostgreSQL as it is (its URL names the test's schema).
 */
export function sharedEngine(engine: TestEngine): TestEngine {
  if (engine.name !== 'sqlite') return engine;
  return {
    name: 'sqlite',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'rollcall-guide-db-'));
      const url = `sqlite:${join(dir, 'rollcall.db')}`;
      const storage = connect(url);
      await migrate(storage);
      return {
        storage,
        url,
        async dispose() {
          await storage.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  };
}
