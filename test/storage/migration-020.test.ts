/**
 * Migration 020 (issue 29 item 1): a database where each client held one secret in
 * `oauth_clients.secret_hash`. After the migration the secret is a row of
 * `oauth_client_secrets` named "initial" that expires two years later, the old column is gone,
 * and the client still gets tokens with the very secret it had, which work on the SCIM API; its
 * tokens have the server's default lifetime (no `token_lifetime` yet). On both engines.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import { sha256 } from '../../src/ids.ts';
import { migrate } from '../../src/storage/migrations/index.ts';
import { createTestApp, json } from '../support/app.ts';
import type { TestEngine } from '../support/engines.ts';
import { migrateTo, unmigratedEngines } from '../support/migrations.ts';
import { postForm, scimStatus } from '../support/oauth.ts';

const T = '2025-06-01T00:00:00.000Z';
const TEAM = 'TEAMLEGACY0000000000';
const CLIENT = 'CLIENTLEGACY00000000';
const SECRET = 'rc_cs_the-secret-an-older-rollcall-printed-once-0000';

for (const unmigrated of unmigratedEngines) {
  describe(`migration 020 on ${unmigrated.name}`, () => {
    it("turns each client's secret into a live secret named initial; the client keeps authenticating with it", async () => {
      const engine: TestEngine = {
        name: unmigrated.name,
        async open() {
          const { storage, dispose } = await unmigrated.open();
          await migrateTo(storage, '019_path_safe_schema_urns');
          const db = storage.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
          await db.insertInto('teams').values({ id: TEAM, name: 'legacy', name_key: 'legacy', deactivated_users: 'hidden', created_at: T, schema_version: 1 }).execute();
          await db.insertInto('oauth_clients').values({ id: CLIENT, name: 'Old sync', secret_hash: sha256(SECRET), redirect_uris: '[]', team_id: TEAM, created_at: T, updated_at: T }).execute();
          // A token the client obtained before the migration: it belongs to the secret it was obtained with.
          await db.insertInto('oauth_tokens').values({ hash: sha256('rc_at_before-020'), kind: 'access', family_id: 'FAMILYBEFORE02000000', client_id: CLIENT, user_id: null, team_id: TEAM, scope: 'read write', created_at: T, expires_at: '2999-01-01T00:00:00.000Z', revoked_at: null }).execute();
          await migrate(storage);
          return { storage, url: '', dispose };
        },
      };
      const t = await createTestApp({ engine });
      try {
        const started = t.clock.now().getTime();
        const secrets = await t.storage.db.selectFrom('oauth_client_secrets').selectAll().where('client_id', '=', CLIENT).execute();
        assert.equal(secrets.length, 1);
        assert.equal(secrets[0]!.name, 'initial');
        assert.equal(secrets[0]!.secret_hash, sha256(SECRET));
        assert.equal(secrets[0]!.revoked_at, null);
        const days = (Date.parse(secrets[0]!.expires_at) - Date.parse(secrets[0]!.created_at)) / 86_400_000;
        assert.equal(days, 730);
        assert.ok(Date.parse(secrets[0]!.expires_at) > started);
        const client = await t.storage.db.selectFrom('oauth_clients').selectAll().where('id', '=', CLIENT).executeTakeFirstOrThrow();
        assert.equal('secret_hash' in client, false, 'the old column is dropped');
        assert.equal(client.token_lifetime, null);

        const res = await postForm(t, '/oauth/token', { grant_type: 'client_credentials' }, { client: { id: CLIENT, secret: SECRET } });
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(json(res).expires_in, 3600);
        assert.equal(await scimStatus(t, String(json(res).access_token)), 200);
        const tokens = await t.storage.db.selectFrom('oauth_tokens').select(['hash', 'secret_id']).where('client_id', '=', CLIENT).execute();
        assert.equal(tokens.length, 2);
        for (const token of tokens) assert.equal(token.secret_id, secrets[0]!.id, 'the token obtained before the migration too');
      } finally {
        await t.close();
      }
    });
  });
}
