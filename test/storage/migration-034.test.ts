/**
 * Migration 034 (issue 30): membership rows stored before it get their member's accent-folded
 * userName (the member search's index), on both engines.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { migrate } from '../../src/storage/migrations/index.ts';
import { migrateTo, unmigratedEngines } from '../support/migrations.ts';

const T = '2025-06-01T00:00:00.000Z';
const TEAM = 'TEAMLEGACY0000000000';
const GROUP = 'GROUP000000000000001';

const user = (n: number, userName: string, folded: string) => ({
  id: `USER${String(n).padStart(16, '0')}`, team_id: TEAM, user_name: userName, user_name_key: userName.toLowerCase(), user_name_claim: userName.toLowerCase(),
  user_name_search: folded, external_id: null, active: 1, user_type: null, display_name: null, given_name: null, family_name: null, password_hash: null,
  data: JSON.stringify({ userName }), version: 1, created_at: T, updated_at: T, deleted_at: null,
});

for (const unmigrated of unmigratedEngines) {
  describe(`migration 034 on ${unmigrated.name}`, () => {
    it("copies each member's folded userName onto its membership rows", async () => {
      const { storage, dispose } = await unmigrated.open();
      try {
        await migrateTo(storage, '033_console_indexes');
        const db = storage.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
        const pg = storage.hooks.name === 'postgres';
        await db.insertInto('teams').values({ id: TEAM, name: 'legacy', name_key: 'legacy', deactivated_users: 'hidden', created_at: T, schema_version: 0 }).execute();
        const users = [user(1, 'Müller@acme.example', 'muller@acme.example'), user(2, 'Ada@Acme.example', 'ada@acme.example'), user(3, 'out@acme.example', 'out@acme.example')];
        await db.insertInto('users').values(pg ? users.map((r) => ({ ...r, data: JSON.parse(r.data) })) : users).execute();
        const group = { id: GROUP, team_id: TEAM, display_name: 'Équipe', display_name_key: 'équipe', display_name_search: 'equipe', external_id: null, active: 1, data: '{}', version: 1, created_at: T, updated_at: T };
        await db.insertInto('groups').values(pg ? { ...group, data: {} } : group).execute();
        await db.insertInto('group_members').values(users.slice(0, 2).map((u) => ({ team_id: TEAM, group_id: GROUP, user_id: u.id, created_at: T }))).execute();
        await migrate(storage);
        const rows = await storage.db.selectFrom('group_members').select(['user_id', 'user_name_search']).orderBy('user_id').execute();
        assert.deepEqual(rows, [
          { user_id: users[0]!.id, user_name_search: 'muller@acme.example' },
          { user_id: users[1]!.id, user_name_search: 'ada@acme.example' },
        ]);
      } finally {
        await dispose();
      }
    });
  });
}
