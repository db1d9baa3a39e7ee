/**
 * Migration 027 (issue 30, item 1): today's provisioning tokens become connections' tokens
 * without breaking a live one. A provisioning user's tokens (the guides' route) become one
 * connection named after the user; a live token an admin issued in the console becomes a
 * connection of its own; an admin's CLI token stays the admin's. A token issued before the
 * migration keeps working, now acting for its connection, and no longer ends with a person.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { tokens } from '../../src/admin.ts';
import { connections } from '../../src/admin-connections.ts';
import { systemClock } from '../../src/clock.ts';
import { sha256 } from '../../src/ids.ts';
import { verifyAccessToken } from '../../src/oauth/tokens.ts';
import { migrate } from '../../src/storage/migrations/index.ts';
import { revokeTokensOfUser } from '../../src/storage/repos/tokens.ts';
import { migrateTo, unmigratedEngines } from '../support/migrations.ts';

const T = '2026-01-01T00:00:00.000Z';
const FUTURE = '2099-01-01T00:00:00.000Z';
const TEAM = 'TEAM0000000000000000';

for (const engine of unmigratedEngines) {
  describe(`migration 027 on ${engine.name}`, () => {
    it("turns provisioning users' tokens and console tokens into connections; every live token keeps working", async () => {
      const { storage, dispose } = await engine.open();
      try {
        await migrateTo(storage, '026_delta_query');
        const db = storage.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
        await db.insertInto('teams').values({ id: TEAM, name: 'acme', name_key: 'acme', deactivated_users: 'hidden', created_at: T }).execute();
        const user = (id: string, userName: string, admin: boolean) => ({
          id, team_id: TEAM, user_name: userName, user_name_key: userName, user_name_claim: userName, deleted_at: null, external_id: null, active: 1, user_type: admin ? 'admin' : null,
          display_name: null, given_name: null, family_name: null, password_hash: admin ? 'hash' : null, data: storage.hooks.toJson({ userName }), version: 1, created_at: T, updated_at: T,
        });
        await db.insertInto('users').values([user('PROVISIONING00000000', 'entra-provisioning@acme.example', false), user('ADMIN000000000000000', 'admin@acme.example', true)]).execute();
        const token = (secret: string, userId: string) => ({
          hash: sha256(secret), kind: 'access', family_id: null, client_id: null, user_id: userId, team_id: TEAM, scope: 'read write', created_at: T, expires_at: FUTURE, revoked_at: null, secret_id: null,
        });
        const named = (id: string, secret: string, name: string, userId: string, issuedBy: string) => ({
          id, team_id: TEAM, token_hash: sha256(secret), name, user_id: userId, issued_by: issuedBy, created_at: T, expires_at: FUTURE, last_used_at: null,
        });
        await db.insertInto('oauth_tokens').values([token('rc_at_entra1', 'PROVISIONING00000000'), token('rc_at_entra2', 'PROVISIONING00000000'), token('rc_at_console', 'ADMIN000000000000000'), token('rc_at_script', 'ADMIN000000000000000')]).execute();
        await db.insertInto('provisioning_tokens').values([
          named('P1', 'rc_at_entra1', 'CLI token for entra-provisioning@acme.example', 'PROVISIONING00000000', 'cli'),
          named('P2', 'rc_at_entra2', 'second', 'PROVISIONING00000000', 'cli'),
          named('P3', 'rc_at_console', 'Okta production', 'ADMIN000000000000000', 'console:ADMIN000000000000000'),
          named('P4', 'rc_at_script', 'my script', 'ADMIN000000000000000', 'cli'),
        ]).execute();
        await migrate(storage);

        const deps = { storage, clock: systemClock, baseUrl: 'http://x' };
        assert.deepEqual((await connections(deps, 'acme')).map((c) => [c.name, c.liveTokens]), [['entra-provisioning@acme.example', 2], ['Okta production', 1]]);
        const owners = Object.fromEntries((await tokens(deps, 'acme')).map((t) => [t.name, t.connectionName ?? `user ${t.userName}`]));
        assert.deepEqual(owners, {
          'CLI token for entra-provisioning@acme.example': 'entra-provisioning@acme.example',
          second: 'entra-provisioning@acme.example',
          'Okta production': 'Okta production',
          'my script': 'user admin@acme.example',
        });
        for (const secret of ['rc_at_entra1', 'rc_at_entra2', 'rc_at_console']) {
          const bearer = await verifyAccessToken(storage.db, systemClock, secret);
          assert.ok(bearer?.connectionId, `${secret} works on, as its connection's`);
          assert.equal(bearer.userId, null);
        }
        // The admin leaves: only the admin's own script token ends.
        await revokeTokensOfUser(storage.db, 'ADMIN000000000000000', new Date().toISOString());
        assert.ok(await verifyAccessToken(storage.db, systemClock, 'rc_at_console'));
        assert.equal(await verifyAccessToken(storage.db, systemClock, 'rc_at_script'), undefined);
      } finally {
        await dispose();
      }
    });

    it('makes no connection of a user whose tokens are all revoked or expired (they stay dead); a cut name is trimmed', async () => {
      const { storage, dispose } = await engine.open();
      try {
        await migrateTo(storage, '026_delta_query');
        const db = storage.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
        await db.insertInto('teams').values({ id: TEAM, name: 'acme', name_key: 'acme', deactivated_users: 'hidden', created_at: T }).execute();
        // A name whose cut (92 characters) ends in a space.
        const long = `${'x'.repeat(91)} tail of a long provisioning user name`;
        const user = (id: string, userName: string) => ({
          id, team_id: TEAM, user_name: userName, user_name_key: userName, user_name_claim: userName, deleted_at: null, external_id: null, active: 1, user_type: null,
          display_name: null, given_name: null, family_name: null, password_hash: null, data: storage.hooks.toJson({ userName }), version: 1, created_at: T, updated_at: T,
        });
        await db.insertInto('users').values([user('OLDPROVISIONING00000', 'old-provisioning@acme.example'), user('LONGNAME000000000000', long)]).execute();
        const token = (secret: string, userId: string, dead: 'revoked' | 'expired' | null) => ({
          hash: sha256(secret), kind: 'access', family_id: null, client_id: null, user_id: userId, team_id: TEAM, scope: 'read write', created_at: T,
          expires_at: dead === 'expired' ? T : FUTURE, revoked_at: dead === 'revoked' ? T : null, secret_id: null,
        });
        const named = (id: string, secret: string, userId: string, dead: 'expired' | null) => ({
          id, team_id: TEAM, token_hash: sha256(secret), name: id, user_id: userId, issued_by: 'cli', created_at: T, expires_at: dead === 'expired' ? T : FUTURE, last_used_at: null,
        });
        await db.insertInto('oauth_tokens').values([token('rc_at_revoked', 'OLDPROVISIONING00000', 'revoked'), token('rc_at_expired', 'OLDPROVISIONING00000', 'expired'), token('rc_at_long', 'LONGNAME000000000000', null)]).execute();
        await db.insertInto('provisioning_tokens').values([named('P1', 'rc_at_revoked', 'OLDPROVISIONING00000', null), named('P2', 'rc_at_expired', 'OLDPROVISIONING00000', 'expired'), named('P3', 'rc_at_long', 'LONGNAME000000000000', null)]).execute();
        await migrate(storage);

        const made = await db.selectFrom('connections').select(['name', 'name_key']).execute();
        assert.deepEqual(made.map((c) => c.name), ['x'.repeat(91)], 'only the user with a live token has a connection');
        for (const c of made) assert.equal(c.name_key, String(c.name).trim().toLowerCase());
        const dead = await db.selectFrom('provisioning_tokens').select(['id', 'user_id', 'connection_id']).where('id', 'in', ['P1', 'P2']).orderBy('id').execute();
        assert.deepEqual(dead, [{ id: 'P1', user_id: 'OLDPROVISIONING00000', connection_id: null }, { id: 'P2', user_id: 'OLDPROVISIONING00000', connection_id: null }], 'dead tokens stay as they were');
        for (const secret of ['rc_at_revoked', 'rc_at_expired']) assert.equal(await verifyAccessToken(storage.db, systemClock, secret), undefined, `${secret} stays dead`);
        assert.ok((await verifyAccessToken(storage.db, systemClock, 'rc_at_long'))?.connectionId);
      } finally {
        await dispose();
      }
    });
  });
}
