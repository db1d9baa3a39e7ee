/**
 * The authorization server's tables (DESIGN.md sections 3 and 5): OAuth clients (service-wide,
 * optionally bound to one team for client_credentials), authorization codes (hashed, single
 * use), server settings (the cookie-signing secret shared by every instance), and the rule that
 * a userName signs in for one team only: a unique index over the login keys of users that
 * have a password.
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration002(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('oauth_clients')
        .addColumn('id', 'varchar(20)', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('secret_hash', 'varchar(64)', (c) => c.notNull())
        .addColumn('redirect_uris', 'text', (c) => c.notNull())
        .addColumn('team_id', 'varchar(20)', (c) => c.references('teams.id'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('oauth_codes')
        .addColumn('hash', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('family_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('client_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('user_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull().references('teams.id'))
        .addColumn('redirect_uri', 'text', (c) => c.notNull())
        .addColumn('redirect_uri_given', 'integer', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('code_challenge', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('consumed_at', 'text')
        .execute();

      await db.schema
        .createTable('settings')
        .addColumn('name', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createIndex('users_login_key')
        .on('users')
        .column('user_name_key')
        .unique()
        .where(sql.ref('password_hash'), 'is not', null)
        .execute();
      await db.schema.createIndex('oauth_tokens_client').on('oauth_tokens').column('client_id').execute();
    },
  };
}
