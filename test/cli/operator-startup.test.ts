/**
 * Issue 27, items 13 and 15.1-2, as an operator meets them at the command line: start-up failures
 * are one line naming the setting and what to do (PUBLIC_BASE_URL on PostgreSQL, an unreachable
 * PostgreSQL, a missing database, a port in use), and a mistyped SQLite path is refused unless
 * --create. The commands of item 15 are in operator-commands.test.ts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createPgSchema, postgresUrl } from '../support/engines.ts';
import { TEST_SECRET_KEY } from '../support/app.ts';
import { rollcall } from '../support/processes.ts';

const CLI = join(import.meta.dirname, '../../src/cli/index.ts');
const NO_PG = postgresUrl ? false : 'no PostgreSQL: TEST_DATABASE_URL is not set';

/** Exactly one line on stderr, exit 1. */
function oneLine(out: { code: number | null; stdout: string; stderr: string }, pattern: RegExp): void {
  assert.equal(out.code, 1, `exit code; stdout: ${out.stdout}; stderr: ${out.stderr}`);
  assert.equal(out.stderr.split('\n').filter(Boolean).length, 1, out.stderr);
  assert.match(out.stderr, pattern);
}

/** A loopback port where nothing listens (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('operator start-up (issue 27 items 13, 15.1, 15.2)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollcall-startup-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('item 13: serve on PostgreSQL without PUBLIC_BASE_URL stops with one line naming it (each instance would sign events as its own issuer)', { skip: NO_PG }, async () => {
    const pg = await createPgSchema(postgresUrl!);
    try {
      const refused = rollcall(['serve', '--port', '0', '--database', pg.url], { SECRET_KEY: TEST_SECRET_KEY, PUBLIC_BASE_URL: '' });
      oneLine(refused, /^rollcall: PUBLIC_BASE_URL: required with PostgreSQL \(the same value on every instance[^\n]*--public-base-url/);
      // The other commands do not sign events: they run without it.
      assert.equal(rollcall(['team', 'list', '--database', pg.url], { PUBLIC_BASE_URL: '' }).code, 0);
    } finally {
      await pg.drop();
    }
  });

  it('item 15.1: an unreachable PostgreSQL names DATABASE_URL, for serve and for any command', async () => {
    const url = `postgres://rollcall:not-this-password@127.0.0.1:${await closedPort()}/rollcall`;
    for (const args of [['serve', '--port', '0', '--public-base-url', 'http://rollcall.test'], ['team', 'list']]) {
      const out = rollcall([...args, '--database', url], { SECRET_KEY: TEST_SECRET_KEY });
      oneLine(out, /^rollcall: PostgreSQL at 127\.0\.0\.1:\d+ is unreachable \(connection refused\): check DATABASE_URL or --database, and that the server is running\n$/);
      assert.doesNotMatch(out.stderr, /not-this-password/);
    }
  });

  it('item 15.1: a PostgreSQL database that does not exist says how to create it', { skip: NO_PG }, () => {
    const url = new URL(postgresUrl!);
    url.pathname = '/rollcall_missing_db';
    url.search = '';
    for (const args of [['serve', '--port', '0']]) {
      oneLine(rollcall([...args, '--database', url.toString()]), /^rollcall: PostgreSQL at [^ ]+ has no database "rollcall_missing_db": create it with `createdb rollcall_missing_db`, or correct DATABASE_URL or --database\n$/);
    }
  });

  it('item 15.1: a port in use names PORT and --port', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const { port } = blocker.address() as AddressInfo;
    try {
      const out = rollcall(['serve', '--port', String(port), '--database', 'sqlite::memory:']);
      oneLine(out, new RegExp(`^rollcall: PORT: 127\\.0\\.0\\.1:${port} is already in use by another process: stop it, or choose another port with PORT or --port\\n$`));
    } finally {
      blocker.close();
    }
  });

  it('item 15.2: an SQLite path under a missing directory is refused unless --create; the default ./data is made', () => {
    const missing = join(dir, 'typo', 'nested', 'r.db');
    for (const args of [['serve', '--port', '0'], ['team', 'list']]) {
      oneLine(rollcall([...args, '--database', `sqlite:${missing}`]), /^rollcall: SQLite database [^\n]*: the directory [^\n]*typo\/nested does not exist; create it, or pass --create/);
    }
    assert.equal(existsSync(join(dir, 'typo')), false, 'nothing was created');
    const created = rollcall(['migrate', '--create', '--database', `sqlite:${missing}`]);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(existsSync(missing), true);

    // `npm start` on a fresh clone: no DATABASE_URL, so ./data/rollcall.db, whose directory is made.
    const fresh = mkdtempSync(join(dir, 'clone-'));
    const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent' };
    delete env.DATABASE_URL;
    const out = spawnSync(process.execPath, [CLI, 'migrate'], { cwd: fresh, env, encoding: 'utf8' });
    assert.equal(out.status, 0, out.stderr);
    assert.equal(existsSync(join(fresh, 'data', 'rollcall.db')), true);
  });
});
