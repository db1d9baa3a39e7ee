/**
 * Migration 023 (issue 31): users stored before it keep their `roles` and `entitlements`, and
 * their grants rows are filled from the documents (deduplicated, `type` '' when absent, primary
 * kept; malformed elements and deleted users skipped), on both engines. The catalog tables start
 * empty and teams default to Okta's schemas.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { migrate } from '../../src/storage/migrations/index.ts';
import { migrateTo, unmigratedEngines } from '../support/migrations.ts';

const T = '2025-06-01T00:00:00.000Z';
const TEAM = 'TEAMLEGACY0000000000';

const user = (id: string, data: Record<string, unknown>, deleted = false) => ({
  id, team_id: TEAM, user_name: id.toLowerCase(), user_name_key: id.toLowerCase(), user_name_claim: deleted ? null : id.toLowerCase(),
  external_id: null, active: 1, user_type: null, display_name: null, given_name: null, family_name: null, password_hash: null,
  data: JSON.stringify({ userName: id.toLowerCase(), ...data }), version: 1, created_at: T, updated_at: T, deleted_at: deleted ? T : null,
});

for (const unmigrated of unmigratedEngines) {
  describe(`migration 023 on ${unmigrated.name}`, () => {
    it('fills user_grants from the stored roles and entitlements', async () => {
      const { storage, dispose } = await unmigrated.open();
      try {
        await migrateTo(storage, '022_webhook_subscriptions');
        const db = storage.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
        await db.insertInto('teams').values({ id: TEAM, name: 'legacy', name_key: 'legacy', deactivated_users: 'hidden', created_at: T, schema_version: 0 }).execute();
        const rows = [
          user('USERA000000000000000', {
            roles: [{ value: 'admin', primary: true }, { value: 'admin', primary: false }, { value: 'viewer', type: 'WindowsAzureActiveDirectoryRole' }, { display: 'no value' }, 'junk', { value: 7 }],
            entitlements: [{ value: 'e5', type: 'License' }],
          }),
          user('USERB000000000000000', { roles: 'not an array', entitlements: [{ value: 'e5', type: 'License', primary: true }] }),
          user('USERC000000000000000', { roles: [{ value: 'admin' }] }, true),
          user('USERD000000000000000', {}),
        ];
        for (const row of rows) await db.insertInto('users').values(storage.hooks.name === 'postgres' ? { ...row, data: JSON.parse(row.data) } : row).execute();
        await migrate(storage);
        const grants = await storage.db.selectFrom('user_grants').selectAll().orderBy('user_id').orderBy('kind').orderBy('value').orderBy('type').execute();
        assert.deepEqual(grants.map((g) => [g.user_id.slice(0, 5), g.kind, g.value, g.type, Number(g.is_primary)]), [
          ['USERA', 'entitlement', 'e5', 'License', 0],
          ['USERA', 'role', 'admin', '', 1],
          ['USERA', 'role', 'viewer', 'WindowsAzureActiveDirectoryRole', 0],
          ['USERB', 'entitlement', 'e5', 'License', 1],
        ]);
        assert.equal(grants.every((g) => g.team_id === TEAM), true);
        const team = await storage.db.selectFrom('teams').select('catalog_schemas').where('id', '=', TEAM).executeTakeFirstOrThrow();
        assert.equal(team.catalog_schemas, 'okta');
        assert.equal((await storage.db.selectFrom('catalog_entries').selectAll().execute()).length, 0);
      } finally {
        await dispose();
      }
    });
  });
}
