/**
 * Plain signed webhooks (issue 34 item 3): a subscription's `format`, `set` (RFC 8935 SETs, what
 * every subscription made before this migration keeps) or `webhook` (Standard Webhooks JSON
 * signed with HMAC-SHA256), and a webhook subscription's signing secrets, sealed at rest under
 * the instance's master key (keys/sealed.ts): `webhook_secret`, the current one, and
 * `webhook_previous_secret`, the one a rotation replaced, which keeps signing beside it until
 * `webhook_previous_until`. All three NULL for `set` subscriptions.
 */
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration022(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('event_subscriptions').addColumn('format', 'varchar(10)', (c) => c.notNull().defaultTo('set')).execute();
      await db.schema.alterTable('event_subscriptions').addColumn('webhook_secret', 'text').execute();
      await db.schema.alterTable('event_subscriptions').addColumn('webhook_previous_secret', 'text').execute();
      await db.schema.alterTable('event_subscriptions').addColumn('webhook_previous_until', 'text').execute();
    },
  };
}
