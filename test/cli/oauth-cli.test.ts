/**
 * The OAuth side of the command line as a user runs it (DESIGN.md section 6): `client create /
 * list / rotate-secret / delete`, the redirect URI rules of RFC 6749 3.1.2 and RFC 9700 2.6, and
 * the first run: `serve` on an empty database creates the team `default`, an admin and a client,
 * prints them once with a curl line whose password grant really yields a working token.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { rollcall } from '../support/processes.ts';

const CLI = join(import.meta.dirname, '../../src/cli/index.ts');

/** Starts `rollcall serve` (stdout and stderr are pipes, not a terminal) and resolves once it serves. */
function serve(database: string, args: readonly string[] = [], env: Record<string, string> = {}): Promise<{ kill(): Promise<number | null>; output: string; url: string; stdout(): string; stderr(): string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--database', database, ...args], {
      env: { ...process.env, LOG_LEVEL: 'silent', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /Rollcall is serving on (\S+)/.exec(out) ?? /"url":\s*"([^"]+)"/.exec(out);
      if (match) {
        resolve({
          output: out,
          url: match[1]!,
          stdout: () => out,
          stderr: () => err,
          kill: () => new Promise((done) => {
            child.once('exit', (code) => done(code));
            child.kill('SIGTERM');
          }),
        });
      }
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

