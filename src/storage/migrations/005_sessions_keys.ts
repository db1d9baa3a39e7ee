/**
 * Server-side browser sessions, per-team sign-in names and the key
 * store.
 *
 * - `sessions`: one row per signed-in browser, found by the SHA-256 of the random id its cookie
 *   carries (never the id itself), bound to the user and to a digest of the password hash it was
 *   opened with; deleting the row ends the session on every instance at once.
 * - `users_login_key` (002) made a userName with a password unique across teams, so a team could
 *   learn of, and block, another's names; it is replaced by a plain (non-unique) index over the
 *   same rows, which sign-in searches. Uniqueness per team is the (team_id, user_name_key) index
 *   of 001, unchanged.
 * - `keys`: secrets Rollcall generates (the cookie-signing key now; signing keys of the events
 *   later), encrypted with AES-256-GCM under a key derived from the instance secret, with a
 *   rotation window (`not_after`).
 * - The plain-text `cookie_secret` and `cursor_secret` settings are dropped: cookies are signed
 *   with a `keys` key now (sessions signed with the old secret are gone anyway: they were not
 *   server-side), and list cursors with a key derived from the master key (a cursor handed out
 *   before the upgrade is refused as invalidCursor; a client starts its listing again).
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration005(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('sessions')
        .addColumn('id_hash', 'varchar(64)', (c) => c.primaryKey())
        .addColumn('kind', 'varchar(32)', (c) => c.notNull())
        .addColumn('user_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('credential', 'varchar(64)', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();
      await db.schema.createIndex('sessions_expires').on('sessions').column('expires_at').execute();

      await db.schema.dropIndex('users_login_key').execute();
      await db.schema
        .createIndex('users_login_name')
        .on('users')
        .columns(['user_name_key', 'created_at'])
        .where(sql.ref('password_hash'), 'is not', null)
        .execute();

      await db.schema
        .createTable('keys')
        .addColumn('id', 'varchar(20)', (c) => c.primaryKey())
        .addColumn('purpose', 'varchar(32)', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('not_after', 'text')
        .addColumn('material', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('keys_purpose').on('keys').columns(['purpose', 'created_at']).execute();

      await sql`delete from settings where name in (${'cookie_secret'}, ${'cursor_secret'})`.execute(db);
    },
  };
}
