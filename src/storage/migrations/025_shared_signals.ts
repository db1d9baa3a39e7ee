/**
 * Shared Signals (issue 33, DESIGN.md section 14): an SSF 1.0 stream is an event subscription of
 * `format` `ssf`, delivered by the same push and poll machinery as every other subscription.
 *
 * - `event_subscriptions.ssf`: a stream's configuration as JSON text (events/stream-config.ts
 *   `StreamConfig`: its audience, the events the receiver asked for and those delivered, its SSF
 *   status and reason, its description, the receiver's authorization header sealed at rest);
 *   NULL for every other subscription. The subscription's own `state` follows the status
 *   (`active` when enabled).
 * - `ssf_subjects`: the subjects a stream's receiver added or removed (SSF 1.0 section 8.1.3),
 *   resolved to the team's users: `included` 1 (added) or 0 (removed) overrides the stream's
 *   default (every subject of the team). Deleted with the stream.
 *
 * The Shared Signals themselves are feed rows (`events`) of type `ssf` (events/feed.ts
 * `appendSignal`), written in the SCIM write's transaction, so they take the team's seq like any
 * event and need no table of their own.
 */
import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

export function migration025(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('event_subscriptions').addColumn('ssf', 'text').execute();
      await db.schema
        .createTable('ssf_subjects')
        .addColumn('subscription_id', 'varchar(40)', (c) => c.notNull())
        .addColumn('team_id', 'varchar(40)', (c) => c.notNull())
        .addColumn('user_id', 'varchar(40)', (c) => c.notNull())
        .addColumn('included', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('ssf_subjects_pk', ['subscription_id', 'user_id'])
        .execute();
    },
  };
}
