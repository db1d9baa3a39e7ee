/**
 * Paging and the console's overview: per-team counters, and an index that pages.
 *
 * - `team_counters`: per team, its users by state (active; deactivated and not deleted; deleted,
 *   the rows a showing team's DELETE keeps for the audit trail) and its groups: level 0 (bucket
 *   '') for the whole team, and the users again by the hour (level 1) and by the second (level
 *   2) of their creation time (the bucket is that prefix of `created_at`). Every SCIM write that
 *   changes a count adds its delta in its own transaction (repos/counters.ts, one statement
 *   beside the feed's), so every row always equals `count(*)` of what it counts: the unfiltered
 *   list's totalResults and the console's overview read level 0 instead of counting every row
 *   of the team, and an index page deep in the list finds the second its
 *   first row was created in by summing levels 1 and 2 (repos/list/offset-by-buckets.ts). Back-filled here.
 * - `users_team_created` is rebuilt as (team_id, created_at, id, active, deleted_at): the same
 *   order, now covering what decides whether a user is listed, so an index page walks its offset
 *   in the index alone (repos/list/offset-by-index.ts), never in the table.
 * - `users_member_view` (id, deleted_at, active, user_name): what a group's member list reads of
 *   each member (repos/groups.ts memberRows), so the 100,000 lookups of a big group's GET stay in
 *   one index instead of the primary key's index and then the table.
 * - `group_members_group_order` rebuilt as (group_id, created_at, user_id, team_id): the members'
 *   order, now also holding the team every member query is scoped by, so a chunk of members is
 *   read from the index alone (no table row per membership).
 */
import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration010(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('team_counters')
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('level', 'integer', (c) => c.notNull())
        .addColumn('bucket', 'varchar(24)', (c) => c.notNull())
        .addColumn('users_active', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('users_deactivated', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('users_deleted', 'bigint', (c) => c.notNull().defaultTo(0))
        .addColumn('groups', 'bigint', (c) => c.notNull().defaultTo(0))
        .addPrimaryKeyConstraint('team_counters_pk', ['team_id', 'level', 'bucket'])
        .execute();
      await sql`insert into team_counters (team_id, level, bucket, users_active, users_deactivated, users_deleted, groups)
        select t.id, 0, '',
          (select count(*) from users u where u.team_id = t.id and u.deleted_at is null and u.active = 1),
          (select count(*) from users u where u.team_id = t.id and u.deleted_at is null and u.active <> 1),
          (select count(*) from users u where u.team_id = t.id and u.deleted_at is not null),
          (select count(*) from groups g where g.team_id = t.id)
        from teams t`.execute(db);
      for (const [level, length] of [[1, 13], [2, 19]] as const) {
        await sql`insert into team_counters (team_id, level, bucket, users_active, users_deactivated, users_deleted, groups)
          select team_id, ${sql.lit(level)}, substr(created_at, 1, ${sql.lit(length)}),
            sum(case when deleted_at is null and active = 1 then 1 else 0 end),
            sum(case when deleted_at is null and active <> 1 then 1 else 0 end),
            sum(case when deleted_at is not null then 1 else 0 end),
            0
          from users group by team_id, substr(created_at, 1, ${sql.lit(length)})`.execute(db);
      }
      await db.schema.dropIndex('users_team_created').execute();
      await db.schema.createIndex('users_team_created').on('users').columns(['team_id', 'created_at', 'id', 'active', 'deleted_at']).execute();
      await db.schema.createIndex('users_member_view').on('users').columns(['id', 'deleted_at', 'active', 'user_name']).execute();
      await db.schema.dropIndex('group_members_group_order').execute();
      await db.schema.createIndex('group_members_group_order').on('group_members').columns(['group_id', 'created_at', 'user_id', 'team_id']).execute();
    },
  };
}
