/**
 * An index in the members' list order (group, membership time, user): a group's members are
 * read in bounded chunks by keyset (repos/groups.ts memberChunk), and each chunk must be an
 * index range, not a sort of the whole group.
 */
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration004(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('group_members_group_order').on('group_members').columns(['group_id', 'created_at', 'user_id']).execute();
    },
  };
}
