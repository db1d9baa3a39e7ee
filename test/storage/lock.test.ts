/**
 * Issue 13 item 9: one server per SQLite file, held by an OS-level lock that dies with its
 * process. A lock file left by a crashed process never keeps a new server out, even one whose
 * PID equals the dead one's (a container restarted on the same volume is PID 1 again); a live
 * server still keeps a second one out (test/cli/cli.test.ts checks that through the CLI).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LockedError, lockSqliteFile } from '../../src/storage/lock.ts';
import { rollcall, startServer } from '../support/processes.ts';

describe('SQLite server lock (issue 13 item 9)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollcall-lock-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a restart with the same PID as the lock file names starts (the container is PID 1 again)', () => {
    const file = join(dir, 'same-pid.db');
    // What a killed server of an older Rollcall left behind, naming the PID this process now has.
    writeFileSync(`${file}.lock`, String(process.pid));
    const release = lockSqliteFile(file);
    try {
      // While held, the lock refuses another holder, in this process too.
      assert.throws(() => lockSqliteFile(file), (error: unknown) => error instanceof LockedError && /already serving/.test(error.message));
    } finally {
      release();
    }
    // Released: it can be taken again.
    lockSqliteFile(file)();
  });

  it('a server killed with SIGKILL is followed by one that starts, and a live one still refuses a second', async () => {
    const database = `sqlite:${join(dir, 'killed.db')}`;
    const first = await startServer(database);
    const health = await fetch(`${first.url}/healthz`);
    assert.equal(health.status, 200);
    const refused = rollcall(['serve', '--port', '0', '--database', database]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /already serving/);
    await first.stop('SIGKILL');

    const next = await startServer(database);
    try {
      assert.equal((await fetch(`${next.url}/healthz`)).status, 200);
    } finally {
      assert.equal(await next.stop(), 0);
    }
  });
});
