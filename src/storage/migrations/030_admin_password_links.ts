/**
 * One-time password links for a team's admins (issue 30, item 3): an admin of the team (or the
 * console, when it adds an admin) makes a link that lets one admin set a new password once.
 * `admin_password_links` holds each link's SHA-256 only (never the link), whom it is for, who
 * made it, when it expires and when it was used; a link is used by one conditional UPDATE
 * (`used_at` still null, `expires_at` still ahead), so it works once. `users_team_admins`
 * indexes the userType as the console's admin list reads it (`lower(user_type)`), so listing a
 * team's admins reads its admins only, however many users the team has.
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration030(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('admin_password_links')
        .addColumn('id', 'varchar(20)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('user_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('token_hash', 'varchar(64)', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('used_at', 'text')
        .addColumn('created_by', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('admin_password_links_user').on('admin_password_links').columns(['team_id', 'user_id']).execute();
      await sql`create index users_team_admins on users (team_id, lower(user_type))`.execute(db);
    },
  };
}
