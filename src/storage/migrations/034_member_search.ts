/**
 * A group's member search at any size (issue 30, item 10): each membership row carries its
 * user's accent-folded userName (`group_members.user_name_search`, as `users.user_name_search`
 * of migration 032), indexed after the group, `(group_id, user_name_search, user_id)` under
 * COLLATE "C" on PostgreSQL (code-point order, as the users' index). A member search is then one
 * range of that index: its matches in userName order, however many members the group has and
 * however many users of the team share the prefix outside it.
 *
 * The copy is kept where it can change: a membership is written with its user's folded userName
 * (repos/groups.ts), and a user's rename rewrites its memberships' copies in the rename's
 * transaction (scim/users.ts, repos/groups.ts `renameMemberships`).
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { EngineName } from '../dialect.ts';

export function migration034(engine: EngineName): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('group_members').addColumn('user_name_search', 'text', (c) => c.notNull().defaultTo('')).execute();
      if (engine === 'postgres') {
        await sql`update group_members m set user_name_search = u.user_name_search from users u where u.id = m.user_id`.execute(db);
        await sql`create index group_members_search on group_members (group_id, user_name_search collate "C", user_id)`.execute(db);
      } else {
        await sql`update group_members set user_name_search = (select u.user_name_search from users u where u.id = group_members.user_id)`.execute(db);
        await sql`create index group_members_search on group_members (group_id, user_name_search, user_id)`.execute(db);
      }
      if (engine === 'sqlite') await sql`PRAGMA analysis_limit = 400`.execute(db);
      await sql`analyze group_members`.execute(db);
    },
  };
}
