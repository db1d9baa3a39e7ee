/**
 * Issue 13 item 10 at the command line: `rollcall keys rotate` (human and --json output; the key
 * file beside an SQLite database, mode 0600; PostgreSQL without SECRET_KEY refused with one line)
 * and `user create --admin --password` refusing a sign-in password under 12 characters.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TEST_SECRET_KEY } from '../support/app.ts';
import { createPgSchema, postgresUrl } from '../support/engines.ts';
import { rollcall } from '../support/processes.ts';

describe('rollcall keys rotate', () => {
  let dir: string;
  let file: string;
  let database: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollcall-keys-'));
    file = join(dir, 'r.db');
    database = `sqlite:${file}`;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('rotates the cookie key and the events signing key, says until when the previous one is accepted, and keeps the master key in a 0600 file beside the database', () => {
    const first = rollcall(['keys', 'rotate', '--json', '--database', database]);
    assert.equal(first.code, 0, first.stderr);
    const out = JSON.parse(first.stdout) as { rotated: { purpose: string; id: string; previous: string[]; previousValidUntil: string }[]; refreshSeconds: number };
    assert.deepEqual(out.rotated.map((r) => r.purpose), ['cookie', 'events']);
    assert.equal(out.rotated[0]!.previous.length, 1, 'the key made on first use was replaced');
    // The events signing key: the previous one stays published for the event retention (30 days by default).
    const events = out.rotated[1]!;
    assert.equal(events.previous.length, 1);
    const window = Date.parse(events.previousValidUntil) - Date.now();
    assert.ok(window > 29.9 * 86_400_000 && window <= 30 * 86_400_000, `events key window ${window} ms`);
    assert.equal(out.refreshSeconds, 30);
    assert.equal(statSync(`${file}.key`).mode & 0o777, 0o600);

    const second = rollcall(['keys', 'rotate', '--database', database]);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, new RegExp(`^cookie: new key [A-Z0-9]{20}; previous ${out.rotated[0]!.id} accepted until \\d{4}-\\d\\d-\\d\\dT`, 'm'));
    assert.match(second.stdout, /within 30 seconds/);
  });

  it('user create --admin --password with 11 characters is refused, naming the rule; 12 are accepted', () => {
    assert.equal(rollcall(['team', 'create', '--name', 'acme', '--database', database]).code, 0);
    const short = rollcall(['user', 'create', '--team', 'acme', '--user-name', 'a@acme.example', '--admin', '--password', 'elevenchars', '--database', database]);
    assert.equal(short.code, 1);
    assert.match(short.stderr, /^rollcall: password: a password for a user who signs in \(userType admin\) needs at least 12 characters \(invalidValue\)\n$/);
    const ok = rollcall(['user', 'create', '--team', 'acme', '--user-name', 'a@acme.example', '--admin', '--password', 'twelve chars', '--database', database]);
    assert.equal(ok.code, 0, ok.stderr);
  });

  it('PostgreSQL without SECRET_KEY: serve and keys rotate refuse with one line naming the setting', { skip: postgresUrl ? false : 'no TEST_DATABASE_URL' }, async () => {
    const pg = await createPgSchema(postgresUrl!);
    try {
      for (const args of [['keys', 'rotate'], ['serve', '--port', '0']]) {
        const res = rollcall([...args, '--database', pg.url], { SECRET_KEY: '' });
        assert.equal(res.code, 1, res.stdout);
        assert.match(res.stderr, /^rollcall: SECRET_KEY: required with PostgreSQL[^\n]*\n$/);
      }
      const ok = rollcall(['keys', 'rotate', '--json', '--database', pg.url], { SECRET_KEY: TEST_SECRET_KEY });
      assert.equal(ok.code, 0, ok.stderr);
    } finally {
      await pg.drop();
    }
  });
});
