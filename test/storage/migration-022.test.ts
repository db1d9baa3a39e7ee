/**
 * Migration 022 (issue 34 item 3): a subscription made before it keeps sending SETs (`format`
 * `set`, no webhook secret) and is delivered as before; after it, a webhook subscription can be
 * made beside it. On both engines.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { migrate } from '../../src/storage/migrations/index.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestEngine } from '../support/engines.ts';
import { migrateTo, unmigratedEngines } from '../support/migrations.ts';

const T = '2025-06-01T00:00:00.000Z';
const TEAM = 'TEAMLEGACY0000000000';
const SUB = 'SUBLEGACY00000000000';

for (const unmigrated of unmigratedEngines) {
  describe(`migration 022 on ${unmigrated.name}`, () => {
    it('existing subscriptions become format set with no secret; a webhook subscription can be made afterwards', async () => {
      const engine: TestEngine = {
        name: unmigrated.name,
        async open() {
          const { storage, dispose } = await unmigrated.open();
          await migrateTo(storage, '021_client_assertions');
          const db = storage.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
          await db.insertInto('teams').values({ id: TEAM, name: 'legacy', name_key: 'legacy', deactivated_users: 'hidden', created_at: T, schema_version: 1 }).execute();
          await db
            .insertInto('event_subscriptions')
            .values({ id: SUB, team_id: TEAM, method: 'push', url: 'https://old.example/events', events: null, full: 0, state: 'active', paused_reason: null, cursor: 0, failures: 0, failing_since: null, next_attempt_at: T, lease_owner: null, lease_until: null, secret_hash: null, created_at: T, updated_at: T, creator_token: null, creator_user: null })
            .execute();
          await migrate(storage);
          return { storage, url: '', dispose };
        },
      };
      const t = await createTestApp({ engine });
      try {
        const row = await t.storage.db.selectFrom('event_subscriptions').selectAll().where('id', '=', SUB).executeTakeFirstOrThrow();
        assert.equal(row.format, 'set');
        assert.equal(row.webhook_secret, null);
        assert.equal(row.webhook_previous_secret, null);
        assert.equal(row.webhook_previous_until, null);
        const token = await t.tokenFor(TEAM, ['read', 'write']);
        const shown = await t.app.inject({ method: 'GET', url: `/v2/events/subscriptions/${SUB}`, headers: { authorization: `Bearer ${token}` } });
        assert.equal(shown.statusCode, 200, shown.body);
        assert.equal(json(shown).format, 'set');
        const made = await t.app.inject({ method: 'POST', url: '/v2/events/subscriptions', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify({ url: 'https://new.example/hooks', format: 'webhook' }) });
        assert.equal(made.statusCode, 201, made.body);
        assert.match(String(json(made).secret), /^whsec_/);
      } finally {
        await t.close();
      }
    });
  });
}
