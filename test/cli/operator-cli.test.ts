/**
 * Issue 12, item 4 at the command line: `--version`; `user list / deactivate / set-password`;
 * SQLite errors name the file and the setting; the first run's credentials are created only once
 * the server listens, so a failed start (port taken) leaves nothing unseen behind.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { rollcall, scim, seedTeamToken, startServer } from '../support/processes.ts';

const CLI = join(import.meta.dirname, '../../src/cli/index.ts');

describe('operator fixes at the command line (issue 12 item 4)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollcall-operator-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('rollcall --version prints the package version', () => {
    const version = (JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string }).version;
    const out = rollcall(['--version']);
    assert.equal(out.code, 0);
    assert.equal(out.stdout.trim(), version);
  });

  it('user list, user deactivate and user set-password (audited; a deactivated user loses its tokens)', async () => {
    const database = `sqlite:${join(dir, 'users.db')}`;
    const token = await seedTeamToken(database);
    assert.equal(rollcall(['user', 'create', '--team', 'acme', '--user-name', 'admin@acme.example', '--admin', '--password', 'correct horse battery', '--database', database]).code, 0);
    assert.equal(rollcall(['user', 'create', '--team', 'acme', '--user-name', 'zed@acme.example', '--database', database]).code, 0);
    const list = rollcall(['user', 'list', '--team', 'acme', '--json', '--database', database]);
    assert.equal(list.code, 0, list.stderr);
    const page = JSON.parse(list.stdout) as { total: number; users: { userName: string; active: boolean; userType: string | null }[] };
    assert.equal(page.total, 3);
    assert.deepEqual(page.users.map((u) => u.userName), ['admin@acme.example', 'owner@acme.example', 'zed@acme.example']);
    const filtered = rollcall(['user', 'list', '--team', 'acme', '--filter', 'userName sw "z"', '--database', database]);
    assert.match(filtered.stdout, /zed@acme\.example  active\n\(1 of 1\)/);
    const badFilter = rollcall(['user', 'list', '--team', 'acme', '--filter', 'userName zz "z"', '--database', database]);
    assert.equal(badFilter.code, 1);
    assert.equal(badFilter.stderr.trim().split('\n').length, 1);

    const short = rollcall(['user', 'set-password', '--team', 'acme', '--user-name', 'admin@acme.example', '--database', database], { ROLLCALL_PASSWORD: 'short' });
    assert.equal(short.code, 1);
    assert.match(short.stderr, /password/);
    const set = rollcall(['user', 'set-password', '--team', 'acme', '--user-name', 'admin@acme.example', '--database', database], { ROLLCALL_PASSWORD: 'another long passphrase' });
    assert.equal(set.code, 0, set.stderr);

    const off = rollcall(['user', 'deactivate', '--team', 'acme', '--user-name', 'owner@acme.example', '--database', database]);
    assert.equal(off.code, 0, off.stderr);
    const server = await startServer(database);
    try {
      assert.equal((await scim(server.url, token, 'GET', '/Users')).status, 401, "the deactivated user's token ends");
    } finally {
      await server.stop();
    }
    const audit = JSON.parse(rollcall(['audit', 'list', '--team', 'acme', '--json', '--database', database]).stdout) as { action: string; detail: Record<string, unknown> }[];
    const patches = audit.filter((e) => e.action === 'patch').map((e) => e.detail);
    assert.deepEqual(patches, [{ changed: ['active'], tokensRevoked: 1 }, { changed: [], password: 'changed' }], 'newest first');
    assert.doesNotMatch(JSON.stringify(audit), /another long passphrase/);
  });

  it('--json output is camelCase in every command', async () => {
    const database = `sqlite:${join(dir, 'casing.db')}`;
    await seedTeamToken(database);
    const outputs = [
      rollcall(['team', 'list', '--json', '--database', database]),
      rollcall(['client', 'create', '--name', 'C', '--team', 'acme', '--json', '--database', database]),
      rollcall(['client', 'list', '--json', '--database', database]),
      rollcall(['token', 'issue', '--team', 'acme', '--user-name', 'owner@acme.example', '--json', '--database', database]),
      rollcall(['token', 'list', '--team', 'acme', '--json', '--database', database]),
      rollcall(['user', 'list', '--team', 'acme', '--json', '--database', database]),
      rollcall(['audit', 'list', '--team', 'acme', '--json', '--database', database]),
      rollcall(['migrate', '--json', '--database', database]),
    ];
    const keys: string[] = [];
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(walk);
      else if (value !== null && typeof value === 'object') {
        for (const [k, v] of Object.entries(value)) {
          keys.push(k);
          walk(v);
        }
      }
    };
    for (const out of outputs) {
      assert.equal(out.code, 0, out.stderr);
      walk(JSON.parse(out.stdout));
    }
    assert.ok(keys.includes('clientId') && keys.includes('accessToken') && keys.includes('expiresAt'));
    assert.deepEqual(keys.filter((k) => !/^[a-z][A-Za-z0-9]*$/.test(k)), []);
  });

  it('SQLite errors name the file and DATABASE_URL', () => {
    const notDb = join(dir, 'not-a-database.db');
    writeFileSync(notDb, 'x'.repeat(200));
    const directory = join(dir, 'a-directory.db');
    mkdirSync(directory);
    for (const path of [notDb, directory]) {
      for (const args of [['team', 'list'], ['migrate'], ['serve', '--port', '0']]) {
        const out = rollcall([...args, '--database', `sqlite:${path}`]);
        assert.equal(out.code, 1, args.join(' '));
        assert.ok(out.stderr.includes(`SQLite database ${path}:`), out.stderr);
        assert.match(out.stderr, /DATABASE_URL/);
        assert.equal(out.stderr.trim().split('\n').length, 1, out.stderr);
      }
    }
  });

  it('first run with the port taken creates nothing; the next start shows the credentials', async () => {
    const database = `sqlite:${join(dir, 'first.db')}`;
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const failed = spawnSync(process.execPath, [CLI, 'serve', '--port', String(port), '--show-first-run-credentials', '--database', database], {
        encoding: 'utf8',
        env: { ...process.env, LOG_LEVEL: 'silent' },
        timeout: 30_000,
      });
      assert.equal(failed.status, 1, failed.stderr);
      assert.equal(failed.stderr, `rollcall: PORT: 127.0.0.1:${port} is already in use by another process: stop it, or choose another port with PORT or --port\n`);
      assert.doesNotMatch(failed.stdout, /admin password/);
    } finally {
      blocker.close();
    }
    assert.deepEqual(JSON.parse(rollcall(['team', 'list', '--json', '--database', database]).stdout), [], 'nothing was created');
    const server = await startServer(database, {}).catch(() => undefined);
    // startServer passes --json and no flag: nothing is shown, so nothing is created.
    await server?.stop();
    // Started, read until it says it serves and has shown both credentials, then stopped (a
    // loaded host may take many seconds to start it: the guard only ends a hang).
    const shown = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--show-first-run-credentials', '--database', database], {
        env: { ...process.env, LOG_LEVEL: 'silent' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        if (stdout.includes('Rollcall is serving') && /client_secret/.test(stdout) && /admin password/.test(stdout)) child.kill('SIGTERM');
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.on('close', () => {
        clearTimeout(guard);
        if (stdout.includes('Rollcall is serving')) resolve(stdout);
        else reject(new Error(`no "Rollcall is serving" line; stdout: ${stdout}; stderr: ${stderr}`));
      });
    });
    assert.match(shown, /admin password +\S{12,}/);
    assert.match(shown, /client_secret +rc_cs_/);
  });
});
