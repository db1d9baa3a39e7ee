/**
 * Issue 30, item 1, as an operator runs it: `connection create|list|rename|delete --team`,
 * `token issue --connection` (exactly one of --connection and --user-name), and `client create
 * --connection`; names unique per team whatever their case; a connection's token works on SCIM
 * and acts for no user; deleting the connection ends it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { systemClock } from '../../src/clock.ts';
import { verifyAccessToken } from '../../src/oauth/tokens.ts';
import { connect } from '../../src/storage/connect.ts';
import { rollcall, seedTeamToken } from '../support/processes.ts';

describe('rollcall connection / token issue --connection / client create --connection', () => {
  let dir: string;
  let database: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollcall-connections-'));
    database = `sqlite:${join(dir, 'r.db')}`;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const run = (...args: string[]) => rollcall([...args, '--database', database]);

  it('creates, lists, renames and deletes a connection; its token acts for it, not for a user', async () => {
    await seedTeamToken(database);
    const created = run('connection', 'create', '--team', 'acme', '--name', 'Entra ID production', '--provider', 'entra');
    assert.equal(created.code, 0, created.stderr);
    assert.match(created.stdout, /connection "Entra ID production" created/);
    const duplicate = run('connection', 'create', '--team', 'acme', '--name', 'entra id PRODUCTION');
    assert.equal(duplicate.code, 1);
    assert.match(duplicate.stderr, /a connection named "Entra ID production" already exists/);
    assert.equal(run('connection', 'create', '--team', 'acme', '--name', 'x', '--provider', 'ldap').code, 1);

    const both = run('token', 'issue', '--team', 'acme', '--connection', 'Entra ID production', '--user-name', 'owner@acme.example');
    assert.equal(both.code, 1);
    assert.match(both.stderr, /exactly one of --connection NAME .* or --user-name USER/);
    const issued = run('token', 'issue', '--team', 'acme', '--connection', 'entra id production', '--name', 'secret token', '--expires-in', '365d', '--json');
    assert.equal(issued.code, 0, issued.stderr);
    const token = (JSON.parse(issued.stdout) as { accessToken: string }).accessToken;
    const client = run('client', 'create', '--name', 'Entra ID', '--team', 'acme', '--connection', 'Entra ID production', '--json');
    assert.equal(client.code, 0, client.stderr);
    assert.equal(run('client', 'create', '--name', 'c', '--connection', 'Entra ID production', '--redirect-uri', 'https://a.example/cb').code, 1, '--connection needs --team');

    const listed = run('connection', 'list', '--team', 'acme');
    assert.match(listed.stdout, /^[A-Z0-9]{20}  Entra ID production \(entra\)  1 live token  1 client  last used never$/m);
    assert.match(run('token', 'list', '--team', 'acme').stdout, /secret token  connection Entra ID production  created/);

    const storage = connect(database);
    try {
      const bearer = await verifyAccessToken(storage.db, systemClock, token);
      assert.ok(bearer?.connectionId);
      assert.equal(bearer.userId, null);

      const renamed = run('connection', 'rename', '--team', 'acme', '--name', 'Entra ID production', '--new-name', 'Entra ID (prod)');
      assert.equal(renamed.code, 0, renamed.stderr);
      assert.match(renamed.stdout, /is now "Entra ID \(prod\)"/);
      const deleted = run('connection', 'delete', '--team', 'acme', '--name', 'entra id (prod)');
      assert.equal(deleted.code, 0, deleted.stderr);
      assert.match(deleted.stdout, /1 token\(s\) revoked, 1 client\(s\) deleted/);
      assert.equal(await verifyAccessToken(storage.db, systemClock, token), undefined);
      assert.equal(run('connection', 'list', '--team', 'acme').stdout.trim(), 'no connections');
      assert.equal(run('connection', 'delete', '--team', 'acme', '--name', 'nothing').code, 1);
    } finally {
      await storage.close();
    }
  });
});
