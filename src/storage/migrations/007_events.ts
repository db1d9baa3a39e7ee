/**
 * RFC 9967 events (DESIGN.md section 8): the change feed and its subscriptions.
 *
 * - `event_counters`: one row per team holding the last sequence number handed out. Every change
 *   bumps it (`insert ... on conflict do update ... returning`) in its own transaction, so on
 *   PostgreSQL the row lock orders concurrent writers and a rolled-back write gives its number
 *   back: `seq` is strictly increasing and gap-free in commit order. SQLite has one writer.
 *   (Since migration 013 PostgreSQL bumps it at COMMIT and SQLite numbers from the newest event:
 *   repos/events.ts.)
 * - `events`: the feed, one row per change, keyed (team_id, seq); `data` and `members` hold what
 *   the `:full` renderings need (the stored document, which never holds a password, and the
 *   membership delta). Pruned by age (`at`) in small batches.
 * - `event_subscriptions`: push (RFC 8935) and poll (RFC 8936) receivers of a team, each with its
 *   own cursor (the last seq delivered or acknowledged), retry state and a lease (owner, expiry)
 *   that lets exactly one instance deliver at a time.
 * - `event_attempts`: every push attempt (time, status, latency, error), pruned by age.
 */
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration007(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('event_counters')
        .addColumn('team_id', 'varchar(20)', (c) => c.primaryKey())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('events')
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('type', 'varchar(16)', (c) => c.notNull())
        .addColumn('resource_type', 'varchar(16)', (c) => c.notNull())
        .addColumn('resource_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('version', 'integer', (c) => c.notNull())
        .addColumn('changed', 'text', (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('txn', 'text')
        .addColumn('external_id', 'text')
        .addColumn('data', 'text')
        .addColumn('members', 'text')
        .addPrimaryKeyConstraint('events_pk', ['team_id', 'seq'])
        .execute();
      await db.schema.createIndex('events_at').on('events').column('at').execute();

      await db.schema
        .createTable('event_subscriptions')
        .addColumn('id', 'varchar(20)', (c) => c.primaryKey())
        .addColumn('team_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('method', 'varchar(8)', (c) => c.notNull())
        .addColumn('url', 'text')
        .addColumn('events', 'text')
        .addColumn('full', 'integer', (c) => c.notNull())
        .addColumn('state', 'varchar(8)', (c) => c.notNull())
        .addColumn('paused_reason', 'text')
        .addColumn('cursor', 'bigint', (c) => c.notNull())
        .addColumn('failures', 'integer', (c) => c.notNull())
        .addColumn('failing_since', 'text')
        .addColumn('next_attempt_at', 'text', (c) => c.notNull())
        .addColumn('lease_owner', 'varchar(40)')
        .addColumn('lease_until', 'text')
        .addColumn('secret_hash', 'varchar(64)')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('event_subscriptions_team').on('event_subscriptions').column('team_id').execute();

      await db.schema
        .createTable('event_attempts')
        .addColumn('id', 'varchar(20)', (c) => c.primaryKey())
        .addColumn('subscription_id', 'varchar(20)', (c) => c.notNull())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('status', 'integer')
        .addColumn('latency_ms', 'integer', (c) => c.notNull())
        .addColumn('error', 'text')
        .execute();
      await db.schema.createIndex('event_attempts_subscription').on('event_attempts').columns(['subscription_id', 'at']).execute();
      await db.schema.createIndex('event_attempts_at').on('event_attempts').column('at').execute();
    },
  };
}
