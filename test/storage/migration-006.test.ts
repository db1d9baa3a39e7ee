/**
 * Migration 006 (userName claims) on a database that already holds data, on every engine: the
 * users table keeps its rows, memberships survive the SQLite table rebuild (foreign keys are off
 * while the old table is dropped, so no cascade), every other index and the foreign keys are
 * there afterwards, and the claims are backfilled by the team's setting (hiding: the active
 * hold their names; showing: everyone).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Storage } from '../../src/storage/connect.ts';
import { migrate, migrationsFor } from '../../src/storage/migrations/index.ts';
import { teamCounts } from '../../src/storage/repos/counters.ts';
import { migrateTo, unmigratedEngines } from '../support/migrations.ts';

const T = '2026-01-01T00:00:00.000Z';

async function seed(storage: Storage): Promise<void> {
  const db = storage.db as unknown as import('kysely').Kysely<Record<string, Record<string, unknown>>>;
  await db.insertInto('teams').values([
    { id: 'TEAMHIDDEN0000000000', name: 'h', name_key: 'h', deactivated_users: 'hidden', created_at: T },
    { id: 'TEAMVISIBLE000000000', name: 'v', name_key: 'v', deactivated_users: 'visible', created_at: T },
  ]).execute();
  const user = (id: string, team: string, name: string, active: number) => ({
    id, team_id: team, user_name: name, user_name_key: name, external_id: null, active, user_type: null, display_name: null,
    given_name: null, family_name: null, password_hash: null, data: storage.hooks.toJson({ userName: name }), version: 1, created_at: T, updated_at: T,
  });
  await db.insertInto('users').values([
    user('USERHACTIVE000000000', 'TEAMHIDDEN0000000000', 'a@x', 1),
    user('USERHINACTIVE0000000', 'TEAMHIDDEN0000000000', 'b@x', 0),
    user('USERVINACTIVE0000000', 'TEAMVISIBLE000000000', 'c@x', 0),
  ]).execute();
  await db.insertInto('groups').values({
    id: 'GROUP000000000000000', team_id: 'TEAMHIDDEN0000000000', display_name: 'G', display_name_key: 'g', external_id: null, active: 1,
    data: storage.hooks.toJson({ displayName: 'G' }), version: 1, created_at: T, updated_at: T,
  }).execute();
  await db.insertInto('group_members').values([
    { team_id: 'TEAMHIDDEN0000000000', group_id: 'GROUP000000000000000', user_id: 'USERHACTIVE000000000', created_at: T },
    { team_id: 'TEAMHIDDEN0000000000', group_id: 'GROUP000000000000000', user_id: 'USERHINACTIVE0000000', created_at: T },
  ]).execute();
}

for (const engine of unmigratedEngines) {
  describe(`migration 006 on ${engine.name}`, () => {
    it('keeps rows, memberships, indexes and foreign keys; backfills claims by the team setting; enforces one holder', async () => {
      const { storage, dispose } = await engine.open();
      try {
        await migrateTo(storage, '005_sessions_keys');
        await seed(storage);
        // Every migration after 005 runs, in order (the list is the registry's, so a new migration needs no edit here).
        assert.deepEqual(await migrate(storage), Object.keys(migrationsFor(storage)).filter((name) => name > '005_sessions_keys'));
        // Migration 010 back-fills each team's counters from the rows as they are.
        for (const team of await storage.db.selectFrom('teams').select('id').execute()) {
          const users = await storage.db.selectFrom('users').select(['active', 'deleted_at']).where('team_id', '=', team.id).execute();
          const groups = await storage.db.selectFrom('groups').select('id').where('team_id', '=', team.id).execute();
          assert.deepEqual(await teamCounts(storage.db, team.id), {
            usersActive: users.filter((u) => u.deleted_at === null && u.active === 1).length,
            usersDeactivated: users.filter((u) => u.deleted_at === null && u.active !== 1).length,
            usersDeleted: users.filter((u) => u.deleted_at !== null).length,
            groups: groups.length,
          });
        }
        assert.deepEqual(await teamCounts(storage.db, 'TEAMHIDDEN0000000000'), { usersActive: 1, usersDeactivated: 1, usersDeleted: 0, groups: (await teamCounts(storage.db, 'TEAMHIDDEN0000000000')).groups });
        assert.deepEqual((await teamCounts(storage.db, 'TEAMVISIBLE000000000')).usersDeactivated, 1);
        const users = await storage.db.selectFrom('users').select(['id', 'user_name_claim', 'deleted_at']).orderBy('id').execute();
        assert.deepEqual(users, [
          { id: 'USERHACTIVE000000000', user_name_claim: 'a@x', deleted_at: null },
          { id: 'USERHINACTIVE0000000', user_name_claim: null, deleted_at: null },
          { id: 'USERVINACTIVE0000000', user_name_claim: 'c@x', deleted_at: null },
        ]);
        const members = await storage.db.selectFrom('group_members').select('user_id').orderBy('user_id').execute();
        assert.equal(members.length, 2, 'no membership lost to a cascade');
        // The released name can be held by another user (the old unique (team, user_name_key) is
        // gone: two rows share the key b@x); a second holder is refused.
        const db = storage.db as unknown as import('kysely').Kysely<Record<string, Record<string, unknown>>>;
        const row = (id: string, claim: string | null) => ({
          id, team_id: 'TEAMHIDDEN0000000000', user_name: 'b@x', user_name_key: 'b@x', user_name_claim: claim, external_id: null, active: 1, user_type: null,
          display_name: null, given_name: null, family_name: null, password_hash: null, data: '{}', version: 1, created_at: T, updated_at: T, deleted_at: null,
        });
        await db.insertInto('users').values(row('USERREHIRE0000000000', 'b@x')).execute();
        await assert.rejects(db.insertInto('users').values(row('USERREHIRE0000000001', 'b@x')).execute(), (e: unknown) => storage.hooks.isUniqueViolation(e));
        // Foreign keys still hold: a membership of an unknown user is refused.
        await assert.rejects(
          db.insertInto('group_members').values({ team_id: 'TEAMHIDDEN0000000000', group_id: 'GROUP000000000000000', user_id: 'NOSUCHUSER0000000000', created_at: T }).execute(),
        );
        // Other indexes came through the rebuild.
        const indexes =
          storage.hooks.name === 'sqlite'
            ? (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'users'`.execute(storage.db)).rows.map((r) => r.name)
            : (await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'users' and schemaname = current_schema()`.execute(storage.db)).rows.map((r) => r.name);
        for (const name of ['users_team_external_id', 'users_team_created', 'users_team_user_name_claim', 'users_team_user_name_key']) assert.ok(indexes.includes(name), `${name} in ${indexes.join(', ')}`);
      } finally {
        await dispose();
      }
    });
  });
}
