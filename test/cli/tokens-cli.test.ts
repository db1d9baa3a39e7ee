/**
 * Issue 12, item 1, as an operator runs it: `token issue --name --expires-in --json` prints the
 * token's id beside the secret, `token list` never shows a secret, `token revoke --id` makes a
 * running server answer 401.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { rollcall, scim, seedTeamToken, startServer } from '../support/processes.ts';

describe('rollcall token issue / list / revoke', () => {
  let dir: string;
  let database: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollcall-tokens-'));
    database = `sqlite:${join(dir, 'r.db')}`;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('issues a named token with an id, lists it without the secret, revokes it by id', async () => {
    await seedTeamToken(database);
    const issued = rollcall(['token', 'issue', '--team', 'acme', '--user-name', 'owner@acme.example', '--name', 'Okta', '--expires-in', '90d', '--json', '--database', database]);
    assert.equal(issued.code, 0, issued.stderr);
    const out = JSON.parse(issued.stdout) as { id: string; name: string; accessToken: string; expiresAt: string };
    assert.match(out.id, /^[A-Z0-9]{20}$/);
    assert.equal(out.name, 'Okta');
    assert.match(out.accessToken, /^rc_at_/);
    const days = (Date.parse(out.expiresAt) - Date.now()) / 86_400_000;
    assert.ok(days > 89.9 && days <= 90, `expires in ${days} days`);

    const bad = rollcall(['token', 'issue', '--team', 'acme', '--user-name', 'owner@acme.example', '--expires-in', '900d', '--database', database]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /366 days/);

    const list = rollcall(['token', 'list', '--team', 'acme', '--database', database]);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, new RegExp(`${out.id}  Okta  user owner@acme.example  created \\S+  last used never  expires ${out.expiresAt}  active`));
    assert.doesNotMatch(list.stdout, /rc_at_/);
    const listJson = JSON.parse(rollcall(['token', 'list', '--team', 'acme', '--json', '--database', database]).stdout) as { id: string; lastUsedAt: string | null }[];
    assert.equal(listJson.length, 2, 'the seeded token and this one');

    const server = await startServer(database, { BEARER_CACHE_SECONDS: '300' });
    try {
      assert.equal((await scim(server.url, out.accessToken, 'GET', '/Users')).status, 200);
      const revoked = rollcall(['token', 'revoke', '--team', 'acme', '--id', out.id, '--database', database]);
      assert.equal(revoked.code, 0, revoked.stderr);
      assert.match(revoked.stdout, /revoked/);
      // The server keeps verified tokens in memory (BEARER_CACHE_SECONDS, 300 here); another
      // process's commit on the SQLite file reaches it (storage/revocations.ts sqlitePoller). The
      // 20 s guard only ends the wait: far below the cache lifetime, never a measure of speed.
      const deadline = Date.now() + 20_000;
      let status = 200;
      while (status !== 401 && Date.now() < deadline) {
        status = (await scim(server.url, out.accessToken, 'GET', '/Users')).status;
        if (status !== 401) await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(status, 401);
    } finally {
      await server.stop();
    }
    // The use before the revocation was written when the server stopped.
    const used = JSON.parse(rollcall(['token', 'list', '--team', 'acme', '--json', '--database', database]).stdout) as { id: string; lastUsedAt: string | null; state: string }[];
    const mine = used.find((t) => t.id === out.id)!;
    assert.equal(mine.state, 'revoked');
    assert.notEqual(mine.lastUsedAt, null);

    const audit = JSON.parse(rollcall(['audit', 'list', '--team', 'acme', '--json', '--database', database]).stdout) as { action: string; resourceId: string }[];
    assert.deepEqual(audit.filter((e) => e.resourceId === out.id).map((e) => e.action), ['token_revoked', 'token_issued'], 'newest first');
    assert.equal(rollcall(['token', 'revoke', '--team', 'acme', '--id', 'NOPE', '--database', database]).code, 1);
  });
});
