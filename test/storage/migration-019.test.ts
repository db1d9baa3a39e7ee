/**
 * Migration 019 (issue 27 item 3) and the server's start: a database where a team registered an
 * extension whose URN holds `"` before registration refused it. The migration retires that
 * extension (removed, audited, the team's schema version moved) and leaves every other extension
 * alone; the start makes the expression indexes those of the stored extensions, so the index
 * that read the hostile URN is gone and another team's index stays. On SQLite that index named
 * another path and failed on every other team's write carrying the enterprise extension: a
 * server started on such a file answers those writes again.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { buildExtensionIndexes } from '../../src/scim/index-builder.ts';
import { connect } from '../../src/storage/connect.ts';
import type { Storage } from '../../src/storage/connect.ts';
import { indexNames } from '../../src/storage/dialect.ts';
import { migrate } from '../../src/storage/migrations/index.ts';
import type { Database } from '../../src/storage/types.ts';
import { scim, seedTeamToken, startServer } from '../support/processes.ts';
import { migrateTo, unmigratedEngines } from '../support/migrations.ts';

const T = '2026-01-01T00:00:00.000Z';
const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const HOSTILE = `${ENTERPRISE}"x`;
const GOOD = 'urn:good:params:scim:schemas:extension:Codes:1.0:User';
const HOSTILE_TEAM = 'TEAMHOSTILE000000000';
const GOOD_TEAM = 'TEAMGOOD000000000000';
const LEGACY = 'rc_x_users_legacy_hostile';

const extension = (team: string, id: string) => ({
  team_id: team,
  schema_id: id,
  schema_key: id.toLowerCase(),
  resource_type: 'User' as const,
  required: 0,
  definition: JSON.stringify({ id, attributes: [{ name: id === GOOD ? 'code' : 'badge', type: 'string', uniqueness: 'server' }] }),
  declared: JSON.stringify({ [id === GOOD ? 'code' : 'badge']: 'string' }),
  created_at: T,
  updated_at: T,
  removed_at: null,
});

/**
 * What an older Rollcall left: two teams, each with an extension (the first with the hostile
 * URN), and the index the older dialect compiled for the hostile URN's attribute (SQLite: the
 * quote doubled, which SQLite's JSON path does not read).
 */
async function olderDatabase(storage: Storage): Promise<void> {
  await migrateTo(storage, '015_feed_numbered_by_readers');
  const db = storage.db as unknown as Kysely<Database>;
  for (const [id, name] of [[HOSTILE_TEAM, 'hostile'], [GOOD_TEAM, 'good']] as const) {
    await db.insertInto('teams').values({ id, name, name_key: name, deactivated_users: 'hidden', created_at: T, schema_version: 1 }).execute();
  }
  await db.insertInto('schema_extensions').values([extension(HOSTILE_TEAM, HOSTILE), extension(GOOD_TEAM, GOOD)]).execute();
  const legacy =
    storage.hooks.name === 'sqlite'
      ? sql.raw(`rc_lower(json_extract("data", '$."${HOSTILE.replace(/"/g, '""')}"."badge"'))`)
      : sql.raw(`lower(("data" #>> '{"${HOSTILE.replace(/"/g, '\\"')}","badge"}'::text[]) collate "und-x-icu")`);
  await sql`create index ${sql.id(LEGACY)} on users (team_id, ${legacy})`.execute(storage.db);
}

const extensionIndexes = async (storage: Storage): Promise<string[]> => (await indexNames(storage.db, storage.hooks.name, 'users')).filter((n) => n.startsWith('rc_x_')).sort();

for (const engine of unmigratedEngines) {
  describe(`migration 019 on ${engine.name}`, () => {
    it('retires the extension whose URN holds ", audits it, moves its schema version; the start drops its index and keeps the others', async () => {
      const { storage, dispose } = await engine.open();
      try {
        await olderDatabase(storage);
        await migrate(storage);
        const db = storage.db as unknown as Kysely<Database>;
        const rows = await db.selectFrom('schema_extensions').select(['team_id', 'schema_id', 'removed_at']).orderBy('team_id').execute();
        assert.deepEqual(rows.map((r) => [r.schema_id, r.removed_at !== null]), [[GOOD, false], [HOSTILE, true]]);
        const versions = await db.selectFrom('teams').select(['id', 'schema_version']).orderBy('id').execute();
        assert.deepEqual(versions.map((v) => [v.id, Number(v.schema_version)]), [[GOOD_TEAM, 1], [HOSTILE_TEAM, 2]]);
        const audit = await db.selectFrom('audit_events').select(['team_id', 'action', 'detail']).execute();
        assert.equal(audit.length, 1);
        assert.equal(audit[0]!.team_id, HOSTILE_TEAM);
        assert.equal(audit[0]!.action, 'schema_removed');
        assert.equal(JSON.parse(audit[0]!.detail).schema, HOSTILE);

        assert.deepEqual(await extensionIndexes(storage), [LEGACY]);
        await buildExtensionIndexes(storage);
        const kept = await extensionIndexes(storage);
        assert.equal(kept.length, 1, 'the good team keeps the index of its code attribute');
        assert.ok(!kept.includes(LEGACY), 'the index reading the hostile URN is dropped');
      } finally {
        await dispose();
      }
    });
  });
}

describe('a server started on an SQLite file an attack left behind', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rollcall-urn-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("answers other teams' writes carrying the enterprise extension (201, not 500)", async () => {
    const database = `sqlite:${join(dir, 'attacked.db')}`;
    const prepared = connect(database);
    try {
      await olderDatabase(prepared);
    } finally {
      await prepared.close();
    }
    const token = await seedTeamToken(database);
    const server = await startServer(database);
    try {
      const user = { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User', ENTERPRISE], userName: 'bea', [ENTERPRISE]: { employeeNumber: '42' } };
      const created = await scim(server.url, token, 'POST', '/Users', user);
      assert.equal(created.status, 201, JSON.stringify(created.body));
    } finally {
      assert.equal(await server.stop(), 0);
    }
    const after = connect(database);
    try {
      assert.ok(!(await extensionIndexes(after)).includes(LEGACY));
    } finally {
      await after.close();
    }
  });
});
