/**
 * The command line as a user runs it (DESIGN.md section 6): team / user / token commands with
 * --json, `serve` answering /healthz and /readyz, and refusing a second server on one SQLite file.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { rollcall, startServer } from '../support/processes.ts';

describe('rollcall CLI', () => {
  let dir: string;
  let database: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollcall-cli-'));
    database = `sqlite:${join(dir, 'r.db')}`;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('team create / user create / token issue print JSON a script can use', async () => {
    const team = rollcall(['team', 'create', '--name', 'acme', '--json', '--database', database]);
    assert.equal(team.code, 0, team.stderr);
    assert.equal(JSON.parse(team.stdout).name, 'acme');
    assert.equal(JSON.parse(team.stdout).deactivatedUsers, 'hidden');

    const dup = rollcall(['team', 'create', '--name', 'ACME', '--database', database]);
    assert.equal(dup.code, 1);
    assert.match(dup.stderr, /already exists/);

    const user = rollcall(['user', 'create', '--team', 'acme', '--user-name', 'admin@acme.example', '--admin', '--password', 'correct horse battery', '--json', '--database', database]);
    assert.equal(user.code, 0, user.stderr);
    const created = JSON.parse(user.stdout);
    assert.equal(created.userName, 'admin@acme.example');
    assert.equal(created.userType, 'admin');
    assert.equal('password' in created, false);

    const token = rollcall(['token', 'issue', '--team', 'acme', '--user-name', 'admin@acme.example', '--database', database]);
    assert.equal(token.code, 0, token.stderr);
    assert.match(token.stdout.trim(), /^rc_at_[A-Za-z0-9_-]{43}$/);

    const asJson = rollcall(['token', 'issue', '--team', 'acme', '--user-name', 'admin@acme.example', '--scope', 'read', '--json', '--database', database]);
    assert.equal(JSON.parse(asJson.stdout).scope, 'read');

    const missing = rollcall(['token', 'issue', '--team', 'acme', '--user-name', 'nobody@acme.example', '--database', database]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no user "nobody@acme.example"/);

    const audit = rollcall(['audit', 'list', '--team', 'acme', '--json', '--database', database]);
    assert.equal(audit.code, 0, audit.stderr);
    const events = JSON.parse(audit.stdout) as { action: string; resourceId: string; actor: { via: string } }[];
    // Issuing a token is audited too: two tokens were issued above. Newest first.
    assert.deepEqual(events.map((e) => [e.action, e.actor.via]), [['token_issued', 'cli'], ['token_issued', 'cli'], ['create', 'cli']]);
    assert.equal(events[2]!.resourceId, created.id);
    const latest = JSON.parse(rollcall(['audit', 'list', '--team', 'acme', '--limit', '1', '--json', '--database', database]).stdout) as { action: string }[];
    assert.deepEqual(latest.map((e) => e.action), ['token_issued'], '--limit keeps the latest events');
    const human = rollcall(['audit', 'list', '--team', 'acme', '--since', '2000-01-01', '--database', database]);
    assert.match(human.stdout, /create\s+User \w{20}\s+by cli/);
    assert.match(rollcall(['audit', 'list', '--team', 'acme', '--since', 'yesterday', '--database', database]).stderr, /--since must be an ISO 8601/);

    const server = await startServer(database);
    try {
      const health = await fetch(`${server.url}/healthz`);
      assert.equal(health.status, 200);
      const ready = await fetch(`${server.url}/readyz`);
      assert.equal(ready.status, 200);
      const users = await fetch(`${server.url}/v2/scim/Users`, { headers: { authorization: token.stdout.trim() } });
      assert.equal(users.status, 200);
      assert.equal(((await users.json()) as { totalResults: number }).totalResults, 1);

      // DESIGN 2: one server per SQLite file.
      const second = rollcall(['serve', '--port', '0', '--database', database]);
      assert.equal(second.code, 1);
      assert.match(second.stderr, /already serving/);
    } finally {
      await server.stop();
    }
    // After a clean stop the file can be served again.
    const again = await startServer(database);
    const code = await again.stop();
    assert.equal(code, 0);
  });

  it('a bad setting stops start-up with one line naming it', () => {
    const res = rollcall(['serve', '--database', database], { PORT: 'eighty' });
    assert.equal(res.code, 1);
    assert.equal(res.stderr.trim(), 'rollcall: PORT: expected a whole number, got "eighty"');
    const db = rollcall(['migrate', '--database', 'mysql://x']);
    assert.equal(db.code, 1);
    assert.match(db.stderr, /DATABASE_URL/);
  });

  it('migrate applies migrations once and says so', () => {
    const fresh = `sqlite:${join(dir, 'm.db')}`;
    const first = rollcall(['migrate', '--json', '--database', fresh]);
    assert.equal(first.code, 0, first.stderr);
    assert.ok(JSON.parse(first.stdout).applied.length >= 1);
    const second = rollcall(['migrate', '--database', fresh]);
    assert.equal(second.stdout.trim(), 'database is up to date');
  });
});
