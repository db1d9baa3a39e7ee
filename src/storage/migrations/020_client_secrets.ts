/**
 * Several secrets per OAuth client (DESIGN.md section 11): `oauth_client_secrets` holds each
 * secret as its SHA-256 with a name, an expiry, its last use and its revocation, so a customer
 * can add a new secret, move its identity provider over, then revoke the old one without a
 * moment in which neither works. Each client's one secret of before becomes a row named
 * "initial" that expires two years after this migration, so nothing that works today stops.
 * `oauth_clients.secret_hash` is dropped (SQLite has ALTER TABLE DROP COLUMN since 3.35; the
 * column is in no index): one place holds secrets, and no code can read a stale copy.
 *
 * `oauth_clients.token_lifetime` (seconds, NULL: the server's ACCESS_TOKEN_TTL) is the lifetime
 * of every access token the client obtains. `oauth_tokens.secret_id` names the secret that
 * authenticated the request that issued the token (NULL when the client authenticated
 * otherwise, and for tokens issued before), so revoking a secret revokes exactly its tokens;
 * that revocation finds them through the existing index on `oauth_tokens.client_id`.
 */
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import { newId } from '../../ids.ts';

/** The expiry given to the secrets that exist when the migration runs. */
const INITIAL_SECRET_DAYS = 730;

export function migration020(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('oauth_client_secrets')
        .addColumn('id', 'varchar(20)', (c) => c.primaryKey())
        .addColumn('client_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('secret_hash', 'varchar(64)', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text')
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('oauth_client_secrets_client').on('oauth_client_secrets').column('client_id').execute();

      const typed = db as unknown as Kysely<{ oauth_clients: { id: string; secret_hash: string }; oauth_client_secrets: Record<string, string | null> }>;
      const now = new Date();
      const expires = new Date(now.getTime() + INITIAL_SECRET_DAYS * 86_400_000).toISOString();
      const existing = await typed.selectFrom('oauth_clients').select(['id', 'secret_hash']).execute();
      await db.schema.alterTable('oauth_tokens').addColumn('secret_id', 'varchar(20)').execute();
      const tokens = db as unknown as Kysely<{ oauth_tokens: { client_id: string | null; secret_id: string | null } }>;
      for (const client of existing) {
        const id = newId();
        await typed
          .insertInto('oauth_client_secrets')
          .values({ id, client_id: client.id, name: 'initial', secret_hash: client.secret_hash, created_at: now.toISOString(), expires_at: expires, last_used_at: null, revoked_at: null })
          .execute();
        // Every token the client holds was obtained with that one secret: revoking it revokes them.
        await tokens.updateTable('oauth_tokens').set({ secret_id: id }).where('client_id', '=', client.id).execute();
      }
      await db.schema.alterTable('oauth_clients').dropColumn('secret_hash').execute();
      await db.schema.alterTable('oauth_clients').addColumn('token_lifetime', 'integer').execute();
    },
  };
}
