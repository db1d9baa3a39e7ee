/**
 * A poll (RFC 8936, events/poll.ts) finds its subscription by the digest of
 * the `rce_` token it presents (`subscriptionBySecret`), before anything else is known about
 * the caller. Without an index that lookup read every subscription of every team, so an
 * anonymous poll cost as much as the whole table. The index is unique: a digest names at most
 * one subscription (push subscriptions have none, and NULLs never collide).
 */
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration017(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('event_subscriptions_secret').on('event_subscriptions').column('secret_hash').unique().execute();
    },
  };
}
