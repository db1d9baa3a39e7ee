/**
 * Migration 032 (issue 30): users and groups stored before it get their accent-folded search
 * columns, ASCII rows lower-cased by the engine and the others folded by text.ts searchFold
 * (in batches past the first thousand), on both engines; the console's search finds them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { migrate } from '../../src/storage/migrations/index.ts';
import { migrateTo, unmigratedEngines } from '../support/migrations.ts';

const T = '2025-06-01T00:00:00.000Z';
const TEAM = 'TEAMLEGACY0000000000';

const user = (n: number, userName: string, given: string | null, family: string | null) => ({
  id: `USER${String(n).padStart(16, '0')}`, team_id: TEAM, user_name: userName, user_name_key: userName.toLowerCase(), user_name_claim: userName.toLowerCase(),
  external_id: null, active: 1, user_type: null, display_name: null, given_name: given, family_name: family, password_hash: null,
  data: JSON.stringify({ userName }), version: 1, created_at: T, updated_at: T, deleted_at: null,
});

for (const unmigrated of unmigratedEngines) {
  describe(`migration 032 on ${unmigrated.name}`, () => {
    it('fills the accent-folded search columns of every stored user and group', async () => {
      const { storage, dispose } = await unmigrated.open();
      try {
        await migrateTo(storage, '026_delta_query');
        const db = storage.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
        await db.insertInto('teams').values({ id: TEAM, name: 'legacy', name_key: 'legacy', deactivated_users: 'hidden', created_at: T, schema_version: 0 }).execute();
        const rows = [user(1, 'Ada@Acme.example', 'Ada', null), user(2, 'Müller@acme.example', 'José', 'Ångström'), user(3, 'kurt@acme.example', null, 'Straße')];
        // Past one batch of non-ASCII rows: the migration reads them by id, a thousand at a time.
        for (let n = 10; n < 1210; n++) rows.push(user(n, `é${n}@acme.example`, 'Zoë', null));
        for (let i = 0; i < rows.length; i += 200) {
          const chunk = rows.slice(i, i + 200);
          await db.insertInto('users').values(storage.hooks.name === 'postgres' ? chunk.map((r) => ({ ...r, data: JSON.parse(r.data) })) : chunk).execute();
        }
        const group = { id: 'GROUP000000000000001', team_id: TEAM, display_name: 'Équipe', display_name_key: 'équipe', external_id: null, active: 1, data: '{}', version: 1, created_at: T, updated_at: T };
        await db.insertInto('groups').values(storage.hooks.name === 'postgres' ? { ...group, data: {} } : group).execute();
        await migrate(storage);
        const users = await storage.db.selectFrom('users').select(['id', 'user_name_search', 'given_name_search', 'family_name_search']).orderBy('id').execute();
        assert.deepEqual(users.slice(0, 3).map((u) => [u.user_name_search, u.given_name_search, u.family_name_search]), [
          ['ada@acme.example', 'ada', null],
          ['muller@acme.example', 'jose', 'angstrom'],
          ['kurt@acme.example', null, 'strasse'],
        ]);
        const rest = users.slice(3);
        assert.equal(rest.length, 1200);
        assert.ok(rest.every((u, i) => u.user_name_search === `e${i + 10}@acme.example` && u.given_name_search === 'zoe'), 'every batch folded');
        const groups = await storage.db.selectFrom('groups').select('display_name_search').execute();
        assert.deepEqual(groups.map((g) => g.display_name_search), ['equipe']);
      } finally {
        await dispose();
      }
    });
  });
}
