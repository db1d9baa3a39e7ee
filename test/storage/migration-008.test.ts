/**
 * Migration 008 (issue 12): access tokens issued by the CLI before it (no client) get a
 * provisioning-token row each, so they can be listed and revoked by id like new ones; tokens of
 * OAuth clients do not.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { revokeToken, tokens } from '../../src/admin.ts';
import { systemClock } from '../../src/clock.ts';
import { sha256 } from '../../src/ids.ts';
import { verifyAccessToken } from '../../src/oauth/tokens.ts';
import { migrate } from '../../src/storage/migrations/index.ts';
import { migrateTo, unmigratedEngines } from '../support/migrations.ts';

const T = '2026-01-01T00:00:00.000Z';
const FUTURE = '2099-01-01T00:00:00.000Z';

for (const engine of unmigratedEngines) {
  describe(`migration 008 on ${engine.name}`, () => {
    it('gives CLI tokens issued before it an id, so they are listed and revoked', async () => {
      const { storage, dispose } = await engine.open();
      try {
        await migrateTo(storage, '006_user_name_claims');
        const db = storage.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
        await db.insertInto('teams').values({ id: 'TEAM0000000000000000', name: 'acme', name_key: 'acme', deactivated_users: 'hidden', created_at: T }).execute();
        await db.insertInto('users').values({
          id: 'USER0000000000000000', team_id: 'TEAM0000000000000000', user_name: 'a@x', user_name_key: 'a@x', user_name_claim: 'a@x', deleted_at: null, external_id: null, active: 1, user_type: null,
          display_name: null, given_name: null, family_name: null, password_hash: null, data: storage.hooks.toJson({ userName: 'a@x' }), version: 1, created_at: T, updated_at: T,
        }).execute();
        await db.insertInto('oauth_clients').values({ id: 'CLIENT00000000000000', name: 'c', secret_hash: 'x', redirect_uris: '[]', team_id: null, created_at: T, updated_at: T }).execute();
        const token = (name: string, client: string | null) => ({
          hash: sha256(name), kind: 'access', family_id: null, client_id: client, user_id: 'USER0000000000000000', team_id: 'TEAM0000000000000000', scope: 'read write', created_at: T, expires_at: FUTURE, revoked_at: null,
        });
        await db.insertInto('oauth_tokens').values([token('rc_at_cli', null), token('rc_at_oauth', 'CLIENT00000000000000')]).execute();
        await migrate(storage);

        const deps = { storage, clock: systemClock, baseUrl: 'http://x' };
        const listed = await tokens(deps, 'acme');
        assert.equal(listed.length, 1, 'only the token without a client');
        assert.equal(listed[0]!.name, 'issued before names');
        assert.equal(listed[0]!.id, sha256('rc_at_cli').slice(0, 20).toUpperCase());
        assert.ok(await verifyAccessToken(storage.db, systemClock, 'rc_at_cli'));
        await revokeToken(deps, 'acme', listed[0]!.id);
        assert.equal(await verifyAccessToken(storage.db, systemClock, 'rc_at_cli'), undefined);
      } finally {
        await dispose();
      }
    });
  });
}