describe('rollcall client commands and first run', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollcall-oauth-cli-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('client create prints the secret once; list, rotate-secret and delete work; bad redirect URIs are refused', () => {
    const database = `sqlite:${join(dir, 'clients.db')}`;
    assert.equal(rollcall(['team', 'create', '--name', 'acme', '--database', database]).code, 0);
    const created = rollcall(['client', 'create', '--name', 'Okta', '--redirect-uri', 'https://okta.example/cb', '--redirect-uri', 'http://127.0.0.1/cb', '--team', 'acme', '--json', '--database', database]);
    assert.equal(created.code, 0, created.stderr);
    const client = JSON.parse(created.stdout);
    // --json is camelCase in every command (README "Command line").
    assert.match(client.clientId, /^[A-Z0-9]{20}$/);
    assert.match(client.clientSecret, /^rc_cs_[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(client.redirectUris, ['https://okta.example/cb', 'http://127.0.0.1/cb']);
    assert.equal(client.team, 'acme');

    const listed = JSON.parse(rollcall(['client', 'list', '--json', '--database', database]).stdout);
    assert.equal(listed.length, 1);
    assert.equal('clientSecret' in listed[0], false, 'the secret is never shown again');

    const rotated = JSON.parse(rollcall(['client', 'rotate-secret', '--client-id', client.clientId, '--json', '--database', database]).stdout);
    assert.match(rotated.clientSecret, /^rc_cs_/);
    assert.notEqual(rotated.clientSecret, client.clientSecret);

    for (const [uri, why] of [
      ['http://okta.example/cb', /must use https/],
      ['https://okta.example/cb#frag', /fragment/],
      ['/relative/cb', /not an absolute URI/],
    ] as const) {
      const bad = rollcall(['client', 'create', '--name', 'Bad', '--redirect-uri', uri, '--database', database]);
      assert.equal(bad.code, 1, uri);
      assert.match(bad.stderr, why);
      assert.equal(bad.stderr.trim().split('\n').length, 1, 'one line');
    }
    const noTeam = rollcall(['client', 'create', '--name', 'X', '--redirect-uri', 'https://x.example/cb', '--team', 'nope', '--database', database]);
    assert.equal(noTeam.code, 1);
    assert.match(noTeam.stderr, /no team named "nope"/);

    const deleted = rollcall(['client', 'delete', '--client-id', client.clientId, '--database', database]);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.equal(JSON.parse(rollcall(['client', 'list', '--json', '--database', database]).stdout).length, 0);
    assert.equal(rollcall(['client', 'delete', '--client-id', client.clientId, '--database', database]).code, 1);
  });

  it('first run: an empty database gets team default, an admin and a client, printed once with a working curl line', async () => {
    const database = `sqlite:${join(dir, 'first.db')}`;
    const server = await serve(database, ['--show-first-run-credentials'], { LOG_LEVEL: 'info' });
    try {
      const out = server.output;
      assert.match(out, /first run/);
      const field = (name: string) => new RegExp(`${name}\\s+(\\S+)`).exec(out)?.[1];
      const [user, password, clientId, secret] = [field('admin user'), field('admin password'), field('client_id'), field('client_secret')];
      assert.ok(user && password && clientId && secret, out);
      assert.match(out, /curl -s -u '[A-Z0-9]{20}:rc_cs_[^']+' -d grant_type=password/);

      // What the printed curl line does.
      const res = await fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'password', username: user, password }).toString(),
      });
      assert.equal(res.status, 200);
      const token = (await res.json()) as { access_token: string };
      const users = await fetch(`${server.url}/v2/scim/Users`, { headers: { authorization: `Bearer ${token.access_token}` } });
      assert.equal(users.status, 200);
      assert.equal(((await users.json()) as { totalResults: number }).totalResults, 1);

      // 13.10: printed as text for a person, never inside a JSON log line.
      const jsonLines = `${server.stdout()}\n${server.stderr()}`.split('\n').filter((l) => l.startsWith('{'));
      assert.ok(jsonLines.length > 0, 'the server logged at info');
      for (const line of jsonLines) {
        JSON.parse(line);
        assert.equal(line.includes(password!) || line.includes(secret!), false, `a credential in a log line: ${line}`);
      }
    } finally {
      assert.equal(await server.kill(), 0);
    }
    const again = await serve(database);
    try {
      assert.doesNotMatch(again.output, /first run/, 'the credentials are printed only once');
    } finally {
      await again.kill();
    }
  });

  it('13.10: a first start whose stdout is not a terminal, without --show-first-run-credentials, prints no password or secret anywhere and creates nothing; it says how in one warning', async () => {
    const database = `sqlite:${join(dir, 'quiet.db')}`;
    const server = await serve(database, ['--json'], { LOG_LEVEL: 'info' });
    let stdout: string;
    let stderr: string;
    try {
      // A request, so that request lines are logged too.
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
    } finally {
      assert.equal(await server.kill(), 0);
      stdout = server.stdout();
      stderr = server.stderr();
    }
    const all = `${stdout}\n${stderr}`;
    for (const leak of [/admin password/, /client_secret/, /rc_cs_/, /rc_at_/, /curl -s -u/]) assert.doesNotMatch(all, leak);
    const warnings = stdout.split('\n').filter((l) => l.includes('first run'));
    assert.equal(warnings.length, 1, stdout);
    const warning = JSON.parse(warnings[0]!) as { level: number; msg: string };
    assert.equal(warning.level, 40);
    assert.match(warning.msg, /--show-first-run-credentials/);
    const listed = rollcall(['team', 'list', '--json', '--database', database]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(JSON.parse(listed.stdout), [], 'no team, admin or client was created');
  });

  it('13.10 / README "A first session": started on a terminal (a pseudo-terminal from util-linux `script`), the first run prints the credentials without any flag', async () => {
    const database = `sqlite:${join(dir, 'terminal.db')}`;
    const child = spawn('script', ['-qfec', `${process.execPath} ${CLI} serve --port 0 --database ${database}`, '/dev/null'], {
      env: { ...process.env, LOG_LEVEL: 'silent' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const exited = new Promise<void>((done) => child.once('exit', () => done()));
    let out = '';
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "serving" line in 30 s: ${out}`)), 30_000);
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (/Rollcall is serving on/.test(out)) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      assert.match(out, /Rollcall first run/);
      assert.match(out, /admin password +\S{12,}/);
      assert.match(out, /client_secret +rc_cs_\S+/);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    const listed = rollcall(['team', 'list', '--json', '--database', database]);
    assert.equal(JSON.parse(listed.stdout)[0]?.name, 'default');
  });
});
