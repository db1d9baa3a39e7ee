/**
 * Teams, users, groups, memberships and access tokens (DESIGN.md section 3). Written once with
 * Kysely's schema builder; the only engine difference is the type of the `data` document.
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { EngineName } from '../dialect.ts';

export function migration001(engine: EngineName): Migration {
  const jsonType = engine === 'postgres' ? sql`jsonb` : sql`text`;
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('teams')
        .addColumn('id', 'varchar(20)', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('name_key', 'text', (c) => c.notNull().unique())
        .addColumn('deactivated_users', 'text', (c) => c.notNull().defaultTo('hidden'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('users')
        .addColumn('id', 'varchar(20)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull().references('teams.id'))
        .addColumn('user_name', 'text', (c) => c.notNull())
        .addColumn('user_name_key', 'text', (c) => c.notNull())
        .addColumn('external_id', 'text')
        .addColumn('active', 'integer', (c) => c.notNull())
        .addColumn('user_type', 'text')
        .addColumn('display_name', 'text')
        .addColumn('given_name', 'text')
        .addColumn('family_name', 'text')
        .addColumn('password_hash', 'text')
        .addColumn('data', jsonType, (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('users_team_user_name_key', ['team_id', 'user_name_key'])
        .execute();
      await db.schema.createIndex('users_team_external_id').on('users').columns(['team_id', 'external_id']).execute();
      await db.schema.createIndex('users_team_created').on('users').columns(['team_id', 'created_at', 'id']).execute();

      await db.schema
        .createTable('groups')
        .addColumn('id', 'varchar(20)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull().references('teams.id'))
        .addColumn('display_name', 'text', (c) => c.notNull())
        .addColumn('display_name_key', 'text', (c) => c.notNull())
        .addColumn('external_id', 'text')
        .addColumn('active', 'integer', (c) => c.notNull())
        .addColumn('data', jsonType, (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('groups_team_display_name_key', ['team_id', 'display_name_key'])
        .execute();
      await db.schema.createIndex('groups_team_external_id').on('groups').columns(['team_id', 'external_id']).execute();
      await db.schema.createIndex('groups_team_created').on('groups').columns(['team_id', 'created_at', 'id']).execute();

      await db.schema
        .createTable('group_members')
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('group_id', 'varchar(20)', (c) => c.notNull().references('groups.id').onDelete('cascade'))
        .addColumn('user_id', 'varchar(20)', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('group_members_pk', ['group_id', 'user_id'])
        .execute();
      await db.schema.createIndex('group_members_user').on('group_members').column('user_id').execute();

      await db.schema
        .createTable('oauth_tokens')
        .addColumn('hash', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('family_id', 'text')
        .addColumn('client_id', 'text')
        .addColumn('user_id', 'varchar(20)')
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull().references('teams.id'))
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('oauth_tokens_user').on('oauth_tokens').column('user_id').execute();
      await db.schema.createIndex('oauth_tokens_family').on('oauth_tokens').column('family_id').execute();
    },
  };
}
