/**
 * SQLite file maintenance (src/storage/checkpointer.ts, sqlite-adapter.ts, connect.ts): the
 * serving connection never checkpoints inside a commit, a worker thread does, and the WAL it
 * checkpoints starts over once it passes a threshold, so it stays bounded however long writes
 * go on, paused or not; close() stops the worker
 * and leaves no WAL behind; a checkpointer that fails hands checkpoints back to the serving
 * connection; statistics are gathered when a database is opened, so the planner serves
 * `externalId eq` from its index.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { newId } from '../../src/ids.ts';
import { startCheckpointer } from '../../src/storage/checkpointer.ts';
import type { CheckpointReport } from '../../src/storage/checkpointer.ts';
import { connect } from '../../src/storage/connect.ts';
import type { Storage } from '../../src/storage/connect.ts';
import { migrate } from '../../src/storage/migrations/index.ts';
import { insertAuditEvent } from '../../src/storage/repos/audit.ts';
import { insertTeam } from '../../src/storage/repos/teams.ts';

const T = '2026-01-01T00:00:00.000Z';

describe('SQLite maintenance', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollcall-maintenance-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const waitFor = async (what: string, check: () => boolean, ms = 10_000) => {
    const end = Date.now() + ms;
    while (!check()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };

  /** `n` write transactions of one audit event each. */
  const writes = async (storage: Storage, teamId: string, n: number) => {
    for (let i = 0; i < n; i++) {
      await storage.db.transaction().execute((trx) =>
        insertAuditEvent(trx, { id: newId(), team_id: teamId, at: T, actor: '{}', request_id: null, action: 'create', resource_type: 'User', resource_id: null, detail: JSON.stringify({ pad: 'x'.repeat(2000) }) }),
      );
    }
  };

  it('commits never checkpoint; the worker thread copies every committed frame into the database', async () => {
    const path = join(dir, 'wal.db');
    const reports: CheckpointReport[] = [];
    const storage = connect(`sqlite:${path}`, { checkpointIntervalMs: 20, onCheckpoint: (r) => reports.push(r) });
    try {
      await migrate(storage);
      const setting = await sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`.execute(storage.db);
      assert.equal(setting.rows[0]?.wal_autocheckpoint, 0, 'the serving connection leaves checkpoints to the worker');
      const teamId = newId();
      await insertTeam(storage.db, { id: teamId, name: 'wal', name_key: 'wal', deactivated_users: 'hidden', created_at: T });
      await writes(storage, teamId, 150);
      const seen = reports.length;
      await waitFor('a checkpoint that took in every frame', () => reports.slice(seen).some((r) => r.log > 0 && r.checkpointed === r.log));
      const events = await storage.db.selectFrom('audit_events').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      assert.equal(Number(events.n), 150);
    } finally {
      await storage.close();
    }
    assert.equal(existsSync(`${path}-wal`), false, 'closing the last connection checkpointed and removed the WAL');
  });

  it('under writes that never pause, a WAL past the threshold is made to start over, again and again', async () => {
    const path = join(dir, 'stream.db');
    const threshold = 1200 * 4096;
    // The frames in the WAL as the worker last reported them, how many reports came, and how
    // many in a row reported the same frames (none written meanwhile).
    let frames = 0;
    let reported = 0;
    let unchanged = 0;
    const onCheckpoint = (r: CheckpointReport) => {
      reported++;
      unchanged = r.log === frames ? unchanged + 1 : 0;
      frames = r.log;
    };
    // The serving connection's RESTART checkpoints that ran to their end.
    let restarted = 0;
    const storage = connect(`sqlite:${path}`, { checkpointIntervalMs: 10, checkpointLargeWalBytes: threshold, onCheckpoint, onWalRestart: () => restarted++ });
    try {
      await migrate(storage);
      const teamId = newId();
      await insertTeam(storage.db, { id: teamId, name: 'stream', name_key: 'stream', deactivated_users: 'hidden', created_at: T });
      // Transactions in batches of 25 (3,000 of them are 110 MB of WAL frames), the event loop
      // turning once between batches (as between requests, so the worker's reports are heard) but
      // never pausing. Whether the WAL also starts over by itself depends on the machine's load
      // (the worker's checkpoints catching up): the RESTART checkpoints are counted apart. On
      // until 4 of them ran, 360 batches at most (the WAL started over 8 to 27 times in 120
      // batches when measured).
      let batches = 0;
      for (; batches < 360 && restarted < 4; batches++) {
        await writes(storage, teamId, 25);
        await new Promise((r) => setImmediate(r));
      }
      assert.ok(restarted >= 4, `the serving connection made the WAL start over ${restarted} times in ${batches} batches`);
      // Until the next write starts it over, the reports show the WAL as large as it was: they ask
      // for no further RESTART (which would repeat the finished one on the serving thread). The
      // reports made during the writes, queued behind the one that asked for it, are heard first:
      // three in a row with the same frames were made after the last write.
      await waitFor('the reports made after the last write', () => unchanged >= 3);
      const settled = restarted;
      const seen = reported;
      await waitFor('ten more reports', () => reported >= seen + 10);
      assert.equal(restarted, settled, 'no RESTART before the WAL started over');
      // The next write starts it over, if none of the last batch did: the worker reports it
      // under the threshold again.
      await writes(storage, teamId, 1);
      await waitFor('the worker to report the WAL started over', () => frames * 4096 < threshold);
    } finally {
      await storage.close();
    }
  });

  it('a checkpointer that fails hands checkpoints back to the serving connection', async () => {
    let failure: unknown;
    const checkpointer = startCheckpointer({ path: join(dir, 'no-such-dir', 'x', 'db.sqlite'), intervalMs: 20, onLargeWal: () => false, onFailure: (error) => (failure = error) });
    await waitFor('the failure', () => failure !== undefined);
    await checkpointer.stop();
  });

  it('opening a database gathers planner statistics: externalId eq is served by its index', async () => {
    const path = join(dir, 'stats.db');
    const url = `sqlite:${path}`;
    const teamId = newId();
    const first = connect(url);
    try {
      await migrate(first);
      await insertTeam(first.db, { id: teamId, name: 's', name_key: 's', deactivated_users: 'hidden', created_at: T });
      await first.db.transaction().execute(async (trx) => {
        for (let i = 0; i < 5000; i++) {
          const userName = `u${i}@x.example`;
          await trx.insertInto('users').values({ id: newId(), team_id: teamId, user_name: userName, user_name_key: userName, external_id: `ext-${i}`, active: 1, user_type: null, display_name: null, given_name: null, family_name: null, user_name_search: userName, given_name_search: null, family_name_search: null, password_hash: null, data: '{}', version: 1, created_at: T, updated_at: T }).execute();
        }
      });
    } finally {
      await first.close();
    }
    const reopened = connect(url);
    try {
      const stats = await sql<{ idx: string }>`select idx from sqlite_stat1 where tbl = 'users'`.execute(reopened.db);
      assert.ok(stats.rows.some((r) => r.idx === 'users_team_external_id'), 'users analyzed when the database was opened');
      const plan = await sql<{ detail: string }>`explain query plan select * from users u where u.team_id = ${teamId} and u.active = 1 and u.external_id = ${'ext-7'} order by u.created_at, u.id limit 100`.execute(reopened.db);
      assert.match(plan.rows.map((r) => r.detail).join(' | '), /users_team_external_id/);
    } finally {
      await reopened.close();
    }
  });
});
