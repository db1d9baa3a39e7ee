/**
 * Issue 27, item 15, commands as an operator runs them: `copy` refuses a file a running server
 * holds, an admin needs a password, token lifetimes have one spelling, and a served request
 * leaves one access log line with its method, route, status, team and latency.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { rollcall, scim, seedTeamToken, startServer } from '../support/processes.ts';

/** Exactly one line on stderr, exit 1. */
function oneLine(out: { code: number | null; stdout: string; stderr: string }, pattern: RegExp): void {
  assert.equal(out.code, 1, `exit code; stdout: ${out.stdout}; stderr: ${out.stderr}`);
  assert.equal(out.stderr.split('\n').filter(Boolean).length, 1, out.stderr);
  assert.match(out.stderr, pattern);
}

describe('operator commands (issue 27 item 15)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollcall-commands-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('item 15.3: copy refuses an SQLite file that a running server holds, in one line', async () => {
    const source = `sqlite:${join(dir, 'served.db')}`;
    await seedTeamToken(source);
    const server = await startServer(source);
    try {
      const out = rollcall(['copy', '--from', source, '--to', `sqlite:${join(dir, 'copy-target.db')}`]);
      oneLine(out, /^rollcall: --from [^\n]*served\.db is held by a running Rollcall server: stop it first/);
    } finally {
      await server.stop();
    }
    const copied = rollcall(['copy', '--from', source, '--to', `sqlite:${join(dir, 'copy-target.db')}`, '--json']);
    assert.equal(copied.code, 0, copied.stderr);
  });

  it('item 15.4: user create --admin without a password is refused (pass --password or ROLLCALL_PASSWORD)', () => {
    const database = `sqlite:${join(dir, 'admins.db')}`;
    assert.equal(rollcall(['team', 'create', '--name', 'acme', '--database', database]).code, 0);
    const refused = rollcall(['user', 'create', '--team', 'acme', '--user-name', 'a@acme.example', '--admin', '--database', database]);
    oneLine(refused, /^rollcall: an admin signs in with a password: pass --password, or set ROLLCALL_PASSWORD/);
    // Nothing was created: the same userName is free.
    const fromEnv = rollcall(['user', 'create', '--team', 'acme', '--user-name', 'a@acme.example', '--admin', '--json', '--database', database], { ROLLCALL_PASSWORD: 'a long enough password' });
    assert.equal(fromEnv.code, 0, fromEnv.stderr);
    assert.equal((JSON.parse(fromEnv.stdout) as { userType: string }).userType, 'admin');
  });

  it('item 15.6: one spelling of a lifetime: --expires-in; the old --ttl is refused naming it', async () => {
    const database = `sqlite:${join(dir, 'ttl.db')}`;
    const help = rollcall(['token', 'issue', '--help']).stdout;
    assert.match(help, /--expires-in <time>/);
    assert.doesNotMatch(help, /--ttl/);
    const old = rollcall(['token', 'issue', '--team', 'acme', '--user-name', 'owner@acme.example', '--ttl', '3600', '--database', database]);
    assert.equal(old.code, 1);
    assert.match(old.stderr, /--ttl is now --expires-in/);
  });

  it('item 15.7: one access log line per request, with method, route, status, team and latency', async () => {
    const database = `sqlite:${join(dir, 'log.db')}`;
    const token = await seedTeamToken(database);
    const server = await startServer(database, { LOG_LEVEL: 'info' });
    let ids: string[];
    try {
      const list = await scim(server.url, token, 'GET', '/Users?count=1');
      const missing = await scim(server.url, token, 'GET', '/Users/NOPE0000000000000000');
      const health = await fetch(`${server.url}/healthz`);
      assert.deepEqual([list.status, missing.status, health.status], [200, 404, 200]);
      ids = [list.headers.get('x-request-id')!, missing.headers.get('x-request-id')!, health.headers.get('x-request-id')!];
    } finally {
      await server.stop();
    }
    const lines = server.output().split('\n').filter((l) => l.startsWith('{"level"')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const per = ids.map((id) => lines.filter((l) => l.reqId === id));
    assert.deepEqual(per.map((p) => p.length), [1, 1, 1], 'one line per request');
    const [list, missing, health] = per.map((p) => p[0]!);
    assert.deepEqual({ method: list!.method, route: list!.route, status: list!.status, team: list!.team, msg: list!.msg }, { method: 'GET', route: '/v2/scim/Users', status: 200, team: 'acme', msg: 'request completed' });
    assert.deepEqual([missing!.route, missing!.status, missing!.team], ['/v2/scim/Users/:id', 404, 'acme']);
    assert.deepEqual([health!.route, health!.status, 'team' in health!], ['/healthz', 200, false], 'no team before authentication');
    for (const line of [list, missing, health]) assert.equal(typeof line!.ms, 'number');
  });
});
