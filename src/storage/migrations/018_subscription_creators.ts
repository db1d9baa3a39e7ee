/**
 * Who created each event subscription: `creator_token`, the SHA-256 of the
 * access token whose bearer created it (an administrator's OAuth token), and `creator_user`, the
 * user behind it (that token's, or the console admin's). Revoking that token, its grant, or the
 * user's credentials pauses the subscription (repos/subscription-creators.ts). Both NULL: made
 * by the operator at the command line (or before this migration), never paused for this.
 */
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration018(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('event_subscriptions').addColumn('creator_token', 'varchar(64)').execute();
      await db.schema.alterTable('event_subscriptions').addColumn('creator_user', 'varchar(40)').execute();
      await db.schema.createIndex('event_subscriptions_creator_token').on('event_subscriptions').column('creator_token').execute();
      await db.schema.createIndex('event_subscriptions_creator_user').on('event_subscriptions').column('creator_user').execute();
    },
  };
}
