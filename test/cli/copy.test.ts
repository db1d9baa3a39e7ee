/**
 * Issue 12, item 5: `rollcall copy` moves a Rollcall database to another engine: every table
 * (teams, users, groups, memberships, clients, token hashes, provisioning tokens, audit rows,
 * the request log), in batches, with counts and checksums verified, into an empty target only.
 * Tested SQLite -> PostgreSQL (a token issued on SQLite works against a server on PostgreSQL)
 * and back, at a few thousand rows.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { contextFor, createClient, createTeam, createTeamUser, issueToken, requireTeam } from '../../src/admin.ts';
import { systemClock } from '../../src/clock.ts';
import { CLI_ACTOR } from '../../src/audit/events.ts';
import { eventsAfter, lastSeq } from '../../src/storage/repos/events.ts';
import { createGroup } from '../../src/scim/groups.ts';
import { addSchema } from '../../src/scim/team-schemas.ts';
import { indexNames } from '../../src/storage/dialect.ts';
import { connect } from '../../src/storage/connect.ts';
import { migrate } from '../../src/storage/migrations/index.ts';
import { insertUser } from '../../src/storage/repos/users.ts';
import { addCounts } from '../../src/storage/repos/counters.ts';
import { userRowOf } from '../../src/scim/users.ts';
import { newId } from '../../src/ids.ts';
import { createPgSchema, postgresUrl } from '../support/engines.ts';
import { rollcall, scim, startServer } from '../support/processes.ts';

const USERS = 3000;

describe('rollcall copy', { skip: postgresUrl ? false : 'needs TEST_DATABASE_URL (PostgreSQL)' }, () => {
  let dir: string;
  const drops: (() => Promise<void>)[] = [];
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollcall-copy-'));
  });
  after(async () => {
    for (const drop of drops) await drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('copies SQLite to an empty PostgreSQL and back, verified; refuses a non-empty target', async () => {
    const source = `sqlite:${join(dir, 'source.db')}`;
    const storage = connect(source);
    let token: string;
    try {
      await migrate(storage);
      const deps = { storage, clock: systemClock, baseUrl: 'http://127.0.0.1' };
      await createTeam(deps, 'acme');
      await createTeam(deps, 'другая команда');
      await createTeamUser(deps, 'acme', 'admin@acme.example', { password: 'correct horse battery', admin: true });
      const team = await requireTeam(deps, 'acme');
      const ctx = await contextFor(deps, team);
      // Bulk users straight into the table (the services would take minutes; their rows are the same shape).
      const ids: string[] = [];
      await storage.db.transaction().execute(async (trx) => {
        for (let i = 0; i < USERS; i++) {
          const id = newId();
          ids.push(id);
          const now = new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i)).toISOString();
          const row = userRowOf(storage.hooks, { id, team_id: team.id, created_at: now }, { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: `user${i}@acme.example`, name: { givenName: `Zoë ${i}`, familyName: '<b>"O\'Brien"</b>' }, active: i % 7 !== 0 }, null, 1, now);
          await insertUser(trx, { ...row, user_name_claim: i % 7 !== 0 ? row.user_name_key : null });
          // And their counts, as the services add them in the same transaction.
          await addCounts(trx, team.id, i % 7 !== 0 ? { usersActive: 1 } : { usersDeactivated: 1 }, now);
        }
      });
      await createGroup(ctx, { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Everyone 😀', members: ids.slice(0, 1500).map((value) => ({ value })) });
      await createGroup(ctx, { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Few', members: ids.slice(0, 3).map((value) => ({ value })) });
      await createClient(deps, { name: 'Okta', redirectUris: [], team: 'acme' });
      // An extension attribute with an expression index (uniqueness: server): the target gets the index too.
      await addSchema({ storage, clock: systemClock, baseUrl: 'https://rollcall.test' }, team, { resourceType: 'User', schema: { id: 'urn:acme:copy:2.0:User', attributes: [{ name: 'badge', type: 'string', uniqueness: 'server' }] } }, { actor: CLI_ACTOR });
      token = (await issueToken(deps, 'acme', 'admin@acme.example', { scope: ['read'], ttlSeconds: 3600, name: 'Entra' })).token;
    } finally {
      await storage.close();
    }

    const pg = await createPgSchema(postgresUrl!);
    drops.push(() => pg.drop());
    const copied = rollcall(['copy', '--from', source, '--to', pg.url, '--batch-size', '500', '--json']);
    assert.equal(copied.code, 0, copied.stderr);
    const result = JSON.parse(copied.stdout) as { tables: { table: string; rows: number; checksum: string }[]; notCopied: string[] };
    const rows = Object.fromEntries(result.tables.map((t) => [t.table, t.rows]));
    assert.equal(rows.users, USERS + 1);
    assert.equal(rows.teams, 2);
    assert.equal(rows.group_members, 1503);
    assert.equal(rows.groups, 2);
    assert.equal(rows.oauth_clients, 1);
    assert.equal(rows.provisioning_tokens, 1);
    assert.ok(rows.audit_events! >= 4);
    assert.deepEqual(result.notCopied, ['sessions', 'keys']);
    const target = connect(pg.url);
    try {
      assert.equal((await indexNames(target.db, 'postgres', 'users')).filter((n) => n.startsWith('rc_x_users_')).length, 1, 'the extension index is built on the target');
    } finally {
      await target.close();
    }

    // The copied token hash works against a server on PostgreSQL.
    const server = await startServer(pg.url);
    try {
      const list = await scim(server.url, token, 'GET', '/Users?count=1');
      assert.equal(list.status, 200);
      assert.equal(list.body?.totalResults, USERS + 1 - Math.ceil(USERS / 7));
      const group = await scim(server.url, token, 'GET', '/Groups?filter=displayName%20eq%20%22Few%22');
      // user0 is deactivated, and a hiding team leaves it out of members.
      assert.equal(((group.body?.Resources as { members: unknown[] }[])[0]?.members ?? []).length, 2);
    } finally {
      await server.stop();
    }

    const again = rollcall(['copy', '--from', source, '--to', pg.url]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /the target is not empty: table \w+ holds \d+ rows/);

    // And back: PostgreSQL to a new SQLite file, the same checksums.
    const back = rollcall(['copy', '--from', pg.url, '--to', `sqlite:${join(dir, 'back.db')}`, '--json']);
    assert.equal(back.code, 0, back.stderr);
    const backTables = (JSON.parse(back.stdout) as { tables: { table: string; rows: number; checksum: string }[] }).tables;
    // The server above wrote request-log rows and last-used times on PostgreSQL; every other
    // table is as copied.
    for (const t of result.tables.filter((x) => !['request_log', 'provisioning_tokens', 'audit_events'].includes(x.table))) {
      assert.deepEqual(backTables.find((b) => b.table === t.table), t, t.table);
    }

    // The feed numbers on after the copied events on PostgreSQL (the counter copied from SQLite
    // only keeps pruned feeds' ends), and a copy from PostgreSQL numbers the events nobody has
    // read yet (numbered by their readers there) before it copies them.
    const onPg = connect(pg.url);
    try {
      const deps = { storage: onPg, clock: systemClock, baseUrl: 'http://127.0.0.1' };
      const team = await requireTeam(deps, 'acme');
      const copiedEnd = await lastSeq(onPg.db, team.id);
      assert.ok(copiedEnd >= 3, `the copied feed ends at ${copiedEnd}`);
      await createGroup(await contextFor(deps, team), { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'After the copy' });
      const unread = rollcall(['copy', '--from', pg.url, '--to', `sqlite:${join(dir, 'unread.db')}`, '--json']);
      assert.equal(unread.code, 0, unread.stderr);
      const expected = Array.from({ length: copiedEnd + 1 }, (_, i) => i + 1);
      const onSqlite = connect(`sqlite:${join(dir, 'unread.db')}`);
      try {
        assert.deepEqual((await eventsAfter(onSqlite.db, team.id, 0, 1000)).map((e) => e.seq), expected);
        assert.equal(await lastSeq(onSqlite.db, team.id), copiedEnd + 1);
      } finally {
        await onSqlite.close();
      }
      assert.deepEqual((await eventsAfter(onPg.db, team.id, 0, 1000)).map((e) => e.seq), expected);
    } finally {
      await onPg.close();
    }
  });
});
