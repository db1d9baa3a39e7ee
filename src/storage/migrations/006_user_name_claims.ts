/**
 * Who holds a userName (DESIGN.md section 4). `user_name_claim` carries
 * the lower-cased userName (`user_name_key`) while the user holds its name and is NULL while it
 * does not: in a team that hides deactivated users, a user holds its name while it is active; in
 * a team that shows them, while it is not deleted (`deleted_at`, set by DELETE there). The unique
 * index (team_id, user_name_claim) replaces the unique (team_id, user_name_key): NULLs never
 * collide on either engine, so released names can be taken again, and the database still refuses
 * two holders however many instances race. `user_name_key` keeps a plain index for filters.
 *
 * Sign-in looks names up through 005's `users_login_name` index and keeps only holders
 * (repos/users.ts loginCandidates), so a released name never signs in.
 *
 * SQLite cannot drop a table constraint: the users table is rebuilt (SQLite's documented
 * twelve-step procedure: foreign keys off, copy, drop, rename, indexes again, foreign key check),
 * its other indexes copied from sqlite_master, so indexes added by other migrations survive.
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { EngineName } from '../dialect.ts';

const OLD_CONSTRAINT = 'users_team_user_name_key';

async function rebuildSqliteUsersWithoutConstraint(db: Kysely<unknown>): Promise<void> {
  const table = (await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = 'users'`.execute(db)).rows[0];
  if (!table) throw new Error('migration 006: no users table');
  const withoutConstraint = table.sql.replace(/,\s*constraint\s+"users_team_user_name_key"\s+unique\s*\([^)]*\)/i, '');
  if (withoutConstraint === table.sql) throw new Error(`migration 006: constraint ${OLD_CONSTRAINT} not found in the users table`);
  const rebuilt = withoutConstraint.replace(/^CREATE TABLE\s+"users"/i, 'CREATE TABLE "users_rebuilt"');
  const indexes = (await sql<{ sql: string }>`select sql from sqlite_master where type = 'index' and tbl_name = 'users' and sql is not null`.execute(db)).rows;
  // Dropping a table with foreign keys on deletes the rows that reference it (group_members
  // cascades): they are switched off around the rebuild, which cannot happen inside a transaction.
  await sql`PRAGMA foreign_keys = OFF`.execute(db);
  try {
    await db.transaction().execute(async (trx) => {
      await sql.raw(rebuilt).execute(trx);
      await sql`insert into users_rebuilt select * from users`.execute(trx);
      await sql`drop table users`.execute(trx);
      await sql`alter table users_rebuilt rename to users`.execute(trx);
      for (const index of indexes) await sql.raw(index.sql).execute(trx);
      const broken = (await sql`PRAGMA foreign_key_check`.execute(trx)).rows;
      if (broken.length > 0) throw new Error(`migration 006: ${broken.length} rows lost their references`);
    });
  } finally {
    await sql`PRAGMA foreign_keys = ON`.execute(db);
  }
}


export function migration006(engine: EngineName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      if (engine === 'sqlite') await rebuildSqliteUsersWithoutConstraint(db);
      await db.schema.alterTable('users').addColumn('user_name_claim', 'text').execute();
      await db.schema.alterTable('users').addColumn('deleted_at', 'text').execute();
      // Existing users: nobody is deleted yet; in hiding teams only the active hold their names.
      await sql`update users set user_name_claim = user_name_key
        where active = 1 or team_id in (select id from teams where deactivated_users = 'visible')`.execute(db);
      await db.schema.createIndex('users_team_user_name_claim').on('users').columns(['team_id', 'user_name_claim']).unique().execute();
      if (engine === 'postgres') await sql`alter table users drop constraint ${sql.ref(OLD_CONSTRAINT)}`.execute(db);
      await db.schema.createIndex('users_team_user_name_key').on('users').columns(['team_id', 'user_name_key']).execute();
    },
  };
}
